package testservers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/internal/servehttp"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// HTTPOptions configure a Streamable HTTP front-end.
type HTTPOptions struct {
	Options
	// JSONResponse answers requests with one application/json body
	// instead of an SSE stream. Messages the server sends while handling
	// a request then go on the GET stream, if one is open; a server
	// request with no GET stream fails the tool that needed it. A
	// tasks/get is always answered with a JSON body: a client that polls
	// wants no stream.
	JSONResponse bool
	// Stateless issues no Mcp-Session-Id and requires none: every
	// request goes to one shared core session, as with a stateless
	// server. DELETE is then refused with 405.
	Stateless bool
	// NoGETStream answers GET with GETStatus (405 when 0) instead of
	// opening the standalone SSE stream.
	NoGETStream bool
	// GETStatus is the status of GET when NoGETStream is set.
	GETStatus int
	// Priming gives every SSE event an id (unique within the session) and
	// starts every SSE stream with a priming event: an id and empty data.
	// The session then keeps the events of each stream (the answer to a
	// POST, and the GET stream) so that a GET carrying Last-Event-ID
	// resumes that stream: it replays the events after that id, then
	// goes on live; a POST stream ends after its response. A stream
	// whose client broke away goes on meanwhile. See eventStream for the
	// bounds of what is kept.
	Priming bool
	// Faults are the failures the front-end injects; none when zero.
	Faults Faults
	// OnRequest, when set, is called first with every HTTP request.
	OnRequest func(*http.Request)
	// KeepAlive, when > 0, writes an SSE comment line (":") this often on
	// every subscriptions/listen stream (Options.Eras StatelessOnly or
	// DualEra), as 2026-07-28 encourages for long-lived streams.
	KeepAlive time.Duration
}

// Header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
)

// CodeSessionNotFound is the JSON-RPC error code in the body of a 404 for
// an unknown session (the code other servers commonly use).
const CodeSessionNotFound = -32001

// maxBody bounds a POST body.
const maxBody = 256 << 20

// StreamableHandler serves the core over the Streamable HTTP transport of
// 2025-11-25 at whatever path it is mounted on. Close ends its sessions
// and streams.
type StreamableHandler struct {
	opts    HTTPOptions
	srv     *Server
	plan    *faultPlan
	closing chan struct{}
	once    sync.Once

	mu        sync.Mutex
	closed    bool
	sessions  *servehttp.Table[*httpSession] // the server core's; no idle expiry: sessions end by ExpireSession or Close
	expired   map[string]expiredSession      // expired with LetRun, kept to resume their streams
	shared    *httpSession                   // Stateless
	stateless *httpSession                   // the channel of stateless requests (Eras StatelessOnly, DualEra): no session
	bg        sync.WaitGroup                 // goroutines ending sessions expired with LetRun
}

// NewStreamableHandler returns a handler serving a new core configured by
// opts.Options.
func NewStreamableHandler(opts HTTPOptions) *StreamableHandler {
	h := &StreamableHandler{
		opts:     opts,
		srv:      NewServer(opts.Options),
		plan:     newFaultPlan(opts.Faults),
		closing:  make(chan struct{}),
		sessions: servehttp.NewTable[*httpSession](maxHTTPSessions, nil),
		expired:  make(map[string]expiredSession),
	}
	if opts.Stateless {
		h.shared = h.newHTTPSession("")
	}
	if h.srv.opts.Eras.stateless() {
		h.stateless = h.newStatelessChannel()
	}
	return h
}

// newStatelessChannel returns the core channel of stateless requests: a core
// session of no client, registered nowhere.
func (h *StreamableHandler) newStatelessChannel() *httpSession {
	hs := &httpSession{h: h, ended: make(chan struct{}), byID: make(map[string]*eventStream)}
	hs.core = h.srv.newSession(hs, false)
	return hs
}

// Server returns the core, for its Stats.
func (h *StreamableHandler) Server() *Server { return h.srv }

