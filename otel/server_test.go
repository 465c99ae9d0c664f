package otelmcp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	otelmcp "github.com/anymcp/anymcp/otel"
	"github.com/anymcp/anymcp/testservers"
)

// spanOf returns the one ended span of kind named name.
func (tel *telemetry) spanOf(t *testing.T, kind trace.SpanKind, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	var all []string
	for _, s := range tel.spans.GetSpans() {
		all = append(all, s.SpanKind.String()+" "+s.Name)
		if s.Name == name && s.SpanKind == kind {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %s spans named %q; spans: %q", len(found), kind, name, all)
	}
	return found[0]
}

// bridgeWithTelemetry starts a bridge before the upstream at url, whose
// upstream Conns and downstream requests tel traces (one Observer, its
// Server), served over HTTP on loopback; both end with the test.
func bridgeWithTelemetry(t *testing.T, tel *telemetry, url string, opts ...client.Option) (*bridge.Bridge, string) {
	t.Helper()
	obs := otelmcp.NewObserver(otelmcp.WithTracerProvider(tel.tp), otelmcp.WithMeterProvider(tel.mp),
		otelmcp.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
	b, err := bridge.New(bounded(t), bridge.DialTarget(client.URL(url), append(opts, client.WithObserver(obs))...), bridge.Options{Observer: obs.Server()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(func() {
		_ = b.Close()
		srv.Close()
	})
	return b, srv.URL
}

// pipeConn is a client's side of ServeStdio over pipes.
type pipeConn struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	outR *io.PipeReader
	mu   sync.Mutex
	once sync.Once
}

func (p *pipeConn) Send(_ context.Context, m *jsonrpc.Message) error {
	line, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err = p.in.Write(append(line, '\n'))
	return err
}

func (p *pipeConn) Recv() (*jsonrpc.Message, error) {
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		return nil, jsonrpc.ErrClosed
	}
	return jsonrpc.DecodeMessage(line)
}

func (p *pipeConn) Close() error {
	p.once.Do(func() {
		p.in.Close()
		p.outR.Close()
	})
	return nil
}

// openStdio serves b over pipes and opens a client of era on them; the
// bridge's loop ends with the test.
func openStdio(t *testing.T, b *bridge.Bridge, era negotiate.EraPolicy) *client.Conn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		<-done
		inR.Close()
	})
	conn, err := client.Open(bounded(t), &pipeConn{in: inW, out: bufio.NewReader(outR), outR: outR}, client.WithEra(era))
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// Through the bridge, on every face, the downstream request is a SERVER
// span whose parent is the downstream's span (its _meta traceparent), the
// upstream request a CLIENT span child of the SERVER span, and the
// upstream gets that CLIENT span as its parent: one trace throughout. A
// call the upstream fails ends the SERVER span with error.type; the
// metric mcp.server.operation.duration is recorded for both.
func TestServerSpanOnEveryFace(t *testing.T) {
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	faces := []struct {
		name      string
		transport string
		session   bool
		open      func(t *testing.T, b *bridge.Bridge, base string) *client.Conn
	}{
		{"stateless", "tcp", false, func(t *testing.T, _ *bridge.Bridge, base string) *client.Conn {
			return dial(t, base+"/mcp", client.WithEra(negotiate.StatelessOnly))
		}},
		{"session", "tcp", true, func(t *testing.T, _ *bridge.Bridge, base string) *client.Conn {
			return dial(t, base+"/mcp", client.WithEra(negotiate.InitializeOnly))
		}},
		{"sse", "tcp", true, func(t *testing.T, _ *bridge.Bridge, base string) *client.Conn {
			return dial(t, base+"/sse", client.WithEra(negotiate.InitializeOnly), client.WithTransportPolicy(negotiate.SSEOnly),
				client.WithProtocolVersion(mcp.Version20241105))
		}},
		{"stdio-stateless", "pipe", false, func(t *testing.T, b *bridge.Bridge, _ string) *client.Conn {
			return openStdio(t, b, negotiate.StatelessOnly)
		}},
		{"stdio-initialize", "pipe", true, func(t *testing.T, b *bridge.Bridge, _ string) *client.Conn {
			return openStdio(t, b, negotiate.InitializeOnly)
		}},
	}
	upstreams := []struct {
		name  string
		start func() *testservers.HTTPServer
	}{
		{"initialize-upstream", func() *testservers.HTTPServer { return testservers.StartStreamable(testservers.HTTPOptions{}) }},
		{"stateless-upstream", func() *testservers.HTTPServer {
			return testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.StatelessOnly}})
		}},
	}
	for _, u := range upstreams {
		t.Run(u.name, func(t *testing.T) {
			up := u.start()
			defer up.Close()
			for _, f := range faces {
				t.Run(f.name, func(t *testing.T) {
					tel := newTelemetry(t)
					b, base := bridgeWithTelemetry(t, tel, up.URL)
					conn := f.open(t, b, base)
					defer conn.Close()
					in := client.TraceContext{Traceparent: "00-" + traceID + "-" + parentID + "-01"}
					ctx := client.WithTraceContext(bounded(t), in)
					if _, err := conn.CallTool(ctx, "echo", map[string]any{"text": "hi"}); err != nil {
						t.Fatal(err)
					}
					var rpcErr *jsonrpc.Error
					if _, err := conn.CallTool(ctx, "nosuch", nil); !errors.As(err, &rpcErr) {
						t.Fatalf("an unknown tool: %v, want a JSON-RPC error", err)
					}

					server := tel.spanOf(t, trace.SpanKindServer, "tools/call echo")
					upstream := tel.spanOf(t, trace.SpanKindClient, "tools/call echo")
					if server.SpanContext.TraceID().String() != traceID || server.Parent.SpanID().String() != parentID || !server.Parent.IsRemote() {
						t.Errorf("SERVER span: trace %s, parent %s; want the downstream's %s, %s (remote)",
							server.SpanContext.TraceID(), server.Parent.SpanID(), traceID, parentID)
					}
					if upstream.SpanContext.TraceID() != server.SpanContext.TraceID() || upstream.Parent.SpanID() != server.SpanContext.SpanID() {
						t.Errorf("upstream CLIENT span: trace %s, parent %s; want the SERVER span's %s, %s",
							upstream.SpanContext.TraceID(), upstream.Parent.SpanID(), server.SpanContext.TraceID(), server.SpanContext.SpanID())
					}
					seen := false
					for _, tc := range up.Server().TraceContexts() {
						if tc.Method == "tools/call" && tc.TraceID == traceID && tc.ParentID == upstream.SpanContext.SpanID().String() {
							seen = true
						}
					}
					if !seen {
						t.Errorf("the upstream did not get the CLIENT span %s as parent: %+v", upstream.SpanContext.SpanID(), up.Server().TraceContexts())
					}
					a := attrs(server.Attributes)
					if a[otelmcp.AttrMethodName].AsString() != "tools/call" || a[otelmcp.AttrToolName].AsString() != "echo" ||
						a[otelmcp.AttrOperationName].AsString() != "execute_tool" || a[otelmcp.AttrRequestID].AsString() == "" ||
						a[otelmcp.AttrNetworkTransport].AsString() != f.transport || a[otelmcp.AttrProtocolVersion].AsString() == "" {
						t.Errorf("SERVER span attributes %v", server.Attributes)
					}
					if _, ok := a[otelmcp.AttrSessionID]; ok != f.session {
						t.Errorf("mcp.session.id present %v, want %v", ok, f.session)
					}
					if _, ok := a[otelmcp.AttrErrorType]; ok || server.Status.Code == codes.Error {
						t.Errorf("a successful call's span has error.type or status %+v", server.Status)
					}

					failed := tel.spanOf(t, trace.SpanKindServer, "tools/call nosuch")
					code := rpcErrCode(rpcErr)
					if fa := attrs(failed.Attributes); fa[otelmcp.AttrErrorType].AsString() != code || fa[otelmcp.AttrStatusCode].AsString() != code ||
						failed.Status.Code != codes.Error || failed.SpanContext.TraceID().String() != traceID {
						t.Errorf("failed call's SERVER span: %v, status %+v; want error.type %s", failed.Attributes, failed.Status, code)
					}

					points := map[string]bool{}
					for _, dp := range tel.metrics(t)["mcp.server.operation.duration"].DataPoints {
						m, _ := dp.Attributes.Value(otelmcp.AttrMethodName)
						name, _ := dp.Attributes.Value(otelmcp.AttrToolName)
						et, _ := dp.Attributes.Value(otelmcp.AttrErrorType)
						if m.AsString() == "tools/call" && dp.Count == 1 {
							points[name.AsString()+"/"+et.AsString()] = true
						}
					}
					if !points["echo/"] || !points["nosuch/"+code] {
						t.Errorf("mcp.server.operation.duration points %v, want echo and nosuch/%s", points, code)
					}
				})
			}
		})
	}
}

