package testservers

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// DefaultName is the serverInfo.name a server reports when Options.Name is empty.
const DefaultName = "anymcp-testserver"

// ServerVersion is the serverInfo.version every test server reports.
const ServerVersion = "1.0.0"

// Options configure the core, whatever front-end serves it.
type Options struct {
	// Name is serverInfo.name; DefaultName when empty.
	Name string
	// Versions are the revisions the server accepts, preferred first;
	// mcp.InitializeVersions when empty. initialize answers the client's
	// requested revision when it is listed, else Versions[0].
	Versions []string
	// Instructions are returned in the initialize result.
	Instructions string
	// PageSize, when > 0, paginates tools/list, resources/list,
	// resources/templates/list and prompts/list with pages of this size
	// and opaque cursors.
	PageSize int
	// Logger receives the server's own diagnostics; nil discards them.
	Logger *slog.Logger
	// Stdio are the failures a stdio server injects (ServeStdio,
	// RunFromEnv); the HTTP front-ends ignore them.
	Stdio StdioFaults

	// Eras are the protocol eras the server speaks: InitializeOnly (the zero
	// value: the servers as they always were), StatelessOnly or DualEra.
	Eras Eras
	// StatelessVersions are the stateless revisions the server speaks, when
	// Eras is StatelessOnly or DualEra; [2026-07-28] when empty.
	StatelessVersions []string
	// StatelessInitialize is how a StatelessOnly server answers initialize.
	StatelessInitialize InitializeAnswer
	// CacheTTL is the ttlMs of stateless cacheable results (server/discover,
	// the lists, resources/read); 0 (immediately stale) when zero.
	// CacheTTLs overrides it per method.
	CacheTTL  time.Duration
	CacheTTLs map[string]time.Duration
	// CacheScope is the cacheScope of those results: mcp.CachePublic (the
	// default) or mcp.CachePrivate.
	CacheScope string
	// InvalidHeaderTools adds to the stateless tools/list the tools of
	// InvalidHeaderToolNames, whose x-mcp-header annotations break the
	// rules of 2026-07-28 (a client must leave them out of its list).
	InvalidHeaderTools bool
	// ListenRefuse names the subscriptions/listen filter fields the
	// server does not honour ("toolsListChanged", "promptsListChanged",
	// "resourcesListChanged", "resourceSubscriptions", "taskIds"): they are left out
	// of the acknowledgement and never notified.
	ListenRefuse []string
	// ListenEndWithCancelled makes the server end a subscription it tears
	// down (EndSubscriptions, Close, EOF of stdin) with
	// notifications/cancelled for the subscriptions/listen request (on
	// its stream), as the cancellation page of 2026-07-28 has it, instead
	// of the graceful subscriptions/listen result.
	ListenEndWithCancelled bool
	// SilentBeforeInitialize makes the initialize era answer nothing to a
	// request (other than initialize) that comes before initialize, as
	// some initialize-era servers do with a stdio client's server/discover probe:
	// the client must give up waiting and initialize.
	SilentBeforeInitialize bool
	// Tasks serve MCP tasks, of both designs (tasks.go); off by default.
	Tasks TaskOptions
	// ConformanceTools adds the tools of ConformanceToolNames: those of
	// the conformance suite's everything-server that ask for sampling and
	// elicitation (conformance_tools.go).
	ConformanceTools bool
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if len(o.Versions) == 0 {
		o.Versions = slices.Clone(mcp.InitializeVersions)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if len(o.StatelessVersions) == 0 {
		o.StatelessVersions = slices.Clone(mcp.StatelessVersions)
	}
	if o.CacheScope == "" {
		o.CacheScope = mcp.CachePublic
	}
	o.Tasks = o.Tasks.withDefaults()
	return o
}

// ErrNoChannel is returned by a Peer, and reported by the tools that need
// one, when a message cannot reach the client: no stream is open that could
// carry it (for example a server request in JSON-response mode without a
// GET stream).
var ErrNoChannel = errors.New("test server: no channel to the client")

// errSessionClosed fails server→client requests once the session is closing.
var errSessionClosed = errors.New("test server: session closed")

// Peer is a front-end's side of one session: how the core's messages reach
// the client. A Session calls it from many goroutines at once.
//
// ctx is the context passed to Session.Handle for the client request the
// message belongs to (with its values, so a front-end can find the stream
// of that request), or context.Background() for messages that belong to no
// request, such as those sent by Server.NotifyListChanged.
type Peer interface {
	// Send delivers a notification or a request from the server. It
	// returns ErrNoChannel (or another error) when the message cannot be
	// delivered.
	Send(ctx context.Context, m *jsonrpc.Message) error
	// Reply ends the client request with id handled under ctx: resp is its
	// response, or nil when none is sent because the request was cancelled
	// or the session closed.
	Reply(ctx context.Context, id jsonrpc.ID, resp *jsonrpc.Message) error
}

// Server is the wire-independent core of a test MCP server: what it offers
// and what it has seen. Each client connection is a Session of it. A Server
// is safe for concurrent use.
//
// Tools: echo, add, slow, fail, sample, elicit, roots, big, content_types,
// log, notify_changes, touch, counter, once (see tools.go). Resources:
// test://static/text, test://static/blob, test://static/item/1 … 5, and the
// template test://items/{id}. Prompts: greet (name required, style), simple.
// Completion: greet's style argument and the id of test://items/{id}.
//
// Stateless requests (Options.Eras) see more: the tools of StatelessToolNames
// (MRTR, x-mcp-header, a non-ASCII name), the resources of
// StatelessResourceURIs and the prompts ask_name and grüße; see
// tools_stateless.go. With Options.Tasks, every request sees the tools of
// TaskToolNames, which run as tasks (tasks_tools.go). With
// Options.ConformanceTools, it sees those of ConformanceToolNames, the
// conformance suite's sampling and elicitation tools (conformance_tools.go).
type Server struct {
	opts Options
	log  *slog.Logger
	// stateKey signs the requestState of the signed tool.
	stateKey [32]byte

	mu        sync.Mutex
	sessions  map[*Session]struct{}
	executed  map[string]int // the once tool's executions by key
	st        Stats
	changed   chan struct{} // closed and replaced whenever st changes
	listeners map[*listener]struct{}
	nonces    map[string]bool // requestState nonces consumed by the signed tool
	nonceList []string        // the same, oldest first, to bound them
	tasks     taskStore
	traces    []TraceContext // what requests carried in _meta (tracecontext.go)
}

// NewServer returns a core configured by opts.
func NewServer(opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{
		opts:      opts,
		log:       opts.Logger,
		sessions:  make(map[*Session]struct{}),
		executed:  make(map[string]int),
		changed:   make(chan struct{}),
		listeners: make(map[*listener]struct{}),
		nonces:    make(map[string]bool),
		st: Stats{
			Requests:      make(map[string]int),
			Refused:       make(map[string]int),
			ToolCalls:     make(map[string]int),
			Faults:        make(map[string]int),
			VersionsSeen:  make(map[string]int),
			Errors:        make(map[int64]int),
			HeaderRejects: make(map[string]int),
			InputRequired: make(map[string]int),

			TaskExecutions: make(map[string]int),
		},
	}
	s.tasks.byID = make(map[string]*task)
	_, _ = rand.Read(s.stateKey[:])
	return s
}

// Options returns the server's options, defaults filled in.
func (s *Server) Options() Options { return s.opts }

// Session is the core's state for one client: its negotiated revision and
// capabilities, log level, subscriptions, the client requests it is
// running, and the requests it sent to the client and awaits answers to.
type Session struct {
	srv    *Server
	peer   Peer
	ctx    context.Context // ends when the session closes
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	closed     bool
	draining   chan struct{} // closed when no more client responses can come
	inflight   map[string]context.CancelCauseFunc
	pending    map[string]chan *jsonrpc.Message
	nextID     int64
	subs       map[string]bool
	minLevel   int
	version    string
	clientCaps mcp.ClientCapabilities
}

// NewSession starts a session whose messages go out through p.
func (s *Server) NewSession(p Peer) *Session { return s.newSession(p, true) }

// newSession starts a session; one not registered is no session of the
// protocol's (it is not counted, nor notified as one): the channel of a
// front-end's stateless requests, which belong to no session.
func (s *Server) newSession(p Peer, register bool) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	ss := &Session{
		srv:      s,
		peer:     p,
		ctx:      ctx,
		cancel:   cancel,
		draining: make(chan struct{}),
		inflight: make(map[string]context.CancelCauseFunc),
		pending:  make(map[string]chan *jsonrpc.Message),
		subs:     make(map[string]bool),
	}
	if register {
		s.mu.Lock()
		s.sessions[ss] = struct{}{}
		s.st.SessionsCreated++
		s.changedLocked()
		s.mu.Unlock()
	}
	return ss
}