// SessionIDs returns the ids of the sessions open now (none when Stateless).
func (h *StreamableHandler) SessionIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := h.sessions.IDs()
	slices.Sort(ids)
	return ids
}

// EndSession is ExpireSession.
func (h *StreamableHandler) EndSession(id string) bool { return h.ExpireSession(id) }

// Close ends every session and stream and makes the handler answer 503.
// Subscriptions (subscriptions/listen) end first, gracefully, with their
// result, then the tasks (EndTasks). It returns once the sessions'
// request goroutines and the tasks' executions are gone. It is
// idempotent.
func (h *StreamableHandler) Close() {
	h.once.Do(func() {
		h.srv.EndSubscriptions()
		h.srv.EndTasks()
		h.mu.Lock()
		h.closed = true
		close(h.closing)
		all := h.sessions.All()
		if h.shared != nil {
			all = append(all, h.shared)
		}
		if h.stateless != nil {
			all = append(all, h.stateless)
		}
		for _, e := range h.expired {
			all = append(all, e.hs)
		}
		h.mu.Unlock()
		for _, hs := range all {
			h.endSession(hs)
		}
		h.bg.Wait()
	})
}

// httpSession is one core session and its event streams.
type httpSession struct {
	id      string // "" when Stateless
	h       *StreamableHandler
	core    *Session
	ended   chan struct{}
	endOnce sync.Once
	streams atomic.Int64 // numbers the session's streams, for event ids
	// admit is held for reading while a POST hands its messages to the
	// core, and for writing while the session is taken off the handler.
	admit sync.RWMutex

	mu            sync.Mutex
	get           *eventStream            // the standalone stream, once a GET opened it
	byID          map[string]*eventStream // POST streams, running or kept for a resumption
	retained      []retainedStream        // finished POST streams kept, oldest first
	retainedBytes int
}

func (h *StreamableHandler) newHTTPSession(id string) *httpSession {
	hs := &httpSession{id: id, h: h, ended: make(chan struct{}), byID: make(map[string]*eventStream)}
	hs.core = h.srv.NewSession(hs)
	return hs
}

// getStream returns the session's GET stream, made on first use.
func (hs *httpSession) getStream() *eventStream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.get == nil {
		hs.get = hs.newEventStream(hs.h.opts.Priming, true)
	}
	return hs.get
}

// getOpen reports whether a connection carries the GET stream now.
func (hs *httpSession) getOpen() bool {
	hs.mu.Lock()
	get := hs.get
	hs.mu.Unlock()
	return get != nil && get.attached()
}

// maxHTTPSessions bounds the sessions one handler keeps open; past it an
// initialize is refused (503).
const maxHTTPSessions = 4096

// createSession registers a new session with a fresh id, or returns nil
// once the handler is closed or holds maxHTTPSessions.
func (h *StreamableHandler) createSession() *httpSession {
	hs := h.newHTTPSession(servehttp.NewSessionID())
	h.mu.Lock()
	if h.closed || !h.sessions.Add(hs.id, hs) {
		h.mu.Unlock()
		hs.core.Close()
		return nil
	}
	h.mu.Unlock()
	return hs
}

// unregister makes the session unknown to later requests (404) and to
// the core's open sessions, without waiting for anything: endSession
// finishes the job.
func (h *StreamableHandler) unregister(hs *httpSession) {
	hs.admit.Lock()
	h.mu.Lock()
	h.sessions.RemoveIf(hs.id, func(x *httpSession) bool { return x == hs })
	h.mu.Unlock()
	hs.core.stop()
	hs.admit.Unlock()
}

// admitted reports whether the session still takes requests.
func (h *StreamableHandler) admitted(hs *httpSession) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.opts.Stateless {
		return h.shared == hs && !h.closed
	}
	cur, _ := h.sessions.Get(hs.id)
	return cur == hs
}

