package legacy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/sse"
)

// Options configure Dial. The zero value works.
//
// Of Common: the POSTs go through a go-retryablehttp client over the copy
// of HTTPClient, which sends a POST again only after a 429, a 503 or a
// refused connection, as Reconnect says; the redirect policy holds for
// the GET and every POST, so the endpoint's POSTs stay on the SSE URL's
// origin. Reconnect also says how the stream is reopened when it drops
// after Dial (the server's retry: field overrides the first wait); Dial
// itself never retries.
type Options struct {
	httpopt.Common
	// NoReconnect turns reconnection of the stream off: once the stream
	// has ended, Recv (after the messages already queued) and Send return
	// errors wrapping ErrConnectionLost for good. Throttled POSTs are still
	// waited out and sent again, as Send says.
	NoReconnect bool
}

// Transport is an HTTP+SSE client transport, connected by Dial. It
// implements jsonrpc.Transport; all its methods are safe for concurrent use.
type Transport struct {
	sseURL  string        // the SSE URL for errors and logs: no password, no query values
	origin  *url.URL      // the SSE URL as the host gave it
	stream  *http.Client  // the host's client without a Timeout, for the GETs
	post    *retry.Sender // the host's client, re-sending on 429, 503 and refused connections
	header  http.Header
	log     *slog.Logger
	maxSize int

	reopen  bool           // reconnect when the stream drops (Options.NoReconnect unset)
	backoff *retry.Backoff // used by the stream goroutine only

	queue *wire.Queue
	take  wire.Taker // TakeAnswers

	// ctx is the life of the transport: the GETs derive from it, and the
	// POSTs end with it (through their session's ctx). It
	// is cancelled with ErrClosed by Close, or with the error that ended
	// the transport for good (a lost stream without reconnection, or a
	// reconnection given up).
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the stream goroutine

	mu       sync.Mutex
	closed   bool
	sess     *session      // the session in force; nil while reconnecting
	ready    chan struct{} // closed when sess is set again after a drop
	endpoint string        // the POST URL of sess, or of the last session
	cursor   streamCursor  // where the last stream stood when it ended

	closeOnce sync.Once
}

// session is one SSE stream and the endpoint it announced. Every POST to
// the endpoint derives from ctx, which ends with the stream, so that a
// POST in flight when the stream drops is given up: its answer could only
// have come on that stream.
type session struct {
	endpoint string // the POST URL, as used
	redacted string // the POST URL for errors, password and query values (the session id) redacted
	ctx      context.Context
	cancel   context.CancelCauseFunc
	// needInit: the session came from a reconnection and no initialize
	// request has been POSTed on it yet. Guarded by Transport.mu.
	needInit bool
}

// streamCursor is where the SSE stream stood when it ended: its last event
// id (2024-11-05 cannot resume a stream with it; kept for diagnostics) and
// the reconnection time the server asked for with retry:, which sets the
// first wait before reopening the stream.
type streamCursor struct {
	lastEventID string
	retry       time.Duration
	hasRetry    bool
}

// Header values shared by all requests; net/http never writes to them.
var (
	acceptSSE = []string{"text/event-stream"}
	typeJSON  = []string{"application/json"}
)