// Server returns the core the session belongs to.
func (ss *Session) Server() *Server { return ss.srv }

// ProtocolVersion returns the revision negotiated by initialize, "" before.
func (ss *Session) ProtocolVersion() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version
}

// Subscribed reports whether the session subscribed to uri.
func (ss *Session) Subscribed(uri string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.subs[uri]
}

// Handle processes one message from the client and returns without waiting
// for a request to finish: each request runs in its own goroutine and ends
// with a call to the Peer's Reply under a context that keeps ctx's values
// (but not its cancellation: a request ends when it is done, cancelled by
// notifications/cancelled, or the session closes). Notifications and
// responses to the server's own requests are handled before Handle returns.
// Messages that arrive after Close are ignored.
func (ss *Session) Handle(ctx context.Context, m *jsonrpc.Message) {
	switch {
	case m.IsRequest():
		ss.startRequest(ctx, m)
	case m.IsNotification():
		ss.handleNotification(m)
	case m.IsResponse():
		ss.handleResponse(m)
	}
}

func (ss *Session) startRequest(ctx context.Context, m *jsonrpc.Message) {
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ss.ctx, func() { cancel(errSessionClosed) })
	pre := reqInfoFrom(ctx) // classified by the front-end
	byID := pre == nil || !pre.streamScoped
	stopStream := func() bool { return false }
	if !byID {
		// Over HTTP, 2026-07-28: the client cancels by closing the stream.
		stopStream = context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	}
	key := m.ID.Raw()
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		stop()
		stopStream()
		cancel(errSessionClosed)
		return
	}
	if byID {
		ss.inflight[key] = cancel
	}
	ss.wg.Add(1)
	ss.mu.Unlock()
	if ex := exchangeFrom(ctx); ex != nil {
		ex.begin() // from here on its handler may run
	}
	ss.srv.count(func(st *Stats) { st.Requests[m.Method]++ })
	ss.srv.noteTraceContext(m.Method, m.ID.String(), m.Params)

	go func() {
		defer ss.wg.Done()
		defer stop()
		defer stopStream()
		defer cancel(nil)
		var (
			result json.RawMessage
			err    error
		)
		rq := pre
		if rq == nil {
			var rpcErr *jsonrpc.Error
			if rq, rpcErr = ss.srv.classify(m); rpcErr != nil {
				err = rpcErr
			}
		}
		if err == nil && rq.era == eraInitialize && ss.srv.opts.SilentBeforeInitialize && m.Method != "initialize" && ss.ProtocolVersion() == "" {
			ss.srv.count(func(st *Stats) { st.Unanswered++ })
			err = errNoResponse
		}
		if err == nil {
			result, err = ss.dispatch(rctx, m, rq)
		}
		if byID {
			ss.mu.Lock()
			delete(ss.inflight, key)
			ss.mu.Unlock()
		}
		if errors.Is(err, errNoResponse) { // answered by the handler, or not at all
			_ = ss.peer.Reply(rctx, m.ID, nil)
			return
		}
		if rctx.Err() != nil {
			if cause := context.Cause(rctx); errors.Is(cause, errCancelledByClient) || cause == context.Canceled {
				ss.srv.count(func(st *Stats) { st.RequestsCancelled++ })
			}
			_ = ss.peer.Reply(rctx, m.ID, nil)
			return
		}
		if err := ss.peer.Reply(rctx, m.ID, ss.response(m.ID, result, err)); err != nil {
			ss.srv.log.Debug("reply not delivered", "id", m.ID.String(), "err", err)
		}
	}()
}