// endSession ends the session: its handlers return, its requests are
// cancelled. It returns once that is done, whoever called first, and
// reports whether this call did it.
func (h *StreamableHandler) endSession(hs *httpSession) bool {
	h.unregister(hs)
	first := false
	hs.endOnce.Do(func() {
		first = true
		close(hs.ended)
		hs.core.Close()
		h.plan.forget(hs)
	})
	return first
}

// Send puts m on the stream of the POST it belongs to, else on the GET
// stream; ErrNoChannel when neither is open.
func (hs *httpSession) Send(ctx context.Context, m *jsonrpc.Message) error {
	if ex := exchangeFrom(ctx); ex != nil && ex.send(m) {
		return nil
	}
	hs.mu.Lock()
	get := hs.get
	hs.mu.Unlock()
	if get == nil {
		return ErrNoChannel
	}
	if err := get.write(m); err != nil {
		return errors.Join(ErrNoChannel, err)
	}
	return nil
}

// Reply ends a request of the POST exchange it belongs to.
func (hs *httpSession) Reply(ctx context.Context, _ jsonrpc.ID, resp *jsonrpc.Message) error {
	ex := exchangeFrom(ctx)
	if ex == nil {
		return ErrNoChannel
	}
	ex.reply(resp)
	return nil
}

// ServeHTTP serves POST, GET and DELETE on the MCP endpoint.
func (h *StreamableHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.OnRequest != nil {
		h.opts.OnRequest(r)
	}
	select {
	case <-h.closing:
		httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "server closing")
		return
	default:
	}
	if !originAllowed(r) {
		httpError(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "origin not allowed")
		return
	}
	if h.srv.opts.Eras == StatelessOnly && r.Method != http.MethodPost {
		// 2026-07-28 has no GET stream and no sessions to DELETE.
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "only POST: this server speaks 2026-07-28, without GET stream or sessions")
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "method not allowed")
	}
}

