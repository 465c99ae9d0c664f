// Package client is the protocol side of anymcp: one Conn to one MCP server,
// whatever era and transport carry it.
//
// Dial connects to a URL or starts a command, finds out what the server
// speaks (package negotiate), and returns a Conn; Open does the same over
// any jsonrpc.Transport, including one the host wrote.
//
//	conn, err := client.Dial(ctx, client.URL("http://127.0.0.1:8080/mcp"))
//	// or client.Dial(ctx, client.Command("npx", "-y", "@modelcontextprotocol/server-everything"))
//	if err != nil { ... }
//	defer conn.Close()
//	res, err := conn.CallTool(ctx, "echo", map[string]any{"text": "hi"})
//	if errors.Is(err, jsonrpc.ErrOutcomeUnknown) { ... } // the tool may have run
//
// A Conn owns the request engine (ids, per-call contexts and timeouts,
// cancellation, progress), the lifecycle, the typed methods for every
// server feature, and the host's answers to what the server asks (roots,
// sampling, elicitation: WithRoots, WithSampling, WithElicitation). It
// speaks both protocol eras behind one API: the rules that differ, from
// initialize and sessions (2024-11-05 to 2025-11-25) to per-request _meta
// and input_required results (2026-07-28), are one value the Conn consults
// (dialect.go), chosen once the era is known. Conn.Info tells what was
// negotiated and how.
//
// A call gets its result or a typed error that says whether it may have
// run; it is never sent twice unless it is safe to repeat. Lost streams,
// expired sessions, throttling and dead stdio servers cost a delay, as the
// reconnect policy allows (WithReconnectPolicy). Every queue between the
// connection and the host's handlers is bounded. The handlers run on the
// Conn's goroutines, never on its read loop; one that panics is logged and
// the Conn goes on.
//
// In the repository: docs/outcomes.md (did it run), docs/resilience.md
// (what the Conn does when something fails), docs/negotiation.md (the eras),
// docs/tasks.md (calls that become tasks).
package client
