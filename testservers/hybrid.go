package testservers

import (
	"net/http"
	"net/http/httptest"
	"sync"
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

// HybridServer serves one Streamable HTTP front-end and one HTTP+SSE
// front-end on one listener at 127.0.0.1, each with its own core (so a
// test can tell which one a client used).
type HybridServer struct {
	// URL is the Streamable HTTP endpoint, http://127.0.0.1:PORT/mcp.
	URL string
	// SSEURL is the HTTP+SSE stream's URL: http://127.0.0.1:PORT/sse, or
	// URL with SamePath.
	SSEURL string

	ts     *httptest.Server
	modern *StreamableHandler
	legacy *legacyHandler
	hits   hitCounter
	once   sync.Once
}

// StartHybrid starts a server hosting both transports, configured by opts.
func StartHybrid(opts HybridOptions) *HybridServer {
	s := &HybridServer{modern: NewStreamableHandler(opts.Streamable)}
	mux := http.NewServeMux()
	if opts.SamePath {
		s.legacy = newLegacyHandler(opts.Legacy, "/mcp/message")
		mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.Header.Get(HeaderSessionID) == "" {
				s.legacy.stream(w, r)
				return
			}
			s.modern.ServeHTTP(w, r)
		})
		mux.HandleFunc("/mcp/message", s.legacy.message)
	} else {
		s.legacy = newLegacyHandler(opts.Legacy, "/message")
		mux.Handle("/mcp", s.modern)
		mux.HandleFunc("/sse", s.legacy.stream)
		mux.HandleFunc("/message", s.legacy.message)
	}
	s.ts = httptest.NewServer(s.hits.wrap(mux))
	s.URL = s.ts.URL + "/mcp"
	s.SSEURL = s.ts.URL + "/sse"
	if opts.SamePath {
		s.SSEURL = s.URL
	}
	return s
}

// Streamable returns the core behind Streamable HTTP, for its Stats.
func (s *HybridServer) Streamable() *Server { return s.modern.srv }

// Legacy returns the core behind HTTP+SSE, for its Stats.
func (s *HybridServer) Legacy() *Server { return s.legacy.srv }

// StreamableHandler returns the Streamable HTTP front-end, to end its
// sessions or list them.
func (s *HybridServer) StreamableHandler() *StreamableHandler { return s.modern }

// Hits returns how many requests the server got, by "METHOD /path".
func (s *HybridServer) Hits() map[string]int { return s.hits.snapshot() }

// CrossOriginHits returns how many requests reached the other origin of
// an EndpointCrossOrigin legacy front-end (always 0 otherwise).
func (s *HybridServer) CrossOriginHits() int { return s.legacy.cross.count() }

// KillStreams ends every open HTTP+SSE stream now, and their sessions.
func (s *HybridServer) KillStreams() { s.legacy.killStreams() }

// Close ends both front-ends' sessions and streams, then closes the
// listener; like HTTPServer.Close, it does not hang. It is idempotent.
func (s *HybridServer) Close() {
	s.once.Do(func() {
		within(func() {
			s.legacy.close()
			s.modern.Close()
		}, closeGrace, s.ts.CloseClientConnections)
		within(s.ts.Close, closeGrace, s.ts.CloseClientConnections)
	})
}
