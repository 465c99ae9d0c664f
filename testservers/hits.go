package testservers

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
)

// hitCounter counts HTTP requests by "METHOD /path".
type hitCounter struct {
	mu   sync.Mutex
	hits map[string]int
}

// wrap returns next behind a counter of its requests.
func (c *hitCounter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		if c.hits == nil {
			c.hits = make(map[string]int)
		}
		c.hits[r.Method+" "+r.URL.Path]++
		c.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// snapshot returns a copy of the counts.
func (c *hitCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.hits)
	if out == nil {
		out = make(map[string]int)
	}
	return out
}

// crossOrigin is a second loopback server, on another origin than the
// test server, that counts every request it gets and refuses it with 403.
// A legacy endpoint that points there lets a test prove a client sent it
// nothing.
type crossOrigin struct {
	ts   *httptest.Server
	hits atomic.Int64
}

func startCrossOrigin() *crossOrigin {
	c := &crossOrigin{}
	c.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		http.Error(w, "cross-origin endpoint: nothing may be sent here", http.StatusForbidden)
	}))
	return c
}

// count returns the requests received; 0 for a nil crossOrigin.
func (c *crossOrigin) count() int {
	if c == nil {
		return 0
	}
	return int(c.hits.Load())
}

func (c *crossOrigin) close() {
	if c != nil {
		within(c.ts.Close, closeGrace, c.ts.CloseClientConnections)
	}
}

// baseURL returns the origin's URL, "" for a nil crossOrigin.
func (c *crossOrigin) baseURL() string {
	if c == nil {
		return ""
	}
	return c.ts.URL
}