// response is the answer to request id: result, or err as a JSON-RPC
// error (anything else than a *jsonrpc.Error is an internal error),
// counted in Stats.Errors.
func (ss *Session) response(id jsonrpc.ID, result json.RawMessage, err error) *jsonrpc.Message {
	resp := &jsonrpc.Message{ID: id}
	if err == nil {
		resp.Result = result
		return resp
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		rpcErr = jsonrpc.NewError(jsonrpc.CodeInternalError, err.Error())
	}
	resp.Error = rpcErr
	ss.srv.count(func(st *Stats) { st.Errors[rpcErr.Code]++ })
	return resp
}

// errCancelledByClient is the cause of a request cancelled by
// notifications/cancelled.
var errCancelledByClient = errors.New("test server: cancelled by the client")

func (ss *Session) handleNotification(m *jsonrpc.Message) {
	switch m.Method {
	case "notifications/initialized":
		ss.srv.count(func(st *Stats) { st.Initialized++ })
	case "notifications/cancelled":
		var p mcp.CancelledParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			ss.srv.log.Debug("bad notifications/cancelled", "err", err)
			return
		}
		var id jsonrpc.ID
		_ = json.Unmarshal(p.RequestID, &id)
		ss.srv.count(func(st *Stats) {
			st.Cancelled++
			st.LastCancelledID = id.Raw()
			st.LastCancelledReason = p.Reason
		})
		ss.mu.Lock()
		cancel := ss.inflight[id.Raw()]
		ss.mu.Unlock()
		if cancel != nil {
			cancel(errCancelledByClient)
		}
	case "notifications/roots/list_changed":
		ss.srv.count(func(st *Stats) { st.RootsListChanged++ })
	default:
		ss.srv.log.Debug("notification ignored", "method", m.Method)
	}
}

