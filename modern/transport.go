package modern

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/sse"
)

// Options configure a Transport. The zero value works.
//
// Of Common: POST and DELETE use the copy of HTTPClient (a POST through a
// go-retryablehttp client over it, which sends it again only after a 429,
// a 503 or a refused connection, as Reconnect says); the GET stream uses
// the copy without Timeout. A 404 that came after a redirect is a
// *jsonrpc.HTTPError, never a lost session. Header goes on POST, GET and
// DELETE.
type Options struct {
	httpopt.Common
	// CloseTimeout bounds the DELETE that ends the session at Close.
	// Zero means 2 seconds.
	CloseTimeout time.Duration
	// StreamOnDemand leaves the standalone GET stream closed after the
	// handshake until OpenStream asks for it (from then on it is opened
	// for every new session too). Off, it opens after every
	// notifications/initialized, as the specification allows a server to
	// expect.
	StreamOnDemand bool
}

const defaultCloseTimeout = 2 * time.Second

// Transport is a Streamable HTTP client transport. It implements
// jsonrpc.Transport; all its methods are safe for concurrent use.
type Transport struct {
	endpoint     string        // as given to New, for requests
	redacted     string        // for errors and logs
	client       *http.Client  // DELETE
	poster       *retry.Sender // POST: waits out 429 and 503
	streamClient *http.Client  // GET: no Timeout
	header       http.Header
	log          *slog.Logger
	maxSize      int
	closeTimeout time.Duration
	policy       reconnect.Policy

	queue *wire.Queue
	take  wire.Taker // TakeAnswers
	// gapQueued: a *jsonrpc.GapError waits in queue for Recv; another
	// would say nothing more (see gap).
	gapQueued atomic.Bool

	ctx    context.Context // cancelled by Close: every request derives from it
	cancel context.CancelFunc
	wg     sync.WaitGroup // the GET stream and body drainers
	drains sync.WaitGroup // the body drainers alone (tests wait for them)

	mu          sync.Mutex
	session     []string // Mcp-Session-Id header value; nil when none
	version     []string // MCP-Protocol-Version header value; nil when unknown
	generation  uint64   // counts sessions set and forgotten: tells a stale GET stream
	lost        bool     // a session was forgotten and no initialize has succeeded since
	ready       bool     // the session of this generation got notifications/initialized
	wasReady    bool     // some session did: a later one replaces it (a re-initialization)
	closed      bool
	listener    *listener // the GET stream goroutine, while it runs
	noGETStream bool      // the server refused the GET stream: never ask again
	wantStream  bool      // open the GET stream for each session (not StreamOnDemand, or OpenStream called)
	sessionUp   bool      // notifications/initialized went through for the current session

	closeOnce sync.Once
	closeErr  error
}

// TakeAnswers implements jsonrpc.AnswerTaker: a response that is the first
// message of its POST's answer (a JSON body, or the first event of an SSE
// stream) goes to take, on the goroutine of the Send that read it.
func (t *Transport) TakeAnswers(take func(*jsonrpc.Message) bool) { t.take.Set(take) }

// New returns a transport for the MCP endpoint at endpoint, an http or
// https URL. It does no I/O: the first request is the first Send.
func New(endpoint string, opts Options) (*Transport, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("Streamable HTTP: endpoint: %w", origin.RedactError(err)) // url.Parse's error repeats the URL
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("Streamable HTTP: endpoint %q: scheme must be http or https", origin.Redact(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("Streamable HTTP: endpoint %q: no host", origin.Redact(u))
	}
	client := origin.Guard(opts.HTTPClient)
	stream := *client
	stream.Timeout = 0
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	maxSize := opts.MaxEventSize
	if maxSize <= 0 {
		maxSize = sse.DefaultMaxEventSize
	}
	closeTimeout := opts.CloseTimeout
	if closeTimeout <= 0 {
		closeTimeout = defaultCloseTimeout
	}
	policy := reconnect.DefaultPolicy()
	if opts.Reconnect != nil {
		policy = *opts.Reconnect
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Transport{
		endpoint:     u.String(),
		redacted:     origin.Redact(u),
		client:       client,
		poster:       retry.NewSender(policy, opts.HTTPClient, logger), // Sender adds the redirect policy itself
		streamClient: &stream,
		header:       opts.Header.Clone(),
		log:          logger,
		maxSize:      maxSize,
		closeTimeout: closeTimeout,
		policy:       policy,
		queue:        wire.NewQueue(),
		ctx:          ctx,
		cancel:       cancel,
		wantStream:   !opts.StreamOnDemand,
	}, nil
}

// OpenStream asks for the standalone GET stream: at once when the current
// session has finished its handshake, and for every session after. It is
// for a transport made with StreamOnDemand (otherwise the stream opens by
// itself); the protocol layer calls it once the host listens for what the
// server sends outside answers (notifications, its requests). Calling it
// again does nothing.
func (t *Transport) OpenStream() {
	t.mu.Lock()
	was, up := t.wantStream, t.sessionUp
	t.wantStream = true
	t.mu.Unlock()
	if !was && up {
		// Wait, within a bound, until the stream is open or refused, so
		// that what the server sends right after has a way to us.
		timer := time.NewTimer(listenSettleWait)
		defer timer.Stop()
		select {
		case <-t.startListening():
		case <-timer.C:
			t.log.Debug("modern: the GET stream is slow to open; going on without waiting", "url", t.redacted)
		}
	}
}

// SessionID returns the session id the server assigned in its answer to
// initialize, or "" when there is none (not initialized yet, a server
// without sessions, or a session that expired).
func (t *Transport) SessionID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.session == nil {
		return ""
	}
	return t.session[0]
}

// ProtocolVersion returns the protocolVersion of the last initialize
// result, sent as MCP-Protocol-Version, or "" when not known.
func (t *Transport) ProtocolVersion() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.version == nil {
		return ""
	}
	return t.version[0]
}

