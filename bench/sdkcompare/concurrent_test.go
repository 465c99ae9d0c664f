package sdkcompare_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// callers is how many goroutines call at once on one connected client in
// BenchmarkConcurrentCalls.
const callers = 64

// concurrentContenders are the contenders of BenchmarkConcurrentCalls:
// each with the HTTP client it uses by default (see server.ownHTTP), and
// besides the floor on net/http's defaults (2 idle connections per host),
// floor-pooled: the same floor with an idle pool as large as the callers.
var concurrentContenders = []contender{
	{name: "floor", dial: dialFloor},
	{name: "floor-pooled", dial: dialPooledFloor},
	{name: "anymcp", dial: dialAnymcp},
	{name: "gosdk", dial: dialGoSDK},
	{name: "mcpgo", dial: dialMCPGo},
}

// dialPooledFloor is the HTTP floor over a transport that keeps as many
// idle connections per host as there are callers.
func dialPooledFloor(ctx context.Context, s *server) (conn, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = callers
	return dialHTTPFloorWith(ctx, s, &http.Client{Transport: t})
}

// countingServer is a Streamable HTTP test server answering with JSON that
// counts the TCP connections its clients open.
type countingServer struct {
	*server
	opened atomic.Int64
	stop   func()
}

func startCountingServer() *countingServer {
	h := testservers.NewStreamableHandler(testservers.HTTPOptions{JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	cs := &countingServer{}
	ts := httptest.NewUnstartedServer(mux)
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			cs.opened.Add(1)
		}
	}
	ts.Start()
	// ownHTTP: anymcp with the HTTP client it makes by default.
	cs.server = &server{transport: "http-json", url: ts.URL + "/mcp", ownHTTP: true}
	cs.stop = func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	}
	return cs
}

// callersOf returns n calls for n concurrent callers to make on cn: echo,
// its answer checked. The floor's callers each get a buffer of their own;
// the floor decodes nothing, so its answer is checked only when
// checkFloor is set (for tests), by searching the body for the text.
func callersOf(cn conn, name string, n int, checkFloor bool) ([]func(context.Context) error, error) {
	calls := make([]func(context.Context) error, n)
	f, floor := cn.(*httpFloor)
	want := []byte(`"text":"` + echoText + `"`)
	for i := range calls {
		if !floor {
			calls[i] = func(ctx context.Context) error {
				text, err := cn.callTool(ctx, "echo", echoArgs)
				if err != nil {
					return fmt.Errorf("%s: tools/call: %w", name, err)
				}
				if text != echoText {
					return fmt.Errorf("%s: echo answered %q", name, text)
				}
				return nil
			}
			continue
		}
		call, err := f.caller("echo", echoArgs)
		if err != nil {
			return nil, err
		}
		calls[i] = func(ctx context.Context) error {
			body, err := call(ctx)
			if err == nil && checkFloor && !bytes.Contains(body, want) {
				err = fmt.Errorf("%s: echo answered %.300s", name, body)
			}
			return err
		}
	}
	return calls, nil
}

// runCallers makes total calls from len(calls) goroutines at once, each
// making its own, and returns the first error.
func runCallers(ctx context.Context, total int, calls []func(context.Context) error) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for _, call := range calls {
		wg.Go(func() {
			for next.Add(1) <= int64(total) {
				if err := call(ctx); err != nil {
					errOnce.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// BenchmarkConcurrentCalls measures 64 goroutines calling echo at once on
// one connected client, over Streamable HTTP answering with JSON. ns/op is
// the wall time per call (all callers together); calls/s is its inverse.
// tcp-conns is how many TCP connections the server saw opened in the
// whole run (connect included), new-conns/kcall how many of them were
// opened per thousand calls in the timed part.
func BenchmarkConcurrentCalls(b *testing.B) {
	b.Run("http-json", func(b *testing.B) {
		for _, c := range concurrentContenders {
			b.Run(c.name, func(b *testing.B) {
				srv := startCountingServer()
				defer srv.stop()
				cn := connect(b, srv.server, c)
				defer cn.close()
				calls, err := callersOf(cn, c.name, callers, false)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				if err := runCallers(ctx, callers, calls); err != nil { // warm up, outside the timing
					b.Fatal(err)
				}
				before := srv.opened.Load()
				b.ReportAllocs()
				b.ResetTimer()
				err = runCallers(ctx, b.N, calls)
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
				b.ReportMetric(float64(srv.opened.Load()), "tcp-conns")
				b.ReportMetric(float64(srv.opened.Load()-before)*1000/float64(b.N), "new-conns/kcall")
			})
		}
	})
}

// TestConcurrentCalls checks that every contender of
// BenchmarkConcurrentCalls answers 64 callers at once, each call right,
// and that the server counts the connections they use.
func TestConcurrentCalls(t *testing.T) {
	for _, c := range concurrentContenders {
		t.Run(c.name, func(t *testing.T) {
			srv := startCountingServer()
			defer srv.stop()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cn, err := dial(ctx, srv.server, c)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := cn.close(); err != nil {
					t.Errorf("close: %v", err)
				}
			}()
			calls, err := callersOf(cn, c.name, callers, true)
			if err != nil {
				t.Fatal(err)
			}
			if err := runCallers(ctx, 4*callers, calls); err != nil {
				t.Fatal(err)
			}
			if n := srv.opened.Load(); n < 1 {
				t.Errorf("the server counted %d connections", n)
			}
		})
	}
}