func (ss *Session) handleResponse(m *jsonrpc.Message) {
	key := m.ID.Raw()
	ss.mu.Lock()
	ch := ss.pending[key]
	delete(ss.pending, key)
	ss.mu.Unlock()
	if ch == nil {
		ss.srv.log.Debug("response to no pending request", "id", m.ID.String())
		return
	}
	ch <- m // buffered, one response per request
}

// request sends a request to the client and waits for its answer. When ctx
// ends first, it tells the client with notifications/cancelled.
func (ss *Session) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Message, 1)
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil, errSessionClosed
	}
	ss.nextID++
	id := jsonrpc.Int(ss.nextID)
	ss.pending[id.Raw()] = ch
	ss.mu.Unlock()
	forget := func() {
		ss.mu.Lock()
		delete(ss.pending, id.Raw())
		ss.mu.Unlock()
	}

	if err := ss.peer.Send(ctx, &jsonrpc.Message{ID: id, Method: method, Params: b}); err != nil {
		forget()
		return nil, err
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-ss.draining:
		forget()
		return nil, errSessionClosed
	case <-ctx.Done():
		forget()
		if ss.ctx.Err() != nil {
			return nil, errSessionClosed
		}
		_ = ss.notify(context.WithoutCancel(ctx), "notifications/cancelled",
			mcp.CancelledParams{RequestID: json.RawMessage(id.Raw()), Reason: "the server request was cancelled"})
		return nil, ctx.Err()
	}
}

