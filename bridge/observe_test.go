package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// observed is an Observer that keeps every request and how it ended. With
// relay set, the context it returns carries that trace context, which the
// upstream request must carry in place of the downstream's.
type observed struct {
	relay client.TraceContext

	mu   sync.Mutex
	seen []*seen
}

type seen struct {
	req  Request
	ends []Outcome
}

func (r *observed) Request(ctx context.Context, req *Request) (context.Context, RequestObserver) {
	s := &seen{req: *req}
	r.mu.Lock()
	r.seen = append(r.seen, s)
	r.mu.Unlock()
	if r.relay.Traceparent != "" {
		ctx = client.WithTraceContext(ctx, r.relay)
	}
	return ctx, &seenEnd{r: r, s: s}
}

type seenEnd struct {
	r *observed
	s *seen
}

func (e *seenEnd) End(o *Outcome) {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	c := *o
	c.Result = append(json.RawMessage(nil), o.Result...)
	e.s.ends = append(e.s.ends, c)
}

// requests returns what was seen of method, failing the test when a
// request was not ended exactly once.
func (r *observed) requests(t *testing.T, method string) []*seen {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*seen
	for _, s := range r.seen {
		if len(s.ends) != 1 {
			t.Errorf("%s (id %s) ended %d times, want once", s.req.Method, s.req.ID, len(s.ends))
		}
		if s.req.Method == method {
			out = append(out, s)
		}
	}
	return out
}

// one returns the one request of method seen, its single ending checked.
func (r *observed) one(t *testing.T, method string) *seen {
	t.Helper()
	got := r.requests(t, method)
	if len(got) != 1 {
		t.Fatalf("%d %s requests observed, want 1", len(got), method)
	}
	return got[0]
}