func (h *StreamableHandler) post(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest,
			"Accept must list both application/json and text/event-stream")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, jsonrpc.CodeInvalidRequest, "Content-Type must be application/json")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		status := http.StatusBadRequest
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			status = http.StatusRequestEntityTooLarge
		}
		httpError(w, status, jsonrpc.CodeInvalidRequest, "reading body: "+err.Error())
		return
	}
	msgs, err := jsonrpc.Decode(body)
	if err != nil {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeParseError, err.Error())
		return
	}
	batch := bytes.HasPrefix(bytes.TrimSpace(body), []byte("["))
	if h.postEra(r, msgs, batch) == eraStateless {
		h.postStateless(w, r, msgs, batch)
		return
	}
	var methods []string
	initialize := false
	for _, m := range msgs {
		if m.IsRequest() {
			methods = append(methods, m.Method)
			initialize = initialize || m.Method == "initialize"
		}
	}
	requests := len(methods)
	if initialize && batch {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "initialize must not be part of a batch")
		return
	}

	newSession := initialize && !h.opts.Stateless
	var hs *httpSession
	if !newSession {
		var ok bool
		if hs, ok = h.session(w, r); !ok {
			return
		}
		if batch && hs.core.ProtocolVersion() != mcp.Version20250326 {
			httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported in this protocol revision")
			return
		}
	}
	var drop *FaultRule // the first drop-stream fault that fired
	if requests > 0 {
		var answered bool
		if drop, answered = h.inject(w, hs, methods); answered {
			return
		}
	}
	if newSession {
		if hs = h.createSession(); hs == nil {
			httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "server closing, or too many sessions")
			return
		}
		w.Header().Set(HeaderSessionID, hs.id)
	}
	// The messages reach the core only if the session is still open: one
	// that expired since the lookup answers 404, and one that expires
	// later sees them.
	hs.admit.RLock()
	if !h.admitted(hs) {
		hs.admit.RUnlock()
		httpError(w, http.StatusNotFound, CodeSessionNotFound, "session not found")
		return
	}

	if requests == 0 {
		for _, m := range msgs {
			hs.core.Handle(r.Context(), m)
		}
		hs.admit.RUnlock()
		w.WriteHeader(http.StatusAccepted)
		return
	}

	var (
		stream   *eventStream
		conn     *sseConn
		connDone <-chan struct{}
	)
	if !h.opts.JSONResponse && !pollOnly(methods, batch) {
		ids := h.opts.Priming && (drop == nil || drop.Fault != FaultDropStreamNoIDs)
		stream = hs.newEventStream(ids, false)
		hs.register(stream)
		conn = newSSEConn(w, "")
		defer conn.abortIfDropped()
		connDone = conn.done
		stream.attach(conn, -1, false, drop)
	}
	ex := newExchange(requests, stream)
	if newSession {
		ex.beforeReply = func(resp *jsonrpc.Message) {
			if resp == nil || resp.Error != nil {
				w.Header().Del(HeaderSessionID)
				h.unregister(hs)
			}
		}
	}
	ctx := context.WithValue(r.Context(), exchangeKey{}, ex)
	for _, m := range msgs {
		hs.core.Handle(ctx, m)
	}
	hs.admit.RUnlock()
	if conn != nil && !initialize {
		// The header goes out once the core has the requests. That of an
		// initialize answer waits for the answer: a failed initialize
		// gets no session id.
		conn.start()
	}
	select {
	case <-ex.done:
	case <-connDone:
	case <-r.Context().Done():
	case <-hs.ended:
	case <-h.closing:
	}
	if stream != nil && stream.ids && !initialize && !isClosed(ex.done) && !isClosed(hs.ended) && !isClosed(h.closing) {
		// The connection is gone, not the stream: its requests go on,
		// and a GET with Last-Event-ID resumes it.
		if stream.release(conn) { // finished meanwhile, and delivered
			hs.forget(stream)
		}
		return
	}
	responses, complete, failed := ex.abandon()
	if newSession && (failed || !complete) {
		h.endSession(hs) // a failed initialize leaves no session behind
	}
	if stream != nil {
		if stream.release(conn) || !stream.ids {
			hs.forget(stream)
		}
		return
	}
	if r.Context().Err() != nil {
		return
	}
	switch {
	case !complete && ex.ran():
		// A request began to run: a 404 or 503 would say it did not. Its
		// answer is lost with the connection, as when a server fails.
		panic(http.ErrAbortHandler)
	case !complete && isClosed(hs.ended):
		httpError(w, http.StatusNotFound, CodeSessionNotFound, "session ended")
	case !complete:
		httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "server closing")
	case drop != nil:
		// The requests ran; their answer is lost with the connection.
		h.srv.fault(drop.Fault)
		panic(http.ErrAbortHandler)
	case len(responses) == 0:
		w.WriteHeader(http.StatusNoContent) // every request was cancelled
	default:
		writeJSONResponses(w, responses, batch)
	}
}

// pollOnly reports whether a POST is one tasks/get: it is answered with
// a JSON body even where requests get SSE streams, as the tasks of
// 2025-11-25 ask (a client that polls wants no stream).
func pollOnly(methods []string, batch bool) bool {
	return !batch && len(methods) == 1 && methods[0] == "tasks/get"
}

