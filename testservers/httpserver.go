package testservers

import (
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/anymcp/anymcp/testservers/internal/serve"
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

// Close ends the sessions and their open GET and SSE streams, then closes
// the listener and waits for the HTTP handlers. Connections whose client
// does not read are cut after a grace period, so Close does not hang. It
// is idempotent.
func (s *HTTPServer) Close() {
	s.once.Do(func() {
		serve.Within(s.h.Close, serve.CloseGrace, s.ts.CloseClientConnections)
		serve.Within(s.ts.Close, serve.CloseGrace, s.ts.CloseClientConnections)
	})
}
