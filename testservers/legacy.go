package testservers

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"

	"github.com/anymcp/anymcp/internal/servehttp"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers/internal/serve"
)

// EndpointMode says how an initialize-era server writes the URI of its endpoint
// event.
type EndpointMode int

const (
	// EndpointRelative sends a path and query, as most servers do:
	// /message?sessionId=ID.
	EndpointRelative EndpointMode = iota
	// EndpointAbsolute sends a full URL on the server's own origin:
	// http://127.0.0.1:PORT/message?sessionId=ID.
	EndpointAbsolute
	// EndpointCrossOrigin sends a full URL on another loopback origin: a
	// second server that refuses and counts every request it gets (see
	// LegacyServer.CrossOriginHits). A client must never POST there.
	EndpointCrossOrigin
)

// String returns "relative", "absolute" or "cross-origin".
func (m EndpointMode) String() string {
	switch m {
	case EndpointRelative:
		return "relative"
	case EndpointAbsolute:
		return "absolute"
	case EndpointCrossOrigin:
		return "cross-origin"
	}
	return "EndpointMode(?)"
}

// DefaultSessionParam is the query parameter that carries the session id
// in a legacy endpoint URI when LegacyOptions.SessionParam is empty.
const DefaultSessionParam = "sessionId"

// LegacyOptions configure an HTTP+SSE front-end (revision 2024-11-05).
// When Options.Versions is empty, the server accepts only 2024-11-05, as
// servers of that transport typically do.
type LegacyOptions struct {
	Options
	// Endpoint is how the endpoint event names the message endpoint.
	Endpoint EndpointMode
	// EndpointDelay holds the endpoint event back this long after the
	// stream's response header (a slow server).
	EndpointDelay time.Duration
	// SessionParam is the query parameter of the session id;
	// DefaultSessionParam when empty (some servers use session_id).
	SessionParam string
	// AcceptStatus is the status that accepts a POSTed message;
	// 202 Accepted when 0 (some servers answer 200).
	AcceptStatus int
	// AcceptBody is the body of that answer; none when empty (some
	// servers send "Accepted").
	AcceptBody string
	// StreamOnPost answers a POST to the SSE URL as a GET: 200
	// text/event-stream, a new session and its endpoint event, and never
	// a response to what was POSTed, as go-mcp's HTTP+SSE server does.
	// Without it, such a POST is refused with 405.
	StreamOnPost bool
	// Faults are the failures the front-end injects; none when zero.
	// FaultDropGET cuts a session's stream (and so ends the session);
	// 429, 503, FaultExpireSession (the stream is cut, the POST gets
	// 404) and FaultRestart apply to the POSTed requests; the
	// drop-stream faults do not apply.
	Faults Faults
	// OnRequest, when set, is called first with every HTTP request the
	// front-end serves.
	OnRequest func(*http.Request)
}

func (o LegacyOptions) withDefaults() LegacyOptions {
	if len(o.Versions) == 0 {
		o.Versions = []string{mcp.Version20241105}
	}
	if o.SessionParam == "" {
		o.SessionParam = DefaultSessionParam
	}
	if o.AcceptStatus == 0 {
		o.AcceptStatus = http.StatusAccepted
	}
	return o
}

// legacyHandler serves the core over HTTP+SSE: a GET stream per session
// (served wherever the front-end mounts stream) and a message endpoint
// (messagePath, served by message).
type legacyHandler struct {
	opts        LegacyOptions
	srv         *Server
	plan        *faultPlan
	messagePath string
	cross       *crossOrigin // EndpointCrossOrigin only
	closing     chan struct{}
	once        sync.Once

	mu       sync.Mutex
	closed   bool
	sessions *servehttp.Table[*legacySession] // the server core's; no idle expiry: a session ends with its stream
}