func writeJSONResponses(w http.ResponseWriter, responses []*jsonrpc.Message, batch bool) {
	var out []byte
	var err error
	if batch {
		out = append(out, '[')
		for i, m := range responses {
			if i > 0 {
				out = append(out, ',')
			}
			if out, err = jsonrpc.Append(out, m); err != nil {
				break
			}
		}
		out = append(out, ']')
	} else {
		out, err = jsonrpc.Encode(responses[0])
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

func (h *StreamableHandler) get(w http.ResponseWriter, r *http.Request) {
	if h.opts.NoGETStream {
		status := h.opts.GETStatus
		if status == 0 {
			status = http.StatusMethodNotAllowed
		}
		if status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", "POST, DELETE")
		}
		httpError(w, status, jsonrpc.CodeInvalidRequest, "no GET stream on this server")
		return
	}
	if !accepts(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest, "Accept must list text/event-stream")
		return
	}
	last := r.Header.Get("Last-Event-ID")
	resuming := last != "" && h.opts.Priming
	hs, ok := h.lookup(w, r, resuming)
	if !ok {
		return
	}
	if resuming {
		h.resume(w, r, hs, last)
		return
	}
	gs := hs.getStream()
	if !gs.attached() {
		var drop *FaultRule
		if f, ok := first(h.plan.draw(occasion{get: true, session: hs}), FaultDropGET); ok {
			drop = &f
		}
		conn := newSSEConn(w, "")
		defer conn.abortIfDropped()
		if _, ok := gs.attach(conn, -1, true, drop); ok {
			h.serve(r, hs, gs, conn)
			return
		}
	}
	httpError(w, http.StatusConflict, jsonrpc.CodeInvalidRequest, "a GET stream is already open for this session")
}

func (h *StreamableHandler) delete(w http.ResponseWriter, r *http.Request) {
	if h.opts.Stateless {
		w.Header().Set("Allow", "GET, POST")
		httpError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "no sessions on this server")
		return
	}
	hs, ok := h.session(w, r)
	if !ok {
		return
	}
	h.endSession(hs)
	w.WriteHeader(http.StatusOK)
}

// session finds the session a request belongs to and checks its
// MCP-Protocol-Version header; on failure it has answered the request.
func (h *StreamableHandler) session(w http.ResponseWriter, r *http.Request) (*httpSession, bool) {
	return h.lookup(w, r, false)
}

// lookup is session, also finding, when resuming, the sessions expired
// with LetRun whose streams can still be resumed.
func (h *StreamableHandler) lookup(w http.ResponseWriter, r *http.Request, resuming bool) (*httpSession, bool) {
	h.mu.Lock()
	hs := h.shared
	h.mu.Unlock()
	if !h.opts.Stateless {
		id := r.Header.Get(HeaderSessionID)
		if id == "" {
			httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id header is required")
			return nil, false
		}
		if resuming {
			hs = h.resumable(id)
		} else {
			h.mu.Lock()
			hs, _ = h.sessions.Get(id)
			h.mu.Unlock()
		}
		if hs == nil {
			httpError(w, http.StatusNotFound, CodeSessionNotFound, "session not found")
			return nil, false
		}
	}
	if v := r.Header.Get(HeaderProtocolVersion); v != "" {
		if !slices.Contains(h.srv.opts.Versions, v) {
			httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "unsupported MCP-Protocol-Version: "+v)
			return nil, false
		}
		if negotiated := hs.core.ProtocolVersion(); !h.opts.Stateless && negotiated != "" && negotiated != v {
			httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
				"MCP-Protocol-Version "+v+" differs from the negotiated "+negotiated)
			return nil, false
		}
	}
	return hs, true
}

// httpError answers with status and a JSON-RPC error response without id.
func httpError(w http.ResponseWriter, status int, code int64, msg string) {
	body, _ := jsonrpc.Encode(&jsonrpc.Message{Error: jsonrpc.NewError(code, msg)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// accepts reports whether the Accept header lists mediaType (or a
// wildcard that covers it).
func accepts(r *http.Request, mediaType string) bool {
	major, _, _ := strings.Cut(mediaType, "/")
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			if mt == mediaType || mt == "*/*" || mt == major+"/*" {
				return true
			}
		}
	}
	return false
}

// originAllowed accepts requests without Origin and those from a loopback
// host or the server's own host (DNS-rebinding protection).
func originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || host == "127.0.0.1" || host == "::1" {
		return true
	}
	reqHost := r.Host
	if h, _, ok := strings.Cut(reqHost, ":"); ok && !strings.HasPrefix(reqHost, "[") {
		reqHost = h
	}
	return strings.EqualFold(host, strings.Trim(reqHost, "[]"))
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
