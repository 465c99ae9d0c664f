package bridge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/anymcp/anymcp/internal/reqmeta"
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

// headerValue returns the value of header name, trimmed of optional
// whitespace and decoded from the Base64 sentinel; ok is false when the
// header is absent; bad is set when its sentinel does not decode.
func headerValue(h http.Header, name string) (v string, ok bool, bad bool) {
	vs, ok := h[http.CanonicalHeaderKey(name)]
	if !ok || len(vs) == 0 {
		return "", false, false
	}
	v = strings.Trim(vs[0], " \t")
	if inner, isB64 := strings.CutPrefix(v, "=?base64?"); isB64 {
		if inner, isB64 = strings.CutSuffix(inner, "?="); isB64 {
			d, err := base64.StdEncoding.Strict().DecodeString(inner)
			if err != nil {
				return "", true, true
			}
			return string(d), true, false
		}
	}
	return v, true, false
}

// checkHeaders checks the request metadata headers h against the request r
// (version is the _meta's protocolVersion, already checked).
func (b *Bridge) checkHeaders(ctx context.Context, h http.Header, r *request) *jsonrpc.Error {
	if v, ok, _ := headerValue(h, reqmeta.HeaderProtocolVersion); ok && v != mcp.LatestStatelessVersion {
		return headerMismatch("MCP-Protocol-Version " + quote(v) + " is not the body's " + mcp.LatestStatelessVersion)
	}
	m, ok, _ := headerValue(h, reqmeta.HeaderMethod)
	if !ok {
		return headerMismatch("Mcp-Method is missing")
	}
	if m != r.method {
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
		got, ok, bad := headerValue(h, reqmeta.HeaderName)
		switch {
		case !ok:
			return headerMismatch("Mcp-Name is missing")
		case bad:
			return headerMismatch("Mcp-Name is not valid Base64")
		case got != name:
			return headerMismatch("Mcp-Name " + quote(got) + " is not the body's " + quote(name))
		}
	}
	if r.method == "tools/call" && name != "" {
		return b.checkParamHeaders(ctx, h, name, r.members["arguments"])
	}
	return nil
}

// checkParamHeaders checks the Mcp-Param headers of a call of tool.
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
	want := http.Header{}
	if err := reqmeta.AddParamHeaders(want, ps, args); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "arguments: "+err.Error())
	}
	for _, p := range ps {
		hn := p.HeaderName()
		w, wok, _ := headerValue(want, hn)
		g, gok, bad := headerValue(h, hn)
		switch {
		case bad:
			return headerMismatch(hn + " is not valid Base64")
		case wok && !gok:
			return headerMismatch(hn + " is missing")
		case wok && g != w:
			return headerMismatch(hn + " does not match the argument it mirrors")
		}
	}
	return nil
}

// toolHeaderCache remembers the x-mcp-header parameters of the upstream's
// tools, listed once and again after the upstream says its tools changed
// or when a call names a tool it does not know.
type toolHeaderCache struct {
	mu    sync.Mutex
	tools map[string][]reqmeta.ParamHeader // nil: not listed yet
}

// maxToolsCached bounds the tools remembered.
const maxToolsCached = 4096

func (c *toolHeaderCache) forget() {
	c.mu.Lock()
	c.tools = nil
	c.mu.Unlock()
}

func (c *toolHeaderCache) params(ctx context.Context, b *Bridge, tool string) []reqmeta.ParamHeader {
	c.mu.Lock()
	ps, known := c.tools[tool]
	listed := c.tools != nil
	c.mu.Unlock()
	if known || (listed && !b.relistAllowed()) {
		return ps
	}
	tools := map[string][]reqmeta.ParamHeader{}
	for t, err := range b.shared.Tools(ctx) {
		if err != nil || len(tools) >= maxToolsCached {
			break
		}
		ps, err := reqmeta.ParamHeaders(t.Name, json.RawMessage(t.InputSchema))
		if err == nil {
			tools[t.Name] = ps
		}
	}
	c.mu.Lock()
	c.tools = tools
	c.mu.Unlock()
	return tools[tool]
}