var errRecvClosed = fmt.Errorf("Streamable HTTP: recv: %w", jsonrpc.ErrClosed)

// Recv returns the next message from the server, in the order the messages
// arrived on their stream. It blocks until there is one; after Close it
// returns an error wrapping jsonrpc.ErrClosed, and messages still queued
// are dropped.
func (t *Transport) Recv() (*jsonrpc.Message, error) {
	m, err := t.queue.Pop()
	if _, ok := err.(*jsonrpc.GapError); ok {
		t.gapQueued.Store(false)
	}
	return m, err
}

// gap tells the Recv loop that the GET stream opened again without
// resuming, after it had ended for reason: what the server sent while none
// was open is lost. One *jsonrpc.GapError waits in the queue at a time.
func (t *Transport) gap(reason string) {
	if t.gapQueued.CompareAndSwap(false, true) && !t.queue.PushErr(&jsonrpc.GapError{Reason: reason}) {
		t.gapQueued.Store(false)
	}
}

// InterruptRecv wakes a Recv that waits, or the next one that would: it
// returns jsonrpc.ErrInterrupted, once (see jsonrpc.RecvInterrupter).
func (t *Transport) InterruptRecv() { t.queue.Interrupt() }

// Close stops the GET stream, cancels every request in flight, ends the
// session with a DELETE bounded by Options.CloseTimeout (a 404 or 405 answer
// is fine), and returns once all the transport's goroutines have exited. It
// is idempotent; every call returns the first call's result, which is
// non-nil only when the DELETE failed.
func (t *Transport) Close() error {
	return t.Shutdown(context.Background())
}

// Shutdown is Close with the DELETE bounded by ctx as well as by
// Options.CloseTimeout: once ctx is done the DELETE is abandoned (and,
// when ctx is done from the start, not sent) and Shutdown returns as soon
// as the transport's goroutines have exited.
func (t *Transport) Shutdown(ctx context.Context) error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		session, version := t.session, t.version
		t.mu.Unlock()
		t.cancel()
		t.queue.Close(errRecvClosed)
		if session != nil && ctx.Err() == nil {
			t.closeErr = t.endSession(ctx, session, version)
		}
		t.wg.Wait()
	})
	return t.closeErr
}

