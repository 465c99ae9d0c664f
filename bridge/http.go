package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/anymcp/anymcp/client"
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
	msg, err := decodeBody(body)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeParseError, "the body is not one JSON-RPC message"))
		return
	}
	req, perr := parseRequest(msg.Method, msg.Params) // once, for every use below
	stateless := isStatelessRequest(r, msg, req)
	ctx, ob := r.Context(), (*observation)(nil)
	if msg.IsRequest() {
		era := mcp.EraInitialize
		if stateless {
			era = mcp.EraStateless
		}
		ctx, ob = b.observe(ctx, msg, face{transport: client.TransportStreamableHTTP, era: era, httpTrace: b.httpTrace(r.Header)})
	}
	if stateless {
		b.serveStatelessHTTP(ctx, w, r, msg, req, perr, ob)
		return
	}
	if msg.Method == "initialize" {
		b.openSession(ctx, w, msg, ob)
		return
	}
	if msg.Method == "ping" && msg.IsRequest() {
		answerJSON(w, http.StatusOK, pong(msg.ID), ob) // allowed before initialize
		return
	}
	answerJSON(w, http.StatusBadRequest, &jsonrpc.Message{ID: msg.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
		"no session: send initialize first, or a request of revision "+mcp.LatestStatelessVersion+" with its _meta")}, ob)
}

// answerJSON writes m, the answer to a request, as JSON, once ob (the
// request's observation) has ended with it.
func answerJSON(w http.ResponseWriter, status int, m *jsonrpc.Message, ob *observation) {
	ob.end(m)
	writeJSON(w, status, m)
}

// isStatelessRequest tells a stateless request from one of the
// initialize era: its _meta names a revision, or its headers name a
// stateless one. req is msg's params parsed (nil: they did not parse).
func isStatelessRequest(r *http.Request, msg *jsonrpc.Message, req *request) bool {
	if req != nil && !req.foldedMeta {
		if _, ok := req.meta[mcp.MetaProtocolVersion]; ok {
			return true
		}
	} else if len(msg.Params) > 0 {
		// A _meta whose key differs in case, or params that do not parse:
		// read as a struct reads them.
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			if _, ok := p.Meta[mcp.MetaProtocolVersion]; ok {
				return true
			}
		}
	}
	v := strings.TrimSpace(r.Header.Get("Mcp-Protocol-Version"))
	return v != "" && mcp.EraOf(v) == mcp.EraStateless
}

// versionsAgree refuses a request whose MCP-Protocol-Version header names
// another revision than its _meta (-32020), before either is judged.
func versionsAgree(h http.Header, r *request) *jsonrpc.Error {
	hv, ok, _ := headerValue(h, "Mcp-Protocol-Version")
	if ok && hv == mcp.LatestStatelessVersion && string(r.meta[mcp.MetaProtocolVersion]) == `"`+mcp.LatestStatelessVersion+`"` {
		return nil // the common case, decided without decoding
	}
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

// serveStatelessHTTP serves a stateless message in ctx (the request's,
// as the Observer made it); ob follows it. req and perr are what
// parseRequest made of it.
func (b *Bridge) serveStatelessHTTP(ctx context.Context, w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, req *request, perr *jsonrpc.Error, ob *observation) {
	if !msg.IsRequest() {
		// Notifications (cancellation is a closed stream in this
		// revision) and answers (the bridge asks nothing): accepted.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if perr == nil {
		perr = versionsAgree(r.Header, req)
	}
	if perr == nil {
		perr = checkMeta(req)
	}
	if perr == nil {
		perr = b.checkHeaders(ctx, r.Header, req)
	}
	if perr != nil {
		answerJSON(w, statusOf(perr, true), &jsonrpc.Message{ID: msg.ID, Error: perr}, ob)
		return
	}
	if msg.Method == "subscriptions/listen" {
		b.serveListen(ctx, w, msg, ob)
		return
	}
	sw := newStreamWriter(w)
	defer sw.close()
	// Never merged with another request: see "Never twice" in dedupe.go.
	resp := b.serveStateless(ctx, msg, req, sw.notify)
	ob.end(resp)
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
// serveListen ends ob when the stream ends: with the error it was
// refused with, or with no result.
func (b *Bridge) serveListen(ctx context.Context, w http.ResponseWriter, msg *jsonrpc.Message, ob *observation) {
	var p mcp.ListenParams
	if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &p) != nil {
		answerJSON(w, http.StatusBadRequest, &jsonrpc.Message{ID: msg.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidParams, "subscriptions/listen: params do not decode")}, ob)
		return
	}
	id, _ := msg.ID.MarshalJSON()
	l, acked := b.listeners.open(ctx, id, p.Notifications)
	if l == nil {
		answerJSON(w, http.StatusServiceUnavailable, &jsonrpc.Message{ID: msg.ID, Error: jsonrpc.NewError(jsonrpc.CodeInternalError, "too many listen streams open")}, ob)
		return
	}
	defer b.listeners.close(l)
	if jerr := b.upstreamListening(ctx); jerr != nil {
		if ctx.Err() == nil {
			answerJSON(w, http.StatusBadGateway, &jsonrpc.Message{ID: msg.ID, Error: jerr}, ob)
		} else {
			ob.end(nil)
		}
		return
	}
	if ob != nil {
		defer ob.end(&jsonrpc.Message{ID: msg.ID})
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
		case <-ctx.Done():
			return
		case <-b.ctx.Done():
			l.cut()
		}
	}
}
