package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

// The bridge's own allocations per forwarded tools/call, measured over
// its http.Handler with an upstream that answers at once: no network,
// no client, so the count is the bridge's alone (bench/bridge measures
// the whole path). docs/benchmarks.md records how they came down; the
// budgets leave a small margin above today's counts.
const (
	statelessCallBudget = 48 // 43 measured; 193 before the cuts
	sessionCallBudget   = 26 // 22 measured; 30 before
)

// instantUpstream answers every call with the same result, as a server
// of era would, and allocates nothing doing it.
type instantUpstream struct {
	era    mcp.Era
	result json.RawMessage
}

func (u *instantUpstream) Info() client.Info {
	return client.Info{Era: u.era, Capabilities: mcp.ServerCapabilities{Tools: &mcp.ListChanged{}}}
}

func (u *instantUpstream) Call(_ context.Context, _ string, _, result any, _ ...client.CallOption) error {
	*result.(*json.RawMessage) = u.result
	return nil
}

func (u *instantUpstream) Tools(context.Context) iter.Seq2[mcp.Tool, error] {
	return func(func(mcp.Tool, error) bool) {}
}
func (u *instantUpstream) Listening(context.Context) error                     { return nil }
func (u *instantUpstream) Subscribe(context.Context, string) error             { return nil }
func (u *instantUpstream) Unsubscribe(context.Context, string) error           { return nil }
func (u *instantUpstream) SetLogLevel(context.Context, mcp.LoggingLevel) error { return nil }
func (u *instantUpstream) NotifyRootsChanged(context.Context) error            { return nil }
func (u *instantUpstream) Close() error                                        { return nil }

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

func (w *sinkWriter) reset() {
	clear(w.h)
	w.status = 0
	w.body.Reset()
}

// handlerCall serves body on h as a POST to /mcp with header, reusing
// the request, the body's reader and the writer; the answer must hold
// want.
type handlerCall struct {
	h    http.Handler
	req  *http.Request
	body *bytes.Reader
	w    sinkWriter
}

func newHandlerCall(t *testing.T, h http.Handler, header http.Header) *handlerCall {
	c := &handlerCall{h: h, body: bytes.NewReader(nil), w: sinkWriter{h: http.Header{}}}
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, "http://127.0.0.1/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.RemoteAddr = "127.0.0.1:1"
	c.req = req
	return c
}

func (c *handlerCall) serve(body []byte) {
	c.w.reset()
	c.body.Reset(body)
	c.req.Body = io.NopCloser(c.body)
	c.req.ContentLength = int64(len(body))
	c.h.ServeHTTP(&c.w, c.req)
}

const allocCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}%s}}`

// allocsPerCall is the allocations of one call of body through c, the
// answer checked first.
func allocsPerCall(t *testing.T, c *handlerCall, body []byte) float64 {
	c.serve(body)
	if c.w.status != http.StatusOK || !strings.Contains(c.w.body.String(), `"hello"`) {
		t.Fatalf("the call was answered %d: %s", c.w.status, c.w.body.String())
	}
	return testing.AllocsPerRun(200, func() { c.serve(body) })
}

// TestStatelessCallAllocs holds a stateless call (2026-07-28) through the
// bridge's HTTP face to its budget.
func TestStatelessCallAllocs(t *testing.T) {
	up := &instantUpstream{era: mcp.EraStateless, result: json.RawMessage(`{"content":[{"type":"text","text":"hello"}],"isError":false,"resultType":"complete"}`)}
	b, err := New(testCtx(t), func(context.Context, Downstream) (Upstream, error) { return up, nil }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c := newHandlerCall(t, b.Handler(), http.Header{
		"Mcp-Protocol-Version": {mcp.LatestStatelessVersion}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"},
	})
	body := fmt.Appendf(nil, allocCall, `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`)
	n := allocsPerCall(t, c, body)
	t.Logf("%v allocations per stateless call", n)
	if !raceEnabled && n > statelessCallBudget {
		t.Errorf("%v allocations per stateless call, budget %d", n, statelessCallBudget)
	}
}

// TestSessionCallAllocs holds a call in a 2025-11-25 session, on the
// bridge's HTTP face, to its budget.
func TestSessionCallAllocs(t *testing.T) {
	up := &instantUpstream{era: mcp.EraInitialize, result: json.RawMessage(`{"content":[{"type":"text","text":"hello"}],"isError":false}`)}
	b, err := New(testCtx(t), func(context.Context, Downstream) (Upstream, error) { return up, nil }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c := newHandlerCall(t, b.Handler(), http.Header{})
	c.serve([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	id := c.w.h.Get("Mcp-Session-Id")
	if c.w.status != http.StatusOK || id == "" {
		t.Fatalf("initialize was answered %d, session %q: %s", c.w.status, id, c.w.body.String())
	}
	c.req.Header.Set("Mcp-Session-Id", id)
	c.req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	n := allocsPerCall(t, c, fmt.Appendf(nil, allocCall, ""))
	t.Logf("%v allocations per session call", n)
	if !raceEnabled && n > sessionCallBudget {
		t.Errorf("%v allocations per session call, budget %d", n, sessionCallBudget)
	}
}