// newLegacyHandler returns a front-end of a new core whose endpoint
// event names messagePath. With EndpointCrossOrigin it starts the other
// origin's server, which close stops.
func newLegacyHandler(opts LegacyOptions, messagePath string) *legacyHandler {
	opts = opts.withDefaults()
	h := &legacyHandler{
		opts:        opts,
		srv:         NewServer(opts.Options),
		plan:        newFaultPlan(opts.Faults),
		messagePath: messagePath,
		closing:     make(chan struct{}),
		sessions:    servehttp.NewTable[*legacySession](maxHTTPSessions, nil),
	}
	if opts.Endpoint == EndpointCrossOrigin {
		h.cross = startCrossOrigin()
	}
	return h
}

// legacySession is one core session tied to one GET stream.
type legacySession struct {
	id       string
	h        *legacyHandler
	core     *Session
	kill     chan struct{} // closed to end the stream now
	killOnce sync.Once
	endOnce  sync.Once

	mu     sync.Mutex
	stream *sseConn // set once the endpoint event is out
	sent   int      // message events written on the stream
	cutAt  int      // cut the stream once sent reaches it; -1: never
	retry  time.Duration
}

// Send puts m on the session's GET stream.
func (ls *legacySession) Send(_ context.Context, m *jsonrpc.Message) error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.stream == nil {
		return ErrNoChannel
	}
	if err := ls.stream.message(m); err != nil {
		return errors.Join(ErrNoChannel, err)
	}
	ls.sent++
	if ls.cutAt >= 0 && ls.sent >= ls.cutAt {
		ls.cutLocked()
	}
	return nil
}

// armCut cuts the session's stream after `after` more message events
// (at once when 0), sending "retry: <ms>" first when retry > 0.
func (ls *legacySession) armCut(after int, retry time.Duration) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.cutAt, ls.retry = ls.sent+after, retry
	if after == 0 && ls.stream != nil {
		ls.cutLocked()
	}
}

// cutLocked cuts the stream, and so ends the session, as a dropped
// connection would.
func (ls *legacySession) cutLocked() {
	ls.cutAt = -1
	ls.stream.cut(ls.retry)
	ls.killStream()
	ls.h.srv.fault(FaultDropGET)
}

// Reply puts the response, if any, on the session's GET stream.
func (ls *legacySession) Reply(ctx context.Context, _ jsonrpc.ID, resp *jsonrpc.Message) error {
	if resp == nil {
		return nil
	}
	return ls.Send(ctx, resp)
}

func (ls *legacySession) killStream() {
	ls.killOnce.Do(func() { close(ls.kill) })
}

// stream serves GET on the SSE URL: a new session, its endpoint event,
// then its messages, until the client goes away, the stream is killed or
// the front-end closes. The session ends with the stream.
func (h *legacyHandler) stream(w http.ResponseWriter, r *http.Request) {
	if h.opts.OnRequest != nil {
		h.opts.OnRequest(r)
	}
	if !h.admit(w, r) {
		return
	}
	if r.Method != http.MethodGet && (r.Method != http.MethodPost || !h.opts.StreamOnPost) {
		w.Header().Set("Allow", "GET")
		httpError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "method not allowed: this is an SSE stream")
		return
	}
	if !accepts(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest, "Accept must list text/event-stream")
		return
	}
	ls := h.createSession()
	if ls == nil {
		httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "server closing, or too many sessions")
		return
	}
	defer h.endSession(ls)
	stream := newSSEConn(w, "")
	defer stream.abortIfDropped()
	defer stream.close()
	stream.start()
	if f, ok := first(h.plan.draw(occasion{get: true, session: ls, legacy: true}), FaultDropGET); ok {
		ls.cutAt, ls.retry = f.AfterEvents, f.Retry
	}

	if d := h.opts.EndpointDelay; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-ls.kill:
			return
		case <-h.closing:
			return
		}
	}
	// The stream is set in the same critical section as the endpoint goes
	// out: the client may POST as soon as it reads the event, and the
	// answer must find the stream.
	ls.mu.Lock()
	err := stream.event("endpoint", "", []byte(h.endpoint(r, ls.id)))
	if err == nil {
		ls.stream = stream
		if ls.cutAt == 0 {
			ls.cutLocked()
		}
	}
	ls.mu.Unlock()
	if err != nil {
		return
	}

	select {
	case <-r.Context().Done():
	case <-ls.kill:
	case <-h.closing:
	}
	ls.mu.Lock()
	ls.stream = nil
	ls.mu.Unlock()
}

