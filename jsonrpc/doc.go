// Package jsonrpc is the leaf of anymcp: the JSON-RPC 2.0 message envelope,
// request ids, the error type with the standard and MCP-specific codes, and
// the Transport interface every wire format implements.
//
// A host meets it in errors: errors.Is(err, ErrOutcomeUnknown) says a
// request may have run (its answer was lost), *Error is a JSON-RPC error
// answer, *HTTPError and *RedirectError what an HTTP server answered. An
// *Error whose data carries OutcomeKey "unknown" (a bridge's lost answer)
// matches ErrOutcomeUnknown too. A
// host with a wire format of its own implements Transport and passes it to
// client.Open.
//
// A message is decoded once, into a Message whose params and result stay raw
// (json.RawMessage) until the protocol layer decodes them into a typed value.
// DecodeOwned, for a buffer the transport hands over and never reuses,
// leaves them in it, so a large result is not copied before its final
// decoding. Nothing here knows about MCP methods; the client package owns
// the protocol.
package jsonrpc
