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
package client
