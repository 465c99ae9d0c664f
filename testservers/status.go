package testservers

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers/internal/serve"
)

// StatusOptions configure a StatusServer: a URL whose POST always fails
// with a chosen status, for the edges of a client's transport ladder.
type StatusOptions struct {
	// Path is the URL's path; /mcp when empty.
	Path string
	// PostStatus answers every POST to Path; 404 when 0.
	PostStatus int
	// PostHeader is added to every POST answer (for example
	// WWW-Authenticate with 401, Allow with 405, Retry-After with 503).
	PostHeader http.Header
	// PostBody is the body of every POST answer; none when empty.
	PostBody string
	// PostBodyFunc, when set, replaces PostBody: it builds the body from
	// the request POSTed, nil when the request body is not one JSON-RPC
	// message. See MethodNotFoundBody and UnsupportedVersionBody.
	PostBodyFunc func(req *jsonrpc.Message) []byte
	// PostContentType is the Content-Type of a POST answer with a body;
	// when empty, application/json for a body that is valid JSON, else
	// text/plain; charset=utf-8.
	PostContentType string
	// PostDelay holds every POST answer back this long, or until the
	// client goes away or the server closes (for timeout tests).
	PostDelay time.Duration
	// GETStatus answers every GET of Path; 404 when 0. Ignored with
	// GETServesLegacy.
	GETStatus int
	// GETServesLegacy makes a GET of Path open a working HTTP+SSE stream,
	// configured by Legacy, whose endpoint is /message: the shape of a
	// server that predates Streamable HTTP, found at the URL a client
	// first POSTs to.
	GETServesLegacy bool
	// Legacy configures the HTTP+SSE front-end of GETServesLegacy.
	Legacy LegacyOptions
	// OnRequest, when set, is called first with every HTTP request.
	OnRequest func(*http.Request)
}

// StatusServer is a test server on 127.0.0.1 whose POST always answers
// StatusOptions.PostStatus and whose GET answers GETStatus or serves
// HTTP+SSE. It counts every request it gets.
type StatusServer struct {
	// URL is http://127.0.0.1:PORT followed by StatusOptions.Path.
	URL string

	opts    StatusOptions
	ts      *httptest.Server
	legacy  *legacyHandler // GETServesLegacy only
	hits    serve.HitCounter
	closing chan struct{}
	once    sync.Once
}

// StartStatus starts a status server configured by opts.
func StartStatus(opts StatusOptions) *StatusServer {
	if opts.Path == "" {
		opts.Path = "/mcp"
	}
	if opts.PostStatus == 0 {
		opts.PostStatus = http.StatusNotFound
	}
	if opts.GETStatus == 0 {
		opts.GETStatus = http.StatusNotFound
	}
	s := &StatusServer{opts: opts, closing: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc(opts.Path, s.serve)
	if opts.GETServesLegacy {
		s.legacy = newLegacyHandler(opts.Legacy, "/message")
		mux.HandleFunc("/message", s.legacy.message)
	}
	s.ts = httptest.NewServer(s.hits.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opts.OnRequest != nil {
			opts.OnRequest(r)
		}
		mux.ServeHTTP(w, r)
	})))
	s.URL = s.ts.URL + opts.Path
	return s
}

func (s *StatusServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodGet:
		if s.legacy != nil {
			s.legacy.stream(w, r)
			return
		}
		httpError(w, s.opts.GETStatus, jsonrpc.CodeInvalidRequest, "GET answered "+strconv.Itoa(s.opts.GETStatus)+" by design")
	default:
		w.Header().Set("Allow", "GET, POST")
		httpError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "method not allowed")
	}
}

func (s *StatusServer) post(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if d := s.opts.PostDelay; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.closing:
		}
	}
	out := []byte(s.opts.PostBody)
	if s.opts.PostBodyFunc != nil {
		req, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			req = nil
		}
		out = s.opts.PostBodyFunc(req)
	}
	for k, vs := range s.opts.PostHeader {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if len(out) > 0 {
		ct := s.opts.PostContentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
			if json.Valid(out) {
				ct = "application/json"
			}
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	}
	w.WriteHeader(s.opts.PostStatus)
	_, _ = w.Write(out)
}

// Hits returns how many requests the server got, by "METHOD /path"
// (for example "POST /mcp"), including those to /message.
func (s *StatusServer) Hits() map[string]int { return s.hits.Snapshot() }

// Server returns the core behind GETServesLegacy, nil without it.
func (s *StatusServer) Server() *Server {
	if s.legacy == nil {
		return nil
	}
	return s.legacy.srv
}

// CrossOriginHits returns how many requests reached the other origin of
// an EndpointCrossOrigin legacy front-end (always 0 otherwise).
func (s *StatusServer) CrossOriginHits() int {
	if s.legacy == nil {
		return 0
	}
	return s.legacy.cross.count()
}

// KillStreams ends every open HTTP+SSE stream now, and their sessions.
func (s *StatusServer) KillStreams() {
	if s.legacy != nil {
		s.legacy.killStreams()
	}
}

// Close ends held POSTs and open streams, then closes the listener; it
// does not hang. It is idempotent.
func (s *StatusServer) Close() {
	s.once.Do(func() {
		close(s.closing)
		if s.legacy != nil {
			serve.Within(s.legacy.close, serve.CloseGrace, s.ts.CloseClientConnections)
		}
		serve.Within(s.ts.Close, serve.CloseGrace, s.ts.CloseClientConnections)
	})
}

// MethodNotFoundBody is a PostBodyFunc that answers like a server of a
// revision without initialize (2026-07-28 and later): a JSON-RPC error
// -32601 "Method not found: METHOD" to the request's id (null when the
// request did not decode).
func MethodNotFoundBody(req *jsonrpc.Message) []byte {
	resp := &jsonrpc.Message{Error: jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found")}
	if req != nil {
		resp.ID = req.ID
		if req.Method != "" {
			resp.Error.Message += ": " + req.Method
		}
	}
	b, _ := jsonrpc.Encode(resp)
	return b
}

// UnsupportedVersionBody returns a PostBodyFunc that answers like a
// server that speaks none of the client's revisions: a JSON-RPC error
// -32022 "Unsupported protocol version" whose data.supported lists
// supported, to the request's id (null when the request did not decode).
func UnsupportedVersionBody(supported ...string) func(req *jsonrpc.Message) []byte {
	if supported == nil {
		supported = []string{}
	}
	data, _ := json.Marshal(mcp.UnsupportedVersionData{Supported: supported})
	return func(req *jsonrpc.Message) []byte {
		e := jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version")
		e.Data = data
		resp := &jsonrpc.Message{Error: e}
		if req != nil {
			resp.ID = req.ID
		}
		b, _ := jsonrpc.Encode(resp)
		return b
	}
}