// notify sends a notification to the client.
func (ss *Session) notify(ctx context.Context, method string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return ss.peer.Send(ctx, &jsonrpc.Message{Method: method, Params: b})
}

// Close ends the session: running requests are cancelled (and get no
// response), requests sent to the client are abandoned, and Close returns
// once the request goroutines are gone. It is idempotent.
func (ss *Session) Close() {
	ss.stop()
	ss.cancel()
	ss.wg.Wait()
}

// Drain ends the session gracefully, for a client that will send nothing
// more (stdin closed): requests sent to the client fail at once, running
// requests are allowed to finish and answer, and Drain returns when they
// have. Then the session is closed.
func (ss *Session) Drain() {
	ss.stop()
	ss.wg.Wait()
	ss.cancel()
}

// stop refuses new messages and releases waiters on client answers; it
// reports whether this call did it.
func (ss *Session) stop() bool {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return false
	}
	ss.closed = true
	close(ss.draining)
	ss.mu.Unlock()
	ss.srv.mu.Lock()
	if _, ok := ss.srv.sessions[ss]; ok {
		delete(ss.srv.sessions, ss)
		ss.srv.changedLocked()
	}
	ss.srv.mu.Unlock()
	return true
}

// liveSessions returns the sessions open now.
func (s *Server) liveSessions() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

// initializeSessions returns the sessions notifications of the initialize era go
// to: every open session, except on a server that speaks the stateless era,
// where only those an initialize opened are (a stdio connection
// used by stateless requests only is no legacy session).
func (s *Server) initializeSessions() []*Session {
	all := s.liveSessions()
	if !s.opts.Eras.stateless() {
		return all
	}
	return slices.DeleteFunc(all, func(ss *Session) bool { return ss.ProtocolVersion() == "" })
}

// NotifyListChanged sends notifications/tools/list_changed,
// notifications/resources/list_changed and notifications/prompts/list_changed
// to every session, outside any request (over HTTP they go on the GET
// stream, when one is open), and to every subscriptions/listen stream
// that asked for them.
func (s *Server) NotifyListChanged() {
	for _, ss := range s.initializeSessions() {
		for _, method := range listChangedMethods {
			_ = ss.notify(context.Background(), method, struct{}{})
		}
	}
	s.notifyListeners(listChangedMethods...)
}

// NotifyLog sends notifications/message at level, with message as its
// data, to every initialize-era session, outside any request, whatever
// level the session asked for: over Streamable HTTP it goes on the GET
// stream, as a server's log unrelated to a request does (the TypeScript
// SDK's sendLoggingMessage). It returns how many sessions it reached.
func (s *Server) NotifyLog(level mcp.LoggingLevel, message string) int {
	data, _ := json.Marshal(message)
	n := 0
	for _, ss := range s.initializeSessions() {
		if ss.notify(context.Background(), "notifications/message", mcp.LoggingMessageParams{Level: level, Logger: LoggerName, Data: data}) == nil {
			n++
		}
	}
	return n
}

// NotifyResourceUpdated sends notifications/resources/updated for uri,
// outside any request, to every session subscribed to it and every
// subscriptions/listen stream that asked for it. It returns how many
// sessions and subscriptions it notified.
func (s *Server) NotifyResourceUpdated(uri string) int {
	n := 0
	for _, ss := range s.initializeSessions() {
		if ss.Subscribed(uri) {
			if ss.notify(context.Background(), "notifications/resources/updated", mcp.ResourceUpdatedParams{URI: uri}) == nil {
				n++
			}
		}
	}
	return n + s.notifyResourceListeners(uri)
}

var listChangedMethods = []string{
	"notifications/tools/list_changed",
	"notifications/resources/list_changed",
	"notifications/prompts/list_changed",
}
