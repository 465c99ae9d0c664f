// Package jsonrpc is the leaf of anymcp: the JSON-RPC 2.0 message envelope,
// request ids, the error type with the standard and MCP-specific codes, and
// the Transport interface every wire format implements.
//
// A message is decoded once, into a Message whose params and result stay raw
// (json.RawMessage) until the protocol layer decodes them into a typed value.
// Nothing here knows about MCP methods; the client package owns the protocol.
package jsonrpc