// endpoint returns the URI of the endpoint event for session id.
func (h *legacyHandler) endpoint(r *http.Request, id string) string {
	rel := h.messagePath + "?" + url.QueryEscape(h.opts.SessionParam) + "=" + url.QueryEscape(id)
	switch h.opts.Endpoint {
	case EndpointAbsolute:
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		return scheme + "://" + r.Host + rel
	case EndpointCrossOrigin:
		return h.cross.baseURL() + rel
	}
	return rel
}

// message serves POST on the message endpoint: the message is accepted
// (AcceptStatus) before the core handles it; its answer, if any, goes on
// the session's GET stream.
func (h *legacyHandler) message(w http.ResponseWriter, r *http.Request) {
	if h.opts.OnRequest != nil {
		h.opts.OnRequest(r)
	}
	if !h.admit(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "method not allowed")
		return
	}
	id := r.URL.Query().Get(h.opts.SessionParam)
	if id == "" {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "missing "+h.opts.SessionParam)
		return
	}
	h.mu.Lock()
	ls, _ := h.sessions.Get(id)
	h.mu.Unlock()
	if ls != nil {
		select {
		case <-ls.kill: // its stream is ending: the session with it
			ls = nil
		default:
		}
	}
	if ls == nil {
		httpError(w, http.StatusNotFound, CodeSessionNotFound, "session not found")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, jsonrpc.CodeInvalidRequest, "Content-Type must be application/json")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "reading body: "+err.Error())
		return
	}
	m, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeParseError, err.Error())
		return
	}
	if m.IsRequest() && h.inject(w, ls, m.Method) {
		return
	}
	if h.opts.AcceptBody != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(h.opts.AcceptStatus)
	_, _ = io.WriteString(w, h.opts.AcceptBody)
	_ = http.NewResponseController(w).Flush()
	ls.core.Handle(r.Context(), m)
}

// inject draws the faults of a POSTed request; it reports whether one
// answered the POST itself, so that the core must not see it.
func (h *legacyHandler) inject(w http.ResponseWriter, ls *legacySession, method string) bool {
	for _, f := range h.plan.draw(occasion{methods: []string{method}, session: ls, getOpen: true, legacy: true}) {
		switch f.Fault {
		case FaultTooManyRequests, FaultUnavailable:
			h.srv.count(func(st *Stats) {
				st.Rejected++
				st.Faults[string(f.Fault)]++
			})
			f.reject(w)
			return true
		case FaultExpireSession:
			ls.killStream()
			h.endSession(ls)
			h.srv.count(func(st *Stats) {
				st.SessionsExpired++
				st.Faults[string(FaultExpireSession)]++
			})
			httpError(w, http.StatusNotFound, CodeSessionNotFound, "session expired")
			return true
		case FaultRestart:
			all := h.live()
			for _, other := range all {
				other.killStream()
				h.endSession(other)
			}
			n := len(all)
			h.srv.count(func(st *Stats) {
				st.SessionsExpired += n
				st.Faults[string(FaultRestart)]++
			})
			httpError(w, http.StatusNotFound, CodeSessionNotFound, "session lost: the server restarted")
			return true
		case FaultDropGET:
			ls.armCut(f.AfterEvents, f.Retry)
		}
	}
	return false
}

// admit refuses requests once the front-end is closing and those from a
// foreign Origin; it reports whether the request may go on.
func (h *legacyHandler) admit(w http.ResponseWriter, r *http.Request) bool {
	select {
	case <-h.closing:
		httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "server closing")
		return false
	default:
	}
	if !originAllowed(r) {
		httpError(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "origin not allowed")
		return false
	}
	return true
}