// endSession sends the DELETE that tells the server the session is over.
func (t *Transport) endSession(ctx context.Context, session, version []string) error {
	ctx, cancel := context.WithTimeout(ctx, t.closeTimeout)
	defer cancel()
	req, err := t.newRequest(ctx, http.MethodDelete, nil, nil, session, version)
	if err != nil {
		return err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		if re, ok := errors.AsType[*jsonrpc.RedirectError](err); ok {
			return fmt.Errorf("Streamable HTTP: ending the session: %w", re)
		}
		return fmt.Errorf("Streamable HTTP: ending the session: %w", origin.RedactError(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300,
		resp.StatusCode == http.StatusNotFound,         // already gone
		resp.StatusCode == http.StatusMethodNotAllowed: // the server does not let clients end sessions
		wire.Drain(resp.Body)
		return nil
	}
	return fmt.Errorf("Streamable HTTP: ending the session: %w", wire.NewHTTPError(resp, http.MethodDelete, t.redacted))
}

// spawn runs f in a goroutine Close waits for; it reports false, and does
// not run f, once the transport is closed.
func (t *Transport) spawn(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f()
	}()
	return true
}

// carried is what a message carries of the session: the session headers'
// values, and the generation of the session they name.
type carried struct {
	session, version []string
	gen              uint64
}

// sessionHeaders returns the session a message carries now, whether the
// session was lost (forgotten after a 404, no initialize since), and
// whether it is a session that replaces an initialized one and is not
// initialized yet itself (a re-initialization's initialize made it, and
// its notifications/initialized has not gone out).
func (t *Transport) sessionHeaders() (c carried, lost, unready bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return carried{t.session, t.version, t.generation}, t.lost, t.wasReady && !t.lost && !t.ready
}

// resendable returns the session a message that carried prev, and waited
// out a 429 or 503, carries when it is sent again: prev while it is still
// the session; for a request, the session that replaced it once that one
// is initialized; else an error matching jsonrpc.ErrNotSent and
// jsonrpc.ErrSessionExpired (nothing may go out on a dead session, and
// the protocol layer sends the request again once the new session is
// ready).
func (t *Transport) resendable(prev carried, request bool) (carried, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.generation == prev.gen:
		return prev, nil
	case t.lost:
		return prev, fmt.Errorf("%w: %w while waiting to send it again", jsonrpc.ErrNotSent, jsonrpc.ErrSessionExpired)
	case !request || !t.ready:
		return prev, fmt.Errorf("%w: %w while waiting to send it again (a new session replaces it)", jsonrpc.ErrNotSent, jsonrpc.ErrSessionExpired)
	}
	return carried{t.session, t.version, t.generation}, nil
}

// sessionReady records that the session of generation gen got
// notifications/initialized: requests waiting to be sent again may move
// to it.
func (t *Transport) sessionReady(gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.generation == gen {
		t.ready, t.wasReady = true, true
	}
}

// setSession records the session an initialize exchange established.
func (t *Transport) setSession(session, version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sessionUp = false // until its notifications/initialized
	t.session, t.version = nil, nil
	if session != "" {
		t.session = []string{session}
	}
	if version != "" {
		t.version = []string{version}
	}
	t.lost, t.ready = false, false
	t.generation++
}

// forgetSession drops the session if it is still the one that expired (a
// concurrent initialize may have replaced it, or another request forgotten
// it, already); it reports whether it did. Until the next initialize
// succeeds, Send refuses everything else.
func (t *Transport) forgetSession(expired []string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.session == nil || expired == nil || t.session[0] != expired[0] {
		return false
	}
	t.sessionUp = false
	t.session, t.version = nil, nil
	t.lost, t.ready = true, false
	t.generation++
	return true
}

// sessionLost forgets the session, if it is still the one that expired,
// and tells Recv: used where no Send reports ErrSessionExpired for it (the
// GET stream, a resumption). cause must match jsonrpc.ErrSessionExpired.
func (t *Transport) sessionLost(expired []string, cause error) {
	if !t.forgetSession(expired) {
		return
	}
	t.log.Info("modern: the server no longer knows the session; initialize needed", "err", cause)
	t.queue.PushErr(&jsonrpc.SessionLostError{Cause: cause, AnswersFollow: true})
}

// Header values shared by all requests; net/http never writes to them.
var (
	acceptBoth = []string{"application/json, text/event-stream"}
	acceptSSE  = []string{"text/event-stream"}
	typeJSON   = []string{"application/json"}
)

// newRequest builds a request to the endpoint with the static headers, the
// given Accept and session headers, and body (nil for none).
func (t *Transport) newRequest(ctx context.Context, method string, body []byte, accept, session, version []string) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body) // sets ContentLength and GetBody
	}
	req, err := http.NewRequestWithContext(ctx, method, t.endpoint, r)
	if err != nil {
		return nil, fmt.Errorf("Streamable HTTP: %w", err)
	}
	t.setHeaders(req.Header, body != nil, accept, session, version)
	return req, nil
}

// setHeaders sets the static headers, then Accept, Content-Type (when
// there is a body) and the session headers, each unless nil.
func (t *Transport) setHeaders(h http.Header, hasBody bool, accept, session, version []string) {
	for k, v := range t.header {
		h[k] = v
	}
	if accept != nil {
		h["Accept"] = accept
	}
	if hasBody {
		h["Content-Type"] = typeJSON
	}
	if session != nil {
		h["Mcp-Session-Id"] = session
	}
	if version != nil {
		h["Mcp-Protocol-Version"] = version
	}
}

// closedErr returns the error Send returns for m once Close is under way,
// or nil.
func (t *Transport) closedErr(m *jsonrpc.Message) error {
	if t.ctx.Err() != nil {
		return fmt.Errorf("Streamable HTTP: %s: %w", wire.Label(m), jsonrpc.ErrClosed)
	}
	return nil
}

var _ jsonrpc.Transport = (*Transport)(nil)
