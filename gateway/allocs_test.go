package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// The gateway's own allocations per forwarded tools/call: its Handler
// in front of a stateless upstream, less a bare bridge's Handler in
// front of the same upstream. Both pay the same upstream Conn and HTTP
// exchange, and the same bridge handler; what is left is the gateway's
// layers (its mux and access check, the view, the approvals, the fleet's
// routing). docs/gateway-benchmarks.md records how it came down.
const (
	gatewayOwnBudget     = 16 // 13 measured; 37 before
	gatewayViewOwnBudget = 17 // 14 measured; 46 before
)

// sinkWriter is an http.ResponseWriter that keeps the last answer and is
// reused from call to call.
type sinkWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *sinkWriter) Header() http.Header         { return w.h }
func (w *sinkWriter) WriteHeader(status int)      { w.status = status }
func (w *sinkWriter) Write(p []byte) (int, error) { return w.body.Write(p) }
func (w *sinkWriter) Flush()                      {}

// handlerCall serves one stateless tools/call of tool on h as a POST to
// /mcp, reusing the request, the body's reader and the writer.
type handlerCall struct {
	h    http.Handler
	req  *http.Request
	body *bytes.Reader
	raw  []byte
	w    sinkWriter
}

func newHandlerCall(t *testing.T, h http.Handler, tool string) *handlerCall {
	c := &handlerCall{h: h, body: bytes.NewReader(nil), w: sinkWriter{h: http.Header{}}}
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, "http://127.0.0.1:1/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{
		"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {mcp.LatestStatelessVersion}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {tool},
	}
	req.RemoteAddr = "127.0.0.1:1"
	c.req = req
	c.raw = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":{"text":"hello"},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{},`+
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`, tool, mcp.LatestStatelessVersion)
	return c
}

func (c *handlerCall) serve() {
	clear(c.w.h)
	c.w.status = 0
	c.w.body.Reset()
	c.body.Reset(c.raw)
	c.req.Body = io.NopCloser(c.body)
	c.req.ContentLength = int64(len(c.raw))
	c.h.ServeHTTP(&c.w, c.req)
}

// allocsPerCall is the allocations of one call through c, the answer
// checked first.
func allocsPerCall(t *testing.T, c *handlerCall) float64 {
	t.Helper()
	c.serve()
	if c.w.status != http.StatusOK || !strings.Contains(c.w.body.String(), `"hello"`) {
		t.Fatalf("the call was answered %d: %s", c.w.status, c.w.body.String())
	}
	return testing.AllocsPerRun(200, c.serve)
}

// TestGatewayOwnCallAllocs holds the gateway's own allocations per
// stateless tools/call to their budget.
func TestGatewayOwnCallAllocs(t *testing.T) {
	up := testservers.StartStateless(testservers.HTTPOptions{})
	defer up.Close()

	b, err := bridge.New(ctxT(t), bridge.DialTarget(client.URL(up.URL)), bridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bridgeN := allocsPerCall(t, newHandlerCall(t, b.Handler(), "echo"))

	for _, tc := range []struct {
		name   string
		view   View
		budget int
	}{
		{"whole fleet", View{}, gatewayOwnBudget},
		{"view", View{Name: "v", Deny: []string{"server:other*", "*_secret"}, Rename: map[string]string{"up__add": "plus"}}, gatewayViewOwnBudget},
	} {
		g, err := New(ctxT(t), []fleet.Server{{Name: "up", Target: client.URL(up.URL)}}, Config{Logger: discard(), Views: []View{tc.view}})
		if err != nil {
			t.Fatal(err)
		}
		c := newHandlerCall(t, g.Handler(), "up__echo")
		if tc.view.Name != "" {
			c.req.URL.Path += "/" + tc.view.Name
		}
		gatewayN := allocsPerCall(t, c)
		_ = g.Close()
		own := gatewayN - bridgeN
		t.Logf("%s, per stateless call: gateway %v, bridge %v allocations: the gateway's own %v", tc.name, gatewayN, bridgeN, own)
		if !raceEnabled && own > float64(tc.budget) {
			t.Errorf("%s: the gateway's own allocations per stateless call: %v, budget %d", tc.name, own, tc.budget)
		}
	}
}
