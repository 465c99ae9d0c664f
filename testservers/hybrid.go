package testservers

import (
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/anymcp/anymcp/testservers/internal/serve"
)

// HybridOptions configure a server hosting both HTTP transports, as many
// real servers do during the migration from HTTP+SSE.
type HybridOptions struct {
	// Streamable configures the Streamable HTTP front-end, at /mcp.
	Streamable HTTPOptions
	// Legacy configures the HTTP+SSE front-end, at /sse and /message.
	Legacy LegacyOptions
	// SamePath hosts HTTP+SSE on /mcp as well: a GET of /mcp without an
	// Mcp-Session-Id header opens a legacy stream, whose endpoint is
	// /mcp/message; everything else on /mcp is Streamable HTTP. /sse and
	// /message are then not served.
	SamePath bool
}

// HybridHandler serves both HTTP transports as one http.Handler, each
// with its own core: Streamable HTTP at /mcp, HTTP+SSE at /sse and
// /message (or, with SamePath, both at /mcp). A server that puts
// something in front of them, such as an authorization check, mounts it.
type HybridHandler struct {
	streamable *StreamableHandler
	sse        *legacyHandler
	mux        *http.ServeMux
	once       sync.Once
}

// NewHybridHandler returns a handler of both transports, configured by
// opts. Close ends its sessions and streams.
func NewHybridHandler(opts HybridOptions) *HybridHandler {
	h := &HybridHandler{streamable: NewStreamableHandler(opts.Streamable), mux: http.NewServeMux()}
	if opts.SamePath {
		h.sse = newLegacyHandler(opts.Legacy, "/mcp/message")
		h.mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.Header.Get(HeaderSessionID) == "" {
				h.sse.stream(w, r)
				return
			}
			h.streamable.ServeHTTP(w, r)
		})
		h.mux.HandleFunc("/mcp/message", h.sse.message)
		return h
	}
	h.sse = newLegacyHandler(opts.Legacy, "/message")
	h.mux.Handle("/mcp", h.streamable)
	h.mux.HandleFunc("/sse", h.sse.stream)
	h.mux.HandleFunc("/message", h.sse.message)
	return h
}

// ServeHTTP serves the request with the front-end of its path.
func (h *HybridHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mux.ServeHTTP(w, r)
}

// Close ends both front-ends' sessions and streams; after it they answer
// 503. It is idempotent. It waits for the handlers of open streams, so a
// server whose clients may not read should cut their connections if it
// takes long, as HybridServer.Close does.
func (h *HybridHandler) Close() {
	h.once.Do(func() {
		h.sse.close()
		h.streamable.Close()
	})
}

// HybridServer serves a HybridHandler on one listener at 127.0.0.1: each
// front-end has its own core, so a test can tell which one a client used.
type HybridServer struct {
	// URL is the Streamable HTTP endpoint, http://127.0.0.1:PORT/mcp.
	URL string
	// SSEURL is the HTTP+SSE stream's URL: http://127.0.0.1:PORT/sse, or
	// URL with SamePath.
	SSEURL string

	ts   *httptest.Server
	h    *HybridHandler
	hits serve.HitCounter
	once sync.Once
}

// StartHybrid starts a server hosting both transports, configured by opts.
func StartHybrid(opts HybridOptions) *HybridServer {
	s := &HybridServer{h: NewHybridHandler(opts)}
	s.ts = httptest.NewServer(s.hits.Wrap(s.h))
	s.URL = s.ts.URL + "/mcp"
	s.SSEURL = s.ts.URL + "/sse"
	if opts.SamePath {
		s.SSEURL = s.URL
	}
	return s
}

// Streamable returns the core behind Streamable HTTP, for its Stats.
func (s *HybridServer) Streamable() *Server { return s.h.streamable.srv }

// Legacy returns the core behind HTTP+SSE, for its Stats.
func (s *HybridServer) Legacy() *Server { return s.h.sse.srv }

// StreamableHandler returns the Streamable HTTP front-end, to end its
// sessions or list them.
func (s *HybridServer) StreamableHandler() *StreamableHandler { return s.h.streamable }

// Hits returns how many requests the server got, by "METHOD /path".
func (s *HybridServer) Hits() map[string]int { return s.hits.Snapshot() }

// CrossOriginHits returns how many requests reached the other origin of
// an EndpointCrossOrigin legacy front-end (always 0 otherwise).
func (s *HybridServer) CrossOriginHits() int { return s.h.sse.cross.count() }

// KillStreams ends every open HTTP+SSE stream now, and their sessions.
func (s *HybridServer) KillStreams() { s.h.sse.killStreams() }

// Close ends both front-ends' sessions and streams, then closes the
// listener; like HTTPServer.Close, it does not hang. It is idempotent.
func (s *HybridServer) Close() {
	s.once.Do(func() {
		serve.Within(s.h.Close, serve.CloseGrace, s.ts.CloseClientConnections)
		serve.Within(s.ts.Close, serve.CloseGrace, s.ts.CloseClientConnections)
	})
}
