package testkit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Request is one request as a Server received it.
type Request struct {
	Method string
	Path   string // with the query, if any
	Header http.Header
	Body   string
	Remote string // the client's address: one per connection
}

// Handler answers one request; body is the request body, already read.
type Handler func(w http.ResponseWriter, r *http.Request, body []byte)

// Server is an httptest server on loopback that records every request
// before its Handler answers it.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Request
}

// NewServer starts a Server answering with h, closed when t ends.
func NewServer(t testing.TB, h Handler) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: string(body), Remote: r.RemoteAddr})
		s.mu.Unlock()
		h(w, r, body)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count returns how many requests with the HTTP method the server
// received.
func (s *Server) Count(method string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == method {
			n++
		}
	}
	return n
}