// Dial opens the SSE stream at sseURL (an http or https URL) with a GET
// that accepts text/event-stream, and waits for its first event, which
// must be "endpoint". ctx bounds the whole wait: when it is done first,
// Dial closes the GET and returns an error wrapping ctx.Err(). Once Dial has
// returned, ctx no longer matters: the stream lives until Close, and when
// the server ends it the transport reconnects (see Options.Reconnect).
//
// Errors: a non-2xx answer is a *jsonrpc.HTTPError; a 2xx answer that is
// not an event stream is a *NotSSEError; a stream that does not start with
// a usable endpoint event wraps ErrNoEndpoint; an endpoint on another
// origin than sseURL is a *CrossOriginError; a redirect of the GET that the
// redirect policy refuses (see Options.HTTPClient) is a
// *jsonrpc.RedirectError. All are wrapped: use errors.As and errors.Is.
func Dial(ctx context.Context, sseURL string, opts Options) (*Transport, error) {
	home, err := url.Parse(sseURL)
	if err != nil {
		return nil, fmt.Errorf("HTTP+SSE: SSE URL: %w", origin.RedactError(err)) // url.Parse's error repeats the URL
	}
	if home.Scheme != "http" && home.Scheme != "https" {
		return nil, fmt.Errorf("HTTP+SSE: SSE URL %q: scheme must be http or https", origin.Redact(home))
	}
	if home.Host == "" {
		return nil, fmt.Errorf("HTTP+SSE: SSE URL %q: no host", origin.Redact(home))
	}
	client := origin.Guard(opts.HTTPClient)
	stream := *client
	stream.Timeout = 0
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	policy := reconnect.DefaultPolicy()
	if opts.Reconnect != nil {
		policy = *opts.Reconnect
	}

	t := &Transport{
		sseURL:  origin.Redact(home),
		origin:  home,
		stream:  &stream,
		post:    retry.NewSender(policy, opts.HTTPClient, logger), // Sender adds the redirect policy itself
		header:  opts.Header.Clone(),
		log:     logger,
		maxSize: opts.MaxEventSize,
		reopen:  !opts.NoReconnect,
		backoff: retry.Start(policy),
		queue:   wire.NewQueue(),
	}
	t.ctx, t.cancel = context.WithCancelCause(context.Background())
	sctx, scancel := context.WithCancelCause(t.ctx)
	// Until the endpoint is known, ctx may end the dial; afterwards only
	// Close or the server end the stream.
	stop := context.AfterFunc(ctx, func() { t.cancel(context.Cause(ctx)) })

	rd, body, u, err := t.open(ctx, sctx)
	if !stop() && err == nil {
		// ctx ended just as the endpoint arrived: honour it.
		err = fmt.Errorf("HTTP+SSE: GET %s: %w", t.sseURL, ctx.Err())
	}
	if err != nil {
		if body != nil {
			body.Close()
		}
		scancel(err)
		t.cancel(err)
		return nil, err
	}
	s := &session{endpoint: u.String(), redacted: origin.Redact(u), ctx: sctx, cancel: scancel}
	t.sess, t.endpoint = s, s.endpoint
	t.log.Debug("legacy: connected", "url", t.sseURL, "endpoint", origin.Redact(u))
	t.wg.Add(1)
	go t.run(rd, body, s)
	return t, nil
}

// open sends the GET, as part of reqCtx, and reads the stream up to the
// endpoint event; ctx is what the caller waits on (it tells a wait cut
// short from a failure). On success it returns the reader positioned after
// that event, the body, which the caller closes, and the endpoint; on
// failure the body may be returned too, and so may the reader (for a retry:
// field the stream sent before failing).
func (t *Transport) open(ctx, reqCtx context.Context) (*sse.Reader, io.ReadCloser, *url.URL, error) {
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, t.origin.String(), nil)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("HTTP+SSE: %w", err)
	}
	for k, v := range t.header {
		req.Header[k] = v
	}
	req.Header["Accept"] = acceptSSE
	resp, err := t.stream.Do(req)
	if err != nil {
		return nil, nil, nil, t.dialFailed(ctx, origin.RedactError(err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var err error = wire.NewHTTPError(resp, http.MethodGet, t.sseURL)
		if retry.IsThrottle(resp.StatusCode) {
			if d, ok := retry.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				err = &throttledError{wait: d, err: err}
			}
		}
		return nil, resp.Body, nil, fmt.Errorf("HTTP+SSE: %w", err)
	}
	ct := resp.Header.Get("Content-Type")
	if wire.MediaType(ct) != "text/event-stream" {
		wire.Drain(resp.Body)
		nerr := &NotSSEError{URL: t.sseURL, Status: resp.StatusCode, ContentType: wire.Excerpt([]byte(ct))}
		return nil, resp.Body, nil, fmt.Errorf("HTTP+SSE: %w", nerr)
	}

	rd := sse.NewReader(resp.Body, t.maxSize)
	ev, err := rd.Next()
	if err != nil {
		if ctx.Err() != nil {
			return rd, resp.Body, nil, t.dialFailed(ctx, err)
		}
		if errors.Is(err, io.EOF) {
			return rd, resp.Body, nil, fmt.Errorf("HTTP+SSE: GET %s: the stream ended before the endpoint event: %w", t.sseURL, ErrNoEndpoint)
		}
		return rd, resp.Body, nil, fmt.Errorf("HTTP+SSE: GET %s: the stream broke before the endpoint event: %w: %w", t.sseURL, ErrNoEndpoint, err)
	}
	if ev.Type != "endpoint" {
		return rd, resp.Body, nil, fmt.Errorf("HTTP+SSE: GET %s: the first event is %q, not \"endpoint\": %w",
			t.sseURL, wire.Excerpt([]byte(ev.Type)), ErrNoEndpoint)
	}
	if len(ev.Data) > MaxEndpointLen {
		return rd, resp.Body, nil, fmt.Errorf("HTTP+SSE: GET %s: the endpoint event holds %d bytes, more than %d: %w",
			t.sseURL, len(ev.Data), MaxEndpointLen, ErrNoEndpoint)
	}
	// Relative references resolve against the URL the stream came from,
	// after redirects; the origin check is against the URL the host gave.
	base := t.origin
	if resp.Request != nil && resp.Request.URL != nil {
		base = resp.Request.URL
	}
	u, err := resolveEndpoint(ev.Data, base, t.origin)
	if err != nil {
		return rd, resp.Body, nil, fmt.Errorf("HTTP+SSE: GET %s: %w", t.sseURL, err)
	}
	return rd, resp.Body, u, nil
}

