// Package legacy is the client side of the HTTP+SSE transport of MCP
// revision 2024-11-05, which later revisions replaced with Streamable HTTP
// (package modern) but which many servers still speak.
//
// In HTTP+SSE the client opens one long-lived GET request to the server's
// SSE URL. The first event on that stream, of type "endpoint", carries the
// URI to which the client POSTs every message it sends; the server accepts
// each POST with a 2xx status (usually 202) and sends everything it has for
// the client (responses, requests and notifications) as "message" events on
// the GET stream. The stream is the session: the endpoint URI usually names
// it (e.g. /messages?sessionId=…), and when the stream ends the session is
// over.
//
// [Dial] opens the stream and waits for the endpoint event. The endpoint is
// resolved against the SSE URL (after redirects) and must be on the same
// origin (scheme, host and port) as the SSE URL the host gave: otherwise
// Dial refuses it with a [*CrossOriginError], so that headers such as
// Authorization are never sent elsewhere. The resulting [Transport]
// implements jsonrpc.Transport: Send POSTs, Recv returns the messages of the
// stream in the order they arrived, through an unbounded queue, so that the
// stream reader never waits for the host (which is expected to call Recv in
// a dedicated loop).
//
// What this transport does not do: it does not resume or reopen a stream
// (2024-11-05 has no resumption, and a new stream is a new session that must
// be initialized again); when the stream ends, Recv and Send report an error
// wrapping [ErrConnectionLost] and the protocol layer decides what to do.
// It sends no batches of its own and no session headers; the endpoint URI
// is all the session state there is.
package legacy
