// Package client is the protocol side of anymcp: one Conn to one MCP server,
// whatever transport carries it.
//
// A Conn owns the request/response engine (ids, per-call contexts and
// timeouts, notifications/cancelled, progress), the lifecycle (initialize,
// version check, capabilities declared from the handlers the host set), the
// typed methods for every server feature of MCP 2025-11-25, and the answers
// to server→client requests (ping, roots, sampling, elicitation).
//
// Dial connects to a URL or starts a command; Open runs the protocol over
// any jsonrpc.Transport, including one the host wrote.
//
//	conn, err := client.Dial(ctx, client.URL("http://127.0.0.1:8080/mcp"))
//	if err != nil { ... }
//	defer conn.Close()
//	res, err := conn.CallTool(ctx, "echo", map[string]any{"text": "hi"})
//
// Memory stays bounded whatever the server sends: every queue between the
// connection and the host's handlers has a count and a byte bound. When
// the Conn falls behind, its transport stops reading the connection, so
// that TCP flow control (or a full stdout pipe) slows the server down;
// only notifications waiting for slow handlers are ever dropped, counted
// by Conn.DroppedNotifications (see OnLog for the handlers' bounds). A flood of log records of
// 60 KiB with a 1 ms handler keeps the client under 70 MiB, on every
// transport (TestFloodMemory). One message is bounded by the size limit of
// an SSE event or a stdout line (64 MiB by default), and each stage of the
// pipeline may hold one: a server that sends messages of tens of MiB can
// take the client to a few hundred MiB.
package client