// An upstream that cannot be reached ends the SERVER span with the code
// the client got, and says whether the request may have run.
func TestServerSpanUpstreamDown(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	tel := newTelemetry(t)
	// The upstream call's own timeout ends it: a refused connection is
	// retried until then.
	_, base := bridgeWithTelemetry(t, tel, up.URL, client.WithDefaultTimeout(300*time.Millisecond))
	conn := dial(t, base+"/mcp", client.WithEra(negotiate.StatelessOnly))
	defer conn.Close()
	up.Close()
	_, err := conn.ListTools(bounded(t), "")
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("with the upstream down: %v, want a JSON-RPC error", err)
	}
	// The client sends a listing the bridge says did not run again: each
	// time a request, and a SERVER span, of its own.
	n := 0
	for _, s := range tel.spans.GetSpans() {
		if s.SpanKind != trace.SpanKindServer || s.Name != "tools/list" {
			continue
		}
		n++
		a := attrs(s.Attributes)
		if a[otelmcp.AttrErrorType].AsString() != rpcErrCode(rpcErr) || s.Status.Code != codes.Error {
			t.Errorf("SERVER span %v, status %+v; want error.type %d", s.Attributes, s.Status, rpcErr.Code)
		}
		if got := a[otelmcp.AttrOutcome].AsString(); got == "" || got != rpcErr.Outcome() {
			t.Errorf("anymcp.outcome %q, want the error's %q", got, rpcErr.Outcome())
		}
	}
	if n == 0 {
		t.Fatal("no SERVER span for tools/list")
	}
}

