// Package jsonrpc is the leaf of anymcp: the JSON-RPC 2.0 message envelope,
// request ids, the error type with the standard and MCP-specific codes, and
// the Transport interface every wire format implements.
//
// A message is decoded once, into a Message whose params and result stay raw
// (json.RawMessage) until the protocol layer decodes them into a typed value.
// Decode copies them out of its input; DecodeOwned, for a buffer the
// transport hands over and never reuses, leaves them in it, so a large
// result is not copied again before its final decoding, and only delimits
// a result without checking it: the decoding into its type checks it in
// the same pass, so each of its bytes is scanned once.
// Nothing here knows about MCP methods; the client package owns the protocol.
package jsonrpc
