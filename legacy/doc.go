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
// Authorization are never sent elsewhere. Redirects are held to the same
// rule: the GET and every POST go through the library's redirect policy,
// which refuses a redirect to another origin (or one that would turn a POST
// into a GET) with a *jsonrpc.RedirectError before anything is sent there. The resulting [Transport]
// implements jsonrpc.Transport: Send POSTs, Recv returns the messages of the
// stream in the order they arrived, through a bounded queue
// (wire.MaxQueued messages, wire.MaxQueuedBytes bytes; one bigger message
// passes alone). When it is full the stream reader stops reading, and TCP
// flow control pushes back on the server; nothing is dropped. The host is
// expected to call Recv in a dedicated loop that never waits for a Send.
//
// When the stream drops after Dial (the server ends it, or it breaks),
// the transport reconnects by itself, as Options.Reconnect says (nil:
// reconnect.DefaultPolicy()): Recv returns a *jsonrpc.SessionLostError after
// the messages the lost stream delivered; a POST in flight is cancelled
// and its Send fails with an error matching jsonrpc.ErrOutcomeUnknown; the
// transport waits (the server's retry: field first, then the policy's
// backoff with jitter), GETs the SSE URL again and takes the endpoint the
// new stream announces (same-origin rule again). A new stream is a new
// session: until an initialize request has been POSTed on it, Send refuses
// everything else with an error matching jsonrpc.ErrSessionExpired and
// jsonrpc.ErrNotSent, and an
// initialize request sent while the transport reconnects waits for the new
// endpoint. Re-initializing, and subscribing again, is the protocol layer's
// job. When the policy gives up, or the server refuses the GET in a way
// that will not change (a 4xx other than 408, 425 and 429, or an endpoint
// on another origin), the transport is over: Recv and Send report an error
// wrapping [ErrConnectionLost]. Options.NoReconnect ends it at the first
// drop instead.
//
// 2024-11-05 has no resumption: the transport never sends Last-Event-ID,
// and nothing the lost stream would have carried is recovered. It sends no
// batches of its own and no session headers; the endpoint URI is all the
// session state there is.
package legacy
