package bridge

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/anymcp/anymcp/internal/servehttp"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Handler returns the bridge's HTTP faces: /mcp (Streamable HTTP, both
// eras: a request carrying revision 2026-07-28's _meta is served
// statelessly, initialize opens a session of the initialize era), and
// /sse with /message (HTTP+SSE, revision 2024-11-05).
func (b *Bridge) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", b.serveMCP)
	mux.HandleFunc("/sse", b.serveLegacyStream)
	mux.HandleFunc("/message", b.serveLegacyPost)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, why := b.guard(r); status != 0 {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="anymcp-bridge"`)
			}
			http.Error(w, why, status)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// readBody reads a request body of at most MaxBodyBytes; false when it
// answered the request already (too large, unreadable).
func (b *Bridge) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, b.o.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSONError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request body too large"))
			return nil, false
		}
		http.Error(w, "reading the request body failed", http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

func (b *Bridge) serveMCP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Session-Id") != "" {
		b.serveSession(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodDelete:
		// No session named: nothing to stream or end (a stateless
		// client listens with subscriptions/listen).
		w.Header().Set("Allow", "POST")
		http.Error(w, "a GET or DELETE needs an Mcp-Session-Id", http.StatusMethodNotAllowed)
		return
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, ok := b.readBody(w, r)
	if !ok {
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeParseError, "the body is not one JSON-RPC message"))
		return
	}
	if isStatelessRequest(r, msg) {
		b.serveStatelessHTTP(w, r, msg)
		return
	}
	if msg.Method == "initialize" {
		b.openSession(w, r, msg)
		return
	}
	if msg.Method == "ping" && msg.IsRequest() {
		writeJSON(w, http.StatusOK, pong(msg.ID)) // allowed before initialize
		return
	}
	writeJSONError(w, http.StatusBadRequest, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
		"no session: send initialize first, or a request of revision "+mcp.LatestStatelessVersion+" with its _meta"))
}

// isStatelessRequest tells a stateless request from one of the
// initialize era: its _meta names a revision, or its headers name a
// stateless one.
func isStatelessRequest(r *http.Request, msg *jsonrpc.Message) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &p) == nil {
		if _, ok := p.Meta[mcp.MetaProtocolVersion]; ok {
			return true
		}
	}
	v := strings.TrimSpace(r.Header.Get("Mcp-Protocol-Version"))
	return v != "" && mcp.EraOf(v) == mcp.EraStateless
}

// versionsAgree refuses a request whose MCP-Protocol-Version header names
// another revision than its _meta (-32020), before either is judged.
func versionsAgree(h http.Header, r *request) *jsonrpc.Error {
	hv, ok, _ := headerValue(h, "Mcp-Protocol-Version")
	var mv string
	if raw, has := r.meta[mcp.MetaProtocolVersion]; has && ok && json.Unmarshal(raw, &mv) == nil && mv != hv {
		return headerMismatch("MCP-Protocol-Version " + quote(hv) + " is not the body's " + quote(mv))
	}
	return nil
}

// statusOf is the HTTP status a stateless error goes out with.
func statusOf(e *jsonrpc.Error, local bool) int {
	switch {
	case e == nil:
		return http.StatusOK
	case e.Code == jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case e.Code == jsonrpc.CodeHeaderMismatch, e.Code == jsonrpc.CodeMissingClientCapability,
		e.Code == jsonrpc.CodeUnsupportedProtocolVersion, e.Code == jsonrpc.CodeParseError:
		return http.StatusBadRequest
	case local && (e.Code == jsonrpc.CodeInvalidParams || e.Code == jsonrpc.CodeInvalidRequest):
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func (b *Bridge) serveStatelessHTTP(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	if !msg.IsRequest() {
		// Notifications (cancellation is a closed stream in this
		// revision) and answers (the bridge asks nothing): accepted.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	req, perr := parseRequest(msg.Method, msg.Params)
	if perr == nil {
		perr = versionsAgree(r.Header, req)
	}
	if perr == nil {
		perr = checkMeta(req)
	}
	if perr == nil {
		perr = b.checkHeaders(r.Context(), r.Header, req)
	}
	if perr != nil {
		writeJSONError(w, statusOf(perr, true), msg.ID, perr)
		return
	}
	if msg.Method == "subscriptions/listen" {
		b.serveListen(w, r, msg)
		return
	}
	sw := newStreamWriter(w)
	defer sw.close()
	// Never merged with another request: see "Never twice" in dedupe.go.
	resp := b.serveStateless(r.Context(), msg, sw.notify)
	sw.finish(resp, statusOf(resp.Error, false))
}

func writeJSONError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	writeJSON(w, status, &jsonrpc.Message{ID: id, Error: e})
}

func writeJSON(w http.ResponseWriter, status int, m *jsonrpc.Message) {
	body, err := jsonrpc.Encode(m)
	if err != nil {
		http.Error(w, "encoding the answer failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// streamWriter answers one stateless request: as JSON, unless something
// related to it (progress) goes out first, which turns the answer into an
// SSE stream. notify may be called from any goroutine until close.
type streamWriter struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	sse    bool
	closed bool
	failed bool
}

func newStreamWriter(w http.ResponseWriter) *streamWriter { return &streamWriter{w: w} }

func (s *streamWriter) startSSE() {
	if !s.sse {
		s.sse = true
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
	}
}

func (s *streamWriter) event(m *jsonrpc.Message) {
	body, err := jsonrpc.Encode(m)
	if err != nil || s.failed {
		return
	}
	if err := servehttp.WriteEvent(s.w, "", "message", body); err != nil {
		s.failed = true
		return
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *streamWriter) notify(method string, params any) {
	raw, err := json.Marshal(params)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.startSSE()
	s.event(&jsonrpc.Message{Method: method, Params: raw})
}

func (s *streamWriter) finish(resp *jsonrpc.Message, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.sse {
		s.event(resp)
		return
	}
	writeJSON(s.w, status, resp)
}

func (s *streamWriter) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// serveListen holds a subscriptions/listen stream open: the acknowledgment
// first, then the notifications the filter asked for, until the client
// goes, falls too far behind, or the bridge closes.
func (b *Bridge) serveListen(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	var p mcp.ListenParams
	if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &p) != nil {
		writeJSONError(w, http.StatusBadRequest, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "subscriptions/listen: params do not decode"))
		return
	}
	id, _ := msg.ID.MarshalJSON()
	l, acked := b.listeners.open(r.Context(), id, p.Notifications)
	if l == nil {
		writeJSONError(w, http.StatusServiceUnavailable, msg.ID, jsonrpc.NewError(jsonrpc.CodeInternalError, "too many listen streams open"))
		return
	}
	defer b.listeners.close(l)
	if jerr := b.upstreamListening(r.Context()); jerr != nil {
		if r.Context().Err() == nil {
			writeJSONError(w, http.StatusBadGateway, msg.ID, jerr)
		}
		return
	}
	sw := newStreamWriter(w)
	defer sw.close()
	sw.mu.Lock()
	sw.startSSE()
	sw.event(ackOf(id, acked))
	sw.mu.Unlock()
	for {
		select {
		case m := <-l.q:
			sw.mu.Lock()
			sw.event(m)
			failed := sw.failed
			sw.mu.Unlock()
			if failed {
				return
			}
		case <-l.gone:
			if b.ctx.Err() != nil {
				sw.mu.Lock()
				sw.event(listenEnded(msg.ID, id))
				sw.mu.Unlock()
			}
			return
		case <-r.Context().Done():
			return
		case <-b.ctx.Done():
			l.cut()
		}
	}
}
