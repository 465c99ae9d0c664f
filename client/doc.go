// Package client is the protocol side of anymcp: one Conn to one MCP server,
// whatever era and transport carry it.
//
// A Conn owns the request/response engine (ids, per-call contexts and
// timeouts, cancellation, progress), the lifecycle, the typed methods for
// every server feature, and the host's answers to what the server asks of
// the client (roots, sampling, elicitation). It speaks both protocol eras
// behind one API: for a modern server (2026-07-28) every request carries
// its revision, client info and capabilities in _meta (and, over HTTP, the
// request metadata headers), input the server needs comes back as
// input_required results that the Conn answers with the host's handlers and
// sends again, change notifications come on a subscriptions/listen stream,
// and a lost answer of a request safe to repeat is sent again; for a legacy
// server (2024-11-05 to 2025-11-25) the Conn runs initialize, keeps and
// renews the session, answers server requests with the same handlers, and
// subscribes with resources/subscribe. Every such rule is one value the Conn
// consults (dialect.go), chosen once the era is known.
//
// Dial connects to a URL or starts a command; Open runs the protocol over
// any jsonrpc.Transport, including one the host wrote. Both find the era as
// package negotiate says, and Conn.Info tells what was found and how.
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
//
// The host's handlers run on the Conn's goroutines, never on its read loop.
// A handler that panics — on params from the server it did not expect,
// say — is logged with its stack and, for a server's request, answered as
// an internal error; the Conn goes on. A handler that blocks holds up the
// handlers after it, not the Conn, and Shutdown does not wait for it past
// its context.
package client
