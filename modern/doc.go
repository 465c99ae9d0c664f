// Package modern is the client side of the Streamable HTTP transport of MCP,
// protocol revisions 2025-03-26, 2025-06-18 and 2025-11-25.
//
// Every message the client sends is an HTTP POST to one endpoint. The server
// answers a request with either one JSON body (a message or a batch) or an
// SSE stream that carries the response, possibly preceded by server requests
// and notifications; notifications and responses are answered with 202.
// After the client sends notifications/initialized, the transport opens the
// optional standalone GET stream on which the server may send requests and
// notifications at any time; that Send returns once the server has answered
// the GET (stream open or refused, waiting 2 s at most), so whatever the
// server sends after the handshake has a way to the client.
//
// The transport keeps the session: the Mcp-Session-Id header of the HTTP
// response to initialize, and the protocolVersion of the initialize result,
// are sent as Mcp-Session-Id and MCP-Protocol-Version on every later request
// and on the DELETE that ends the session at Close.
//
// Conditions the protocol layer must act on are reported as the wrapped
// sentinel errors of package jsonrpc: a 404 on a request that carried a
// session id is jsonrpc.ErrSessionExpired (the transport then forgets the
// session, so the next initialize starts a new one), a stream that ended
// before the response is jsonrpc.ErrOutcomeUnknown, and every other status
// the transport cannot use is a *jsonrpc.HTTPError.
//
// Messages from the server are queued for Recv in the order they arrived on
// each stream. The queue is unbounded, so that no stream reader ever waits
// for the host: the host is expected to call Recv in a dedicated loop.
// Resuming a broken stream with Last-Event-ID is not done yet.
package modern