// dialFailed returns the error for a failed GET: the caller's ctx error
// when ctx is what ended it.
func (t *Transport) dialFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("HTTP+SSE: GET %s: %w", t.sseURL, ctx.Err())
	}
	if re, ok := errors.AsType[*jsonrpc.RedirectError](err); ok {
		return fmt.Errorf("HTTP+SSE: %w", re) // it names the GET and both URLs
	}
	return fmt.Errorf("HTTP+SSE: GET %s: %w", t.sseURL, err)
}

// Endpoint returns the URL the transport POSTs to: the endpoint event's
// URI resolved against the SSE URL. While the transport reconnects it is
// the endpoint of the lost session; once the new stream has announced its
// endpoint, that one. It may carry the session id, and the user
// information of the SSE URL; do not log it carelessly.
func (t *Transport) Endpoint() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.endpoint
}

var errRecvClosed = fmt.Errorf("HTTP+SSE: recv: %w", jsonrpc.ErrClosed)

// Recv returns the next message from the server, in the order the messages
// arrived on the stream, waiting until there is one.
//
// When the stream drops and the transport reconnects, Recv returns, after
// the messages the lost stream delivered, a *jsonrpc.SessionLostError whose
// Cause wraps ErrConnectionLost; Recv may be called again, and returns the
// messages of the new stream. When the transport ends for good (reconnection
// off, given up or refused), Recv returns the messages still queued and then
// an error wrapping ErrConnectionLost. After Close it returns an error
// wrapping jsonrpc.ErrClosed, and messages still queued are dropped.
func (t *Transport) Recv() (*jsonrpc.Message, error) {
	return t.queue.Pop()
}

// TakeAnswers implements jsonrpc.AnswerTaker: a response that finds Recv
// waiting with nothing queued goes to take, on the stream's goroutine.
func (t *Transport) TakeAnswers(take func(*jsonrpc.Message) bool) { t.take.Set(take) }

// InterruptRecv wakes a Recv that waits, or the next one that would: it
// returns jsonrpc.ErrInterrupted, once (see jsonrpc.RecvInterrupter).
func (t *Transport) InterruptRecv() { t.queue.Interrupt() }

// Close ends the session: it closes the GET stream (or ends a reconnection
// under way, its wait or its GET), cancels every POST in flight (their
// Sends return errors wrapping jsonrpc.ErrClosed) and returns once the
// transport's goroutines have exited. It is idempotent and always returns
// nil; 2024-11-05 has no message that ends a session other than closing
// its stream.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		t.cancel(jsonrpc.ErrClosed)
		t.queue.Close(errRecvClosed)
		t.wg.Wait()
	})
	return nil
}

var _ jsonrpc.Transport = (*Transport)(nil)
