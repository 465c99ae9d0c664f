package testservers

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
)

// The Start…TLS functions start the same servers as their plain
// counterparts over HTTPS, speaking HTTP/2 (negotiated by ALPN, as almost
// every real remote MCP server does), on 127.0.0.1 with the certificate of
// net/http/httptest. Each server's Client trusts that certificate and
// speaks HTTP/2 to it; give it to the client under test.

// startTLS starts h on 127.0.0.1 over HTTPS with HTTP/2. The server's log
// leaves out the handshakes that failed: a test of a client that does not
// trust the certificate makes them on purpose.
func startTLS(h http.Handler) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	ts.EnableHTTP2 = true
	ts.Config.ErrorLog = log.New(noHandshakeErrors{os.Stderr}, "", log.LstdFlags)
	ts.StartTLS()
	return ts
}

// noHandshakeErrors writes the lines of http.Server's log but those of
// failed TLS handshakes.
type noHandshakeErrors struct{ w io.Writer }

func (n noHandshakeErrors) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("http: TLS handshake error")) {
		return len(p), nil
	}
	return n.w.Write(p)
}

// StartStreamableTLS is StartStreamable over HTTPS and HTTP/2: the MCP
// endpoint is https://127.0.0.1:PORT/mcp.
func StartStreamableTLS(opts HTTPOptions) *HTTPServer {
	h := NewStreamableHandler(opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := startTLS(mux)
	return &HTTPServer{URL: ts.URL + "/mcp", ts: ts, h: h}
}

// Client returns an HTTP client for the server: for one started by
// StartStreamableTLS, one that trusts its certificate and speaks HTTP/2.
// Its Transport is the server's own: closing the server closes its idle
// connections.
func (s *HTTPServer) Client() *http.Client { return s.ts.Client() }

// CloseClientConnections cuts every connection to the server at once, as
// a network failure or a server crash does: every stream on them ends
// without a proper close (on HTTP/2, every stream of the connection).
func (s *HTTPServer) CloseClientConnections() { s.ts.CloseClientConnections() }

// StartLegacyTLS is StartLegacy over HTTPS and HTTP/2: the SSE URL is
// https://127.0.0.1:PORT/sse, and an EndpointAbsolute endpoint is an
// https URL too. (EndpointCrossOrigin's other origin stays plain http.)
func StartLegacyTLS(opts LegacyOptions) *LegacyServer {
	s := &LegacyServer{h: newLegacyHandler(opts, "/message")}
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", s.h.stream)
	mux.HandleFunc("/message", s.h.message)
	s.ts = startTLS(s.hits.Wrap(mux))
	s.URL = s.ts.URL + "/sse"
	return s
}

// Client returns an HTTP client for the server: for one started by
// StartLegacyTLS, one that trusts its certificate and speaks HTTP/2.
func (s *LegacyServer) Client() *http.Client { return s.ts.Client() }
