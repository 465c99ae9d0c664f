// Package servehttp is the server side of MCP over HTTP that the bridge
// and the test servers share: one set of rules for what a server reads
// and writes, so that the two cannot drift apart.
//
// It holds:
//   - the request metadata rules of revision 2026-07-28 (MCP-Protocol-Version,
//     Mcp-Method, Mcp-Name, Mcp-Param-{Name}): reading header values and
//     their Base64 sentinel, the x-mcp-header annotations of a tool's
//     inputSchema, and the check of Mcp-Param headers against a call's
//     arguments;
//   - the SSE writer: the one place that writes id:, event:, data: and
//     retry: lines;
//   - the event log of a resumable stream (revisions 2025-03-26 to
//     2025-11-25): event ids, replay after a Last-Event-ID, bounds;
//   - the session table: ids from crypto/rand, a bound on live sessions,
//     idle expiry.
//
// The client's header builder (internal/reqmeta) is kept apart on purpose:
// the test servers check what the client sends with code the client does
// not share, so a misreading of the specification shows up as a failing
// test instead of agreeing with itself. Both are tested against the same
// table (testdata/header_values.json), taken from the specification.
package servehttp
