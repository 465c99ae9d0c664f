package client_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// protocols records the HTTP version of every request a test server got.
type protocols struct {
	mu   sync.Mutex
	seen map[string]int // "HTTP/2.0 POST", ...
}

func (p *protocols) note(r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = make(map[string]int)
	}
	p.seen[r.Proto+" "+r.Method]++
}

// allHTTP2 fails t unless every request the server got was HTTP/2, and
// there were some.
func (p *protocols) allHTTP2(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.seen {
		if !strings.HasPrefix(k, "HTTP/2.0 ") {
			t.Errorf("requests by protocol %v: want HTTP/2 only", p.seen)
			return
		}
	}
	if len(p.seen) == 0 {
		t.Error("the server got no request")
	}
}

// waitServer waits, within the test's time, until cond holds for srv's
// stats.
func waitServer(t *testing.T, srv *testservers.Server, cond func(testservers.Stats) bool) testservers.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := srv.WaitStats(ctx, cond)
	if err != nil {
		t.Fatalf("the server never got there: %+v", st)
	}
	return st
}

// Every kind of HTTP server over HTTPS, where net/http speaks HTTP/2 (ALPN
// h2): the negotiation finds the transport and era it finds over HTTP/1,
// the GET stream (or the HTTP+SSE stream) stays open while the POSTs go on
// the same connection, and every request is HTTP/2.
func TestHTTP2EveryServerKind(t *testing.T) {
	type kind struct {
		name      string
		start     func(onRequest func(*http.Request)) (url string, hc *http.Client, core *testservers.Server, stop func())
		transport string
		era       mcp.Era
	}
	streamable := func(o testservers.HTTPOptions) func(func(*http.Request)) (string, *http.Client, *testservers.Server, func()) {
		return func(on func(*http.Request)) (string, *http.Client, *testservers.Server, func()) {
			o.OnRequest = on
			s := testservers.StartStreamableTLS(o)
			return s.URL, s.Client(), s.Server(), s.Close
		}
	}
	legacy := func(m testservers.EndpointMode) func(func(*http.Request)) (string, *http.Client, *testservers.Server, func()) {
		return func(on func(*http.Request)) (string, *http.Client, *testservers.Server, func()) {
			s := testservers.StartLegacyTLS(testservers.LegacyOptions{Endpoint: m, OnRequest: on})
			return s.URL, s.Client(), s.Server(), s.Close
		}
	}
	for _, k := range []kind{
		{"streamable sse", streamable(testservers.HTTPOptions{Priming: true}), client.TransportStreamableHTTP, mcp.EraInitialize},
		{"streamable json", streamable(testservers.HTTPOptions{JSONResponse: true}), client.TransportStreamableHTTP, mcp.EraInitialize},
		{"stateless", streamable(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.StatelessOnly}}), client.TransportStreamableHTTP, mcp.EraStateless},
		{"legacy sse relative endpoint", legacy(testservers.EndpointRelative), client.TransportSSE, mcp.EraInitialize},
		{"legacy sse absolute endpoint", legacy(testservers.EndpointAbsolute), client.TransportSSE, mcp.EraInitialize},
	} {
		t.Run(k.name, func(t *testing.T) {
			var p protocols
			url, hc, core, stop := k.start(p.note)
			t.Cleanup(stop)
			changed := make(chan struct{}, 1)
			c := dial(t, server{name: k.name, target: client.URL(url)}, client.WithHTTPClient(hc),
				client.OnToolsChanged(func() {
					select {
					case changed <- struct{}{}:
					default:
					}
				}))
			if info := c.Info(); info.Transport != k.transport || info.Era != k.era {
				t.Fatalf("negotiated %s, %s; want %s, %s", info.Transport, info.Era, k.transport, k.era)
			}
			for i := range 3 {
				if err := echo(t, c, "over h2"); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			// What the server sends outside any answer comes on its stream.
			waitServer(t, core, func(st testservers.Stats) bool { return st.Sessions >= 1 || st.ListenActive >= 1 })
			core.NotifyToolsChanged()
			select {
			case <-changed:
			case <-ctxT(t).Done():
				t.Fatal("the tools/list_changed the server sent never came")
			}
			p.allHTTP2(t)
		})
	}
}