// observeFaces are the faces of a bridge before the upstream at up's
// URL, each opening a client.
func observeFaces(b *Bridge, url string) []struct {
	name      string
	transport string
	era       mcp.Era
	open      func(t *testing.T) *client.Conn
} {
	dial := func(t *testing.T, target string, opts ...client.Option) *client.Conn {
		c, err := client.Dial(testCtx(t), client.URL(target), opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return []struct {
		name      string
		transport string
		era       mcp.Era
		open      func(t *testing.T) *client.Conn
	}{
		{"stateless", client.TransportStreamableHTTP, mcp.EraStateless, func(t *testing.T) *client.Conn {
			return dial(t, url, client.WithEra(negotiate.StatelessOnly))
		}},
		{"session", client.TransportStreamableHTTP, mcp.EraInitialize, func(t *testing.T) *client.Conn {
			return dial(t, url, client.WithEra(negotiate.InitializeOnly))
		}},
		{"sse", client.TransportSSE, mcp.EraInitialize, func(t *testing.T) *client.Conn {
			return dial(t, strings.TrimSuffix(url, "/mcp")+"/sse", client.WithTransportPolicy(negotiate.SSEOnly),
				client.WithEra(negotiate.InitializeOnly), client.WithProtocolVersion(mcp.Version20241105))
		}},
		{"stdio-stateless", client.TransportStdio, mcp.EraStateless, func(t *testing.T) *client.Conn { return openStdio(t, b, negotiate.StatelessOnly) }},
		{"stdio-initialize", client.TransportStdio, mcp.EraInitialize, func(t *testing.T) *client.Conn { return openStdio(t, b, negotiate.InitializeOnly) }},
	}
}

// On every face, each downstream request is observed once and ended
// once, before its answer: with its method, name, id, era, transport and
// trace context, a session's digest (never its id), and its outcome. The
// context the Observer returns is the one the upstream request is made
// in: the trace context it carries reaches the upstream in place of the
// downstream's.
func TestObserverSeesEveryRequestOnce(t *testing.T) {
	for i, u := range traceUpstreams {
		t.Run(u.name, func(t *testing.T) {
			up := u.start()
			defer up.Close()
			rec := &observed{}
			b, url := startBridge(t, up.URL, Options{Observer: rec})
			for j, f := range observeFaces(b, url) {
				t.Run(f.name, func(t *testing.T) {
					rec.mu.Lock()
					rec.seen = nil
					rec.relay = client.TraceContext{Traceparent: fmt.Sprintf("00-0af7651916cd43dd8448eb211c80%02d%02d-b7ad6b7169203331-01", i, j)}
					rec.mu.Unlock()
					conn := f.open(t)
					defer conn.Close()
					in := client.TraceContext{Traceparent: fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e47%02d-00f067aa0ba902b7-01", j), Tracestate: "v=1"}
					if _, err := conn.CallTool(client.WithTraceContext(testCtx(t), in), "echo", map[string]any{"text": "hi"}); err != nil {
						t.Fatal(err)
					}
					res, err := conn.CallTool(testCtx(t), "fail", map[string]any{"message": "no"})
					if err != nil || !res.IsError {
						t.Fatalf("fail: %v %+v", err, res)
					}
					_, err = conn.CallTool(testCtx(t), "nosuch", nil)
					var rpcErr *jsonrpc.Error
					if !errors.As(err, &rpcErr) {
						t.Fatalf("an unknown tool: %v, want a JSON-RPC error", err)
					}

					calls := rec.requests(t, "tools/call")
					if len(calls) != 3 {
						t.Fatalf("%d tools/call observed, want 3", len(calls))
					}
					echo, failed, unknown := calls[0], calls[1], calls[2]
					r := echo.req
					if r.Name != "echo" || r.ID == "" || strings.HasPrefix(r.ID, `"`) || r.Era != f.era || r.Transport != f.transport {
						t.Errorf("echo observed as %+v; want name echo, an id, era %s, transport %s", r, f.era, f.transport)
					}
					if r.Trace != in {
						t.Errorf("echo's trace context %+v, want the downstream's %+v", r.Trace, in)
					}
					if (f.era == mcp.EraInitialize) != (r.Session != "") || len(r.Session) > 0 && len(r.Session) != 32 {
						t.Errorf("session %q for era %s: want a 32-digit digest in a session only", r.Session, f.era)
					}
					if r.ProtocolVersion == "" {
						t.Errorf("no protocol version observed")
					}
					if o := echo.ends[0]; o.Err != nil || o.IsError || o.Cancelled || len(o.Result) == 0 || o.Duration <= 0 {
						t.Errorf("echo ended %+v, want a result", o)
					}
					if o := failed.ends[0]; o.Err != nil || !o.IsError {
						t.Errorf("fail ended %+v, want IsError", o)
					}
					if o := unknown.ends[0]; o.Err == nil || o.Err.Code != rpcErr.Code {
						t.Errorf("nosuch ended %+v, want the error the client got (%d)", o, rpcErr.Code)
					}
					if got, ok := traceSeen(up.Server(), rec.relay.Traceparent); !ok || got.TraceState != "" {
						t.Errorf("the upstream did not get the Observer's trace context %s: %+v", rec.relay.Traceparent, up.Server().TraceContexts())
					}
					if _, ok := traceSeen(up.Server(), in.Traceparent); ok {
						t.Errorf("the upstream got the downstream's trace context, not the Observer's")
					}
					first := "initialize"
					if f.era == mcp.EraStateless {
						first = "server/discover"
					}
					rec.one(t, first)
				})
			}
		})
	}
}

// Requests the bridge refuses itself are observed too, ended with the
// error the client got: a stateless request of an unknown revision or an
// unknown method, a request before initialize, over HTTP and stdio.
// Notifications are not.
func TestObserverSeesRefusals(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	rec := &observed{}
	b, url := startBridge(t, up.URL, Options{Observer: rec})

	ex := statelessCall(t, url, 7, "nosuch/method", nil, nil)
	if ex.resp == nil || ex.resp.Error == nil {
		t.Fatalf("unknown method answered %+v", ex)
	}
	s := rec.one(t, "nosuch/method")
	if s.req.ID != "7" || s.ends[0].Err == nil || s.ends[0].Err.Code != jsonrpc.CodeMethodNotFound || s.req.Era != mcp.EraStateless {
		t.Errorf("unknown method observed as %+v, ended %+v", s.req, s.ends)
	}

	ex = statelessCall(t, url, "a-1", "tools/list", map[string]any{"_meta": map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}, nil,
		"Mcp-Protocol-Version", "2025-06-18", "Traceparent", "00-11111111111111111111111111111111-2222222222222222-01")
	if ex.resp == nil || ex.resp.Error == nil {
		t.Fatalf("mismatched revision answered %+v", ex)
	}
	s = rec.one(t, "tools/list")
	if s.req.ID != "a-1" || s.ends[0].Err == nil || s.ends[0].Err.Code != ex.resp.Error.Code {
		t.Errorf("refused tools/list observed as %+v, ended %+v; the client got %d", s.req, s.ends, ex.resp.Error.Code)
	}
	if s.req.HTTPTrace.Traceparent != "00-11111111111111111111111111111111-2222222222222222-01" || s.req.Trace.Traceparent == "" {
		t.Errorf("trace contexts observed: _meta %+v, HTTP %+v", s.req.Trace, s.req.HTTPTrace)
	}

	body := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	if ex := post(t, url, []byte(body), http.Header{}); ex.status != http.StatusBadRequest {
		t.Fatalf("a request before initialize got %d", ex.status)
	}
	post(t, url, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), http.Header{})
	if got := rec.requests(t, "tools/list"); len(got) != 2 || got[1].ends[0].Err == nil || got[1].req.Era != mcp.EraInitialize {
		t.Errorf("a request before initialize: observed %d, last %+v", len(got), got[len(got)-1])
	}
	if got := rec.requests(t, "notifications/initialized"); len(got) != 0 {
		t.Errorf("a notification was observed")
	}

	tr, _ := serveStdio(t, b)
	if err := tr.Send(testCtx(t), &jsonrpc.Message{ID: jsonrpc.Int(9), Method: "prompts/list"}); err != nil {
		t.Fatal(err)
	}
	m, err := tr.Recv()
	if err != nil || m.Error == nil {
		t.Fatalf("stdio before initialize: %+v %v", m, err)
	}
	s = rec.one(t, "prompts/list")
	if s.req.Transport != client.TransportStdio || s.ends[0].Err == nil || s.ends[0].Err.Code != m.Error.Code {
		t.Errorf("stdio refusal observed as %+v, ended %+v", s.req, s.ends)
	}
}

// A session's requests name it by a digest, never by its id.
func TestObserverHidesSessionID(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	rec := &observed{}
	b, url := startBridge(t, up.URL, Options{Observer: rec})
	conn, err := client.Dial(testCtx(t), client.URL(url), client.WithEra(negotiate.InitializeOnly))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var id string
	b.httpSessions.mu.Lock()
	for k := range b.httpSessions.m {
		id = k
	}
	b.httpSessions.mu.Unlock()
	s := rec.one(t, "ping")
	if id == "" || s.req.Session == "" || s.req.Session == id || strings.Contains(s.req.Session, id) || s.req.Session != sessionDigest(id) {
		t.Errorf("session id %q observed as %q", id, s.req.Session)
	}
}

// Without an Observer, following a request costs nothing: no allocation.
func TestObserverNilAllocatesNothing(t *testing.T) {
	b := &Bridge{}
	msg := &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "tools/call", Params: json.RawMessage(`{"name":"echo","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`)}
	resp := &jsonrpc.Message{ID: msg.ID, Result: json.RawMessage(`{}`)}
	h := http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		octx, ob := b.observe(ctx, msg, face{transport: client.TransportStreamableHTTP, httpTrace: b.httpTrace(h)})
		ob.end(resp)
		if octx.Value(observedTrace{}) != nil { // traced's look-up
			t.Error("a context marked without an Observer")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per request without an Observer, want 0", allocs)
	}
}
