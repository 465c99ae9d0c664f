package modern

import (
	"context"
	"net/http"
)

type headersKey struct{}

// WithHeaders returns a copy of ctx that makes Send add h to the POST that
// carries its message, over the static Options.Header and the session's
// headers (an MCP-Protocol-Version in h replaces the session's). The
// protocol layer uses it for the request metadata that revision 2026-07-28
// mirrors from the body into headers: MCP-Protocol-Version, Mcp-Method,
// Mcp-Name and Mcp-Param-*. h must not change once passed; its keys must be
// in canonical form (http.CanonicalHeaderKey).
func WithHeaders(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headersKey{}, h)
}

// requestHeaders returns the headers WithHeaders put in ctx, or nil.
func requestHeaders(ctx context.Context) http.Header {
	h, _ := ctx.Value(headersKey{}).(http.Header)
	return h
}
