package bridge

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/anymcp/anymcp/internal/servehttp"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Revision 2026-07-28 mirrors a request's revision, method and name into
// headers (and the tool parameters annotated x-mcp-header into
// Mcp-Param-{Name}) so that intermediaries can route without reading the
// body; a server must refuse a request whose headers and body disagree
// (-32020, HTTP 400). The bridge checks them against the body, and the
// Mcp-Param headers against the upstream's listing of the tool.

func headerMismatch(why string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeHeaderMismatch, "header mismatch: "+why)
}

// headerValue returns the value of header name as the server core reads
// it (optional whitespace trimmed, the Base64 sentinel decoded); ok is
// false when the header is absent; bad is set when it is repeated, holds
// characters a header may not carry, or its sentinel does not decode.
func headerValue(h http.Header, name string) (v string, ok bool, bad bool) {
	raw, ok, err := servehttp.Single(h, name)
	if !ok {
		return "", false, false
	}
	if err == nil {
		v, err = servehttp.DecodeValue(raw)
	}
	return v, true, err != nil
}

// plainHeader is headerValue for a header that carries no sentinel
// (MCP-Protocol-Version, Mcp-Method).
func plainHeader(h http.Header, name string) (v string, ok bool, bad bool) {
	raw, ok, err := servehttp.Single(h, name)
	if !ok {
		return "", false, false
	}
	if err == nil {
		v, err = servehttp.PlainValue(raw)
	}
	return v, true, err != nil
}

// checkHeaders checks the request metadata headers h against the request r
// (version is the _meta's protocolVersion, already checked).
func (b *Bridge) checkHeaders(ctx context.Context, h http.Header, r *request) *jsonrpc.Error {
	if v, ok, bad := plainHeader(h, servehttp.HeaderProtocolVersion); bad {
		return headerMismatch("MCP-Protocol-Version is repeated or holds characters a header may not carry")
	} else if ok && v != mcp.LatestStatelessVersion {
		return headerMismatch("MCP-Protocol-Version " + quote(v) + " is not the body's " + mcp.LatestStatelessVersion)
	}
	m, ok, bad := plainHeader(h, servehttp.HeaderMethod)
	switch {
	case !ok:
		return headerMismatch("Mcp-Method is missing")
	case bad:
		return headerMismatch("Mcp-Method is repeated or holds characters a header may not carry")
	case m != r.method:
		return headerMismatch("Mcp-Method " + quote(m) + " is not the body's method " + quote(r.method))
	}
	var name string
	hasName := false
	switch r.method {
	case "tools/call", "prompts/get":
		_, hasName = r.members["name"]
		name = r.str("name")
	case "resources/read":
		_, hasName = r.members["uri"]
		name = r.str("uri")
	}
	if hasName {
		got, ok, bad := headerValue(h, servehttp.HeaderName)
		switch {
		case !ok:
			return headerMismatch("Mcp-Name is missing")
		case bad:
			return headerMismatch("Mcp-Name is repeated, holds characters a header may not carry, or its Base64 is not UTF-8")
		case got != name:
			return headerMismatch("Mcp-Name " + quote(got) + " is not the body's " + quote(name))
		}
	}
	if r.method == "tools/call" && name != "" {
		return b.checkParamHeaders(ctx, h, name, r.members["arguments"])
	}
	return nil
}

// checkParamHeaders checks the Mcp-Param headers of a call of tool
// against its arguments, by the upstream's listing of the tool.
func (b *Bridge) checkParamHeaders(ctx context.Context, h http.Header, tool string, args json.RawMessage) *jsonrpc.Error {
	if b.shared == nil {
		return nil // no upstream to list the tools of (the fuzz target's bridge)
	}
	ps := b.toolHeaders.params(ctx, b, tool)
	if len(ps) == 0 {
		return nil
	}
	if !present(args) {
		args = json.RawMessage(`{}`)
	}
	if m := servehttp.CheckParams(h, ps, args); m != nil {
		return headerMismatch(m.Why)
	}
	return nil
}

// toolHeaderCache remembers the x-mcp-header parameters of the upstream's
// tools, listed once and again after the upstream says its tools changed
// or when a call names a tool it does not know.
type toolHeaderCache struct {
	mu    sync.Mutex
	tools map[string][]servehttp.ParamHeader // nil: not listed yet
}

// maxToolsCached bounds the tools remembered.
const maxToolsCached = 4096

func (c *toolHeaderCache) forget() {
	c.mu.Lock()
	c.tools = nil
	c.mu.Unlock()
}

func (c *toolHeaderCache) params(ctx context.Context, b *Bridge, tool string) []servehttp.ParamHeader {
	c.mu.Lock()
	ps, known := c.tools[tool]
	listed := c.tools != nil
	c.mu.Unlock()
	if known || (listed && !b.relistAllowed()) {
		return ps
	}
	tools := map[string][]servehttp.ParamHeader{}
	for t, err := range b.shared.Tools(ctx) {
		if err != nil || len(tools) >= maxToolsCached {
			break
		}
		ps, err := servehttp.ParamHeaders(json.RawMessage(t.InputSchema))
		if err == nil {
			tools[t.Name] = ps
		}
	}
	c.mu.Lock()
	c.tools = tools
	c.mu.Unlock()
	return tools[tool]
}
