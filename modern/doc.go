// Package modern is the client side of MCP's Streamable HTTP transport,
// revisions 2025-03-26 to 2026-07-28, in both protocol eras.
//
// Every message the client sends is a POST to one endpoint; the server
// answers with one JSON body or an SSE stream. In the initialize era
// (2025-03-26 to 2025-11-25) the transport keeps the session (Mcp-Session-Id,
// MCP-Protocol-Version), opens the standalone GET stream after
// notifications/initialized and sends a DELETE at Close. In the stateless era
// (2026-07-28) there is no session: each POST carries the request metadata
// headers the protocol layer passes in on the request's context, and a call
// is cancelled by closing its response stream.
//
// Most hosts never use this package directly: client.Dial picks it for a
// URL. To run the protocol over one built by hand:
//
//	t, err := modern.New("https://example.com/mcp", modern.Options{})
//	if err != nil { ... }
//	conn, err := client.Open(ctx, t)
//
// The transport does the recovery only it can do, timed by
// Options.Reconnect: it resumes a broken answer stream with Last-Event-ID,
// reopens the GET stream, and waits out 429 and 503 with Retry-After. It
// never sends a request twice when the server may have run it: such a
// failure matches jsonrpc.ErrOutcomeUnknown. A lost session is
// jsonrpc.ErrSessionExpired, for the protocol layer to re-initialize.
// Every request goes through the library's redirect policy: nothing is sent
// to another origin than the endpoint's.
//
// Messages from the server wait for Recv in a bounded queue; when it is
// full the stream readers stop reading and TCP pushes back on the server.
// Call Recv in a loop of its own that never waits for a Send.
//
// Each rule, status by status and stream by stream, is in docs/transports.md
// in the repository; what the Conn does on top, in docs/resilience.md.
package modern