// Session expiry, throttling (429, 503 with Retry-After), answer streams
// cut with and without event ids, and a connection cut under several
// calls, over HTTP/2, where every stream of a Conn shares one connection:
// no call runs twice, a call is sent again only when it provably did not
// run, and the Conn goes on.
func TestHTTP2Resilience(t *testing.T) {
	var p protocols
	srv := testservers.StartStreamableTLS(testservers.HTTPOptions{Priming: true, OnRequest: p.note})
	t.Cleanup(srv.Close) // after the Conn's Close, which ends the session
	reinit := make(chan client.Info, 4)
	c := dial(t, server{target: client.URL(srv.URL)}, client.WithHTTPClient(srv.Client()),
		client.WithReconnectPolicy(fastPolicy), client.OnReinitialized(func(i client.Info) { reinit <- i }))
	ctx := ctxT(t)
	core := srv.Server()

	srv.ExpireAll()
	if err := echo(t, c, "after expiry"); err != nil {
		t.Fatalf("a call after the session expired is sent again on a new session: %v", err)
	}
	<-reinit

	srv.Inject(testservers.FaultRule{Fault: testservers.FaultTooManyRequests, Method: "tools/call", RetryAfter: "0", Count: 1},
		testservers.FaultRule{Fault: testservers.FaultUnavailable, Method: "tools/call", RetryAfter: "0", Count: 1})
	if err := echo(t, c, "patient"); err != nil {
		t.Fatalf("a call answered 429, then 503 with Retry-After: %v", err)
	}

	srv.Inject(testservers.FaultRule{Fault: testservers.FaultDropStream, Method: "tools/call", Count: 1})
	res, err := c.CallTool(ctx, "once", map[string]string{"key": "resumed"})
	if err != nil || !strings.Contains(res.Content[0].Text, "executed 1 time") {
		t.Fatalf("a call whose answer stream was reset (event ids): %v %v; want it resumed, run once", res, err)
	}
	srv.Inject(testservers.FaultRule{Fault: testservers.FaultDropStreamNoIDs, Method: "tools/call", Count: 1})
	if _, err := c.CallTool(ctx, "once", map[string]string{"key": "cut"}); !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("a call whose answer stream was reset (no event ids): %v; want outcome unknown", err)
	}
	waitServer(t, core, func(st testservers.Stats) bool { return st.Executions == 2 })

	// A connection cut under three calls cuts all their streams at once
	// (once each has brought a progress notification, an event with an
	// id): each is resumed on a new connection.
	results := make(chan error, 3)
	var progressed sync.WaitGroup
	progressed.Add(3)
	for range 3 {
		go func() {
			var once sync.Once
			res, err := c.CallTool(ctx, "slow", map[string]any{"steps": 4, "delayMs": 50},
				client.WithProgress(func(mcp.ProgressParams) { once.Do(progressed.Done) }))
			if err == nil && (len(res.Content) == 0 || res.Content[0].Text != "done 4 steps") {
				err = fmt.Errorf("answered %+v", res.Content)
			}
			results <- err
		}()
	}
	progressed.Wait()
	srv.CloseClientConnections()
	for range 3 {
		if err := <-results; err != nil {
			t.Errorf("a call in flight when the connection was cut: %v; want it resumed to its answer", err)
		}
	}
	if st := core.Stats(); st.ToolCalls["slow"] != 3 {
		t.Errorf("slow ran %d times; want 3", st.ToolCalls["slow"])
	}
	if st := core.Stats(); st.Duplicates != 0 || st.SessionsCreated != 2 {
		t.Errorf("duplicates %v, sessions created %d; want none, 2", st.DuplicateKeys, st.SessionsCreated)
	}
	if err := echo(t, c, "still fine"); err != nil {
		t.Fatal(err)
	}
	p.allHTTP2(t)
}

// A call cancelled by its caller over HTTP/2: the server is told (for the
// initialize era, notifications/cancelled; for 2026-07-28, the stream's reset)
// once, the call's error says it may have run, and the Conn goes on.
func TestHTTP2CancelledCall(t *testing.T) {
	for _, eras := range []testservers.Eras{testservers.InitializeOnly, testservers.StatelessOnly} {
		t.Run(eras.String(), func(t *testing.T) {
			srv := testservers.StartStreamableTLS(testservers.HTTPOptions{Options: testservers.Options{Eras: eras}, Priming: true})
			t.Cleanup(srv.Close)
			c := dial(t, server{target: client.URL(srv.URL)}, client.WithHTTPClient(srv.Client()))
			ctx, cancel := context.WithCancel(ctxT(t))
			done := make(chan error, 1)
			go func() {
				_, err := c.CallTool(ctx, "slow", map[string]any{"steps": 100, "delayMs": 100})
				done <- err
			}()
			waitServer(t, srv.Server(), func(st testservers.Stats) bool { return st.ToolCalls["slow"] == 1 })
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Fatalf("a call cancelled in flight: %v; want context.Canceled and outcome unknown", err)
			}
			st := waitServer(t, srv.Server(), func(st testservers.Stats) bool { return st.RequestsCancelled == 1 })
			if eras == testservers.InitializeOnly && st.Cancelled != 1 {
				t.Errorf("notifications/cancelled received %d times; want 1", st.Cancelled)
			}
			if err := echo(t, c, "after"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A server whose certificate the client does not trust: the error is the
// certificate's, the negotiation stops at its first attempt, and no HTTP
// request reaches the server (nothing falls back to HTTP+SSE over it).
func TestHTTP2UntrustedCertificateIsReportedAsItself(t *testing.T) {
	var p protocols
	srv := testservers.StartStreamableTLS(testservers.HTTPOptions{OnRequest: p.note})
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	untrusting := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true}}
	defer untrusting.CloseIdleConnections()
	_, err := client.Dial(ctx, client.URL(srv.URL), client.WithHTTPClient(untrusting))
	var unknownCA x509.UnknownAuthorityError
	var nerr *negotiate.Error
	if !errors.As(err, &unknownCA) || !errors.As(err, &nerr) {
		t.Fatalf("Dial = %v; want a *negotiate.Error holding the x509.UnknownAuthorityError", err)
	}
	if n := len(nerr.Report.Attempts); n != 1 {
		t.Errorf("%d attempts; want the first alone:\n%v", n, nerr.Report)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) != 0 {
		t.Errorf("the server got %v; want nothing", p.seen)
	}
}
