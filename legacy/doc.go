// Package legacy is the client side of the HTTP+SSE transport of MCP
// revision 2024-11-05, which later revisions replaced with Streamable HTTP
// (package modern) but which many servers still speak.
//
// The client holds one GET stream open to the server's SSE URL. Its first
// event, "endpoint", names the URI the client POSTs every message to; the
// server sends everything for the client as "message" events on the
// stream. The stream is the session.
//
// Most hosts never use this package directly: client.Dial falls back to it
// for a URL. To run the protocol over one built by hand:
//
//	t, err := legacy.Dial(ctx, "https://example.com/sse", legacy.Options{})
//	if err != nil { ... }
//	conn, err := client.Open(ctx, t)
//
// The endpoint must be on the SSE URL's origin, else Dial refuses it with
// a [*CrossOriginError], so that headers such as Authorization never go
// elsewhere; redirects are held to the same rule. [Transport] implements
// jsonrpc.Transport: Send POSTs, Recv returns the stream's messages through
// a bounded queue (nothing is dropped; a full queue stops the reader).
//
// When the stream drops, the transport reconnects as Options.Reconnect
// says. The new stream is a new session: Recv reports a
// *jsonrpc.SessionLostError, a POST in flight fails matching
// jsonrpc.ErrOutcomeUnknown, and Send refuses all but initialize until the
// protocol layer has initialized again. When the policy gives up, the
// transport ends with [ErrConnectionLost]. 2024-11-05 has no resumption:
// what the lost stream would have carried is not recovered.
//
// The rules in full are in docs/transports.md in the repository.
package legacy
