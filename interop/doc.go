// Package interop runs anymcp's client against MCP servers that other
// people wrote, of every protocol era, over real loopback sockets and real
// processes; it holds only tests, and is its own Go module so that the
// library's go.mod does not carry the peers' dependencies.
//
// The servers (each started fresh, on 127.0.0.1 and port 0):
//
//   - the official go-sdk (github.com/modelcontextprotocol/go-sdk): a
//     2026-07-28-only stateless server, a 2025 stateful Streamable HTTP
//     server, its defaults (stateless and stateful), its HTTP+SSE handler
//     (2024-11-05), and over stdio (this test binary started again:
//     2026-07-28 only, both eras, 2025 only, and two that answer only after
//     1.5 s, longer than the stdio probe waits);
//   - mcp-go (github.com/mark3labs/mcp-go): a Streamable HTTP server that
//     serves 2026-07-28 and the 2025 revisions on one endpoint, and its
//     HTTP+SSE server;
//   - @modelcontextprotocol/server-everything from npm (version pinned in
//     package-lock.json, installed by `npm ci`) in its stdio, sse and
//     streamableHttp modes. It listens on every interface and has no option
//     for the address, so loopback.mjs, loaded with `node --import`, makes
//     its listen bind 127.0.0.1 and print the port the kernel chose.
//
// The Go servers each offer three tools: echo, progress (one progress
// notification a step), and slow (one progress notification, then it waits
// for its cancellation and records it; over stdio the test asks the
// process, with a fourth tool, whether it saw it).
//
// Against each server TestInterop dials with the default options and
// checks, each step asserted: the era, transport and revision negotiated;
// tools/list; a tools/call; a call with progress (every notification, in
// order, before the answer); a call cancelled in flight (the caller gets
// the cancellation at once, the server saw it where it can tell, and the
// connection still works); and Close (no process left behind; no
// goroutine, checked by goleak). run.sh installs the npm server and runs
// it with -results, which writes RESULTS.md and the table between the
// interop markers of the repository's docs/interop.md.
//
// The Gateway tests put package gateway in front of a fleet of one
// upstream of each era and transport, and drive it with go-sdk's client
// (Streamable HTTP and stdio), the TypeScript SDK's (gateway_client.mjs)
// and mcp-go's (/sse): tools, prompts, resources, elicitation, list
// changes, approvals and a view. RESULTS.md's gateway section records
// them; run.sh keeps it when it rewrites the file.
package interop
