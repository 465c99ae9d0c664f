package testservers

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/anymcp/anymcp/testservers/internal/serve"
)

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
		serve.Within(c.ts.Close, serve.CloseGrace, c.ts.CloseClientConnections)
	}
}

// baseURL returns the origin's URL, "" for a nil crossOrigin.
func (c *crossOrigin) baseURL() string {
	if c == nil {
		return ""
	}
	return c.ts.URL
}
