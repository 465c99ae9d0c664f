package reqmeta

import (
	"context"
	"net/http"
)

type headersKey struct{}

// With returns a copy of ctx that makes the Streamable HTTP transport's
// Send add h to the POST that carries its message, over the static
// headers of its options and the session's headers (an MCP-Protocol-Version in h replaces the session's). The
// protocol layer uses it for the request metadata that revision 2026-07-28
// mirrors from the body into headers: MCP-Protocol-Version, Mcp-Method,
// Mcp-Name and Mcp-Param-*. h must not change once passed; its keys must be
// in canonical form (http.CanonicalHeaderKey).
func With(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headersKey{}, h)
}

// From returns the headers With put in ctx, or nil.
func From(ctx context.Context) http.Header {
	h, _ := ctx.Value(headersKey{}).(http.Header)
	return h
}