// createSession registers a session with a fresh id, or returns nil once
// the front-end is closed.
func (h *legacyHandler) createSession() *legacySession {
	ls := &legacySession{id: servehttp.NewSessionID(), h: h, kill: make(chan struct{}), cutAt: -1}
	ls.core = h.srv.NewSession(ls)
	h.mu.Lock()
	if h.closed || !h.sessions.Add(ls.id, ls) {
		h.mu.Unlock()
		ls.core.Close()
		return nil
	}
	h.mu.Unlock()
	return ls
}

// endSession forgets the session (its id then gets 404) and closes its
// core session; it returns once that is done, whoever called first.
func (h *legacyHandler) endSession(ls *legacySession) {
	h.mu.Lock()
	h.sessions.RemoveIf(ls.id, func(x *legacySession) bool { return x == ls })
	h.mu.Unlock()
	ls.endOnce.Do(func() {
		ls.core.Close()
		h.plan.forget(ls)
	})
}

// live returns the sessions open now.
func (h *legacyHandler) live() []*legacySession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions.All()
}

// killStreams ends every open GET stream, and so its session. The session
// ends here, not only when the stream's handler notices the kill: a POST
// sent once KillStreams has returned must find it gone.
func (h *legacyHandler) killStreams() {
	for _, ls := range h.live() {
		ls.killStream()
		h.endSession(ls)
	}
}

// close ends every stream and session, makes the front-end answer 503,
// and stops the other origin's server. It is idempotent.
func (h *legacyHandler) close() {
	h.once.Do(func() {
		h.srv.EndTasks()
		h.mu.Lock()
		h.closed = true
		close(h.closing)
		h.mu.Unlock()
		for _, ls := range h.live() {
			h.endSession(ls)
		}
		h.cross.close()
	})
}

// LegacyServer is an HTTP+SSE (2024-11-05) test server listening on
// 127.0.0.1: GET /sse opens a session's stream, whose first event,
// endpoint, names /message?sessionId=ID (see LegacyOptions.Endpoint);
// messages POSTed there are answered on the stream. A POST to /sse is
// refused with 405, as on a server that predates Streamable HTTP.
type LegacyServer struct {
	// URL is the SSE URL, http://127.0.0.1:PORT/sse.
	URL string

	ts   *httptest.Server
	h    *legacyHandler
	hits serve.HitCounter
	once sync.Once
}

// StartLegacy starts an HTTP+SSE test server configured by opts.
func StartLegacy(opts LegacyOptions) *LegacyServer {
	s := &LegacyServer{h: newLegacyHandler(opts, "/message")}
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", s.h.stream)
	mux.HandleFunc("/message", s.h.message)
	s.ts = httptest.NewServer(s.hits.Wrap(mux))
	s.URL = s.ts.URL + "/sse"
	return s
}

// Server returns the core, for its Stats.
func (s *LegacyServer) Server() *Server { return s.h.srv }

// Hits returns how many requests the server got, by "METHOD /path"
// (for example "POST /sse" or "GET /sse").
func (s *LegacyServer) Hits() map[string]int { return s.hits.Snapshot() }

// CrossOriginHits returns how many requests reached the other origin of
// EndpointCrossOrigin (always 0 in the other modes).
func (s *LegacyServer) CrossOriginHits() int { return s.h.cross.count() }

// KillStreams ends every open GET stream now, as a lost connection would;
// their sessions end with them. New streams can still be opened. Each
// counts as a FaultDropGET.
func (s *LegacyServer) KillStreams() {
	n := len(s.h.live())
	s.h.killStreams()
	s.h.srv.count(func(st *Stats) { st.Faults[string(FaultDropGET)] += n })
}

// Inject arms more faults, after those of LegacyOptions.Faults.
func (s *LegacyServer) Inject(rules ...FaultRule) { s.h.plan.add(rules...) }

// Close ends the streams and sessions, then closes the listener and
// waits for the HTTP handlers. Connections whose client does not read
// are cut after a grace period, so Close does not hang. It is idempotent.
func (s *LegacyServer) Close() {
	s.once.Do(func() {
		serve.Within(s.h.close, serve.CloseGrace, s.ts.CloseClientConnections)
		serve.Within(s.ts.Close, serve.CloseGrace, s.ts.CloseClientConnections)
	})
}
