package testservers

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// HTTPServer is a Streamable HTTP test server listening on 127.0.0.1.
type HTTPServer struct {
	// URL is the MCP endpoint, http://127.0.0.1:PORT/mcp.
	URL string

	ts   *httptest.Server
	h    *StreamableHandler
	once sync.Once
}

// StartStreamable starts a Streamable HTTP test server configured by
// opts, serving the MCP endpoint at /mcp (other paths answer 404).
func StartStreamable(opts HTTPOptions) *HTTPServer {
	h := NewStreamableHandler(opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	return &HTTPServer{URL: ts.URL + "/mcp", ts: ts, h: h}
}

// Server returns the core, for its Stats.
func (s *HTTPServer) Server() *Server { return s.h.srv }

// Handler returns the front-end, to end sessions or list them.
func (s *HTTPServer) Handler() *StreamableHandler { return s.h }

// closeGrace is how long Close lets sessions and handlers end by
// themselves before cutting the client connections.
const closeGrace = 500 * time.Millisecond

// Close ends the sessions and their open GET and SSE streams, then closes
// the listener and waits for the HTTP handlers. Connections whose client
// does not read are cut after a grace period, so Close does not hang. It
// is idempotent.
func (s *HTTPServer) Close() {
	s.once.Do(func() {
		within(s.h.Close, closeGrace, s.ts.CloseClientConnections)
		within(s.ts.Close, closeGrace, s.ts.CloseClientConnections)
	})
}

// within runs f; if it takes longer than d, it calls unstick and keeps
// waiting for f.
func within(f func(), d time.Duration, unstick func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		unstick()
		<-done
	}
}
