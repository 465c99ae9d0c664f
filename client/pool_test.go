package client_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers"
)

// A busy Conn whose host gave no HTTP client keeps its connections: 32
// calls in flight at once, twice over, open about 32 TCP connections, not
// a fresh set for each wave (http.DefaultTransport keeps 2 idle per host).
func TestSharedPoolKeepsConnections(t *testing.T) {
	h := testservers.NewStreamableHandler(testservers.HTTPOptions{JSONResponse: true, NoGETStream: true})
	var conns atomic.Int32
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	defer h.Close()
	c := dialT(t, client.URL(ts.URL))
	const callers = 32
	for wave := range 3 {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, err := c.CallTool(ctxT(t), "slow", map[string]any{"steps": 1, "delayMs": 20}); err != nil {
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if n := conns.Load(); n > callers+8 {
			t.Fatalf("after wave %d: %d connections opened for %d callers at a time", wave+1, n, callers)
		}
	}
}