// Without a trace context in _meta, the HTTP request's traceparent is the
// SERVER span's parent; with both, _meta's is the parent and the HTTP
// one a link.
func TestServerSpanHTTPTraceparent(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	tel := newTelemetry(t)
	_, base := bridgeWithTelemetry(t, tel, up.URL)
	const metaTP, httpTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-11111111111111111111111111111111-2222222222222222-01"
	for _, withMeta := range []bool{false, true} {
		tel.spans.Reset()
		meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
		if withMeta {
			meta += `,"traceparent":"` + metaTP + `"`
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` + meta + `}}}`
		req, err := http.NewRequestWithContext(bounded(t), http.MethodPost, base+"/mcp", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		req.Header.Set("Traceparent", httpTP)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `"tools"`) {
			t.Fatalf("tools/list: %d %s", res.StatusCode, b)
		}
		s := tel.spanOf(t, trace.SpanKindServer, "tools/list")
		wantParent, wantLink := httpTP, ""
		if withMeta {
			wantParent, wantLink = metaTP, httpTP
		}
		if got := "00-" + s.Parent.TraceID().String() + "-" + s.Parent.SpanID().String() + "-01"; got != wantParent {
			t.Errorf("with _meta %v: parent %s, want %s", withMeta, got, wantParent)
		}
		var links []string
		for _, l := range s.Links {
			links = append(links, "00-"+l.SpanContext.TraceID().String()+"-"+l.SpanContext.SpanID().String()+"-01")
		}
		if (wantLink == "" && len(links) != 0) || (wantLink != "" && (len(links) != 1 || links[0] != wantLink)) {
			t.Errorf("with _meta %v: links %q, want %q", withMeta, links, wantLink)
		}
	}
}

// dial connects to target, bounded by the test.
func dial(t *testing.T, target string, opts ...client.Option) *client.Conn {
	t.Helper()
	c, err := client.Dial(bounded(t), client.URL(target), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
