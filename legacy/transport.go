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

	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/sse"
)

// Options configure Dial. The zero value works.
type Options struct {
	// HTTPClient sends every request. Nil means http.DefaultClient. The
	// POSTs use it as given; the long-lived GET stream uses a shallow copy
	// whose Timeout is zero, so that a client-wide timeout does not cut the
	// stream (its RoundTripper, Jar and redirect policy are kept).
	HTTPClient *http.Client
	// Header holds static headers sent on the GET and on every POST, e.g.
	// Authorization. Dial copies it.
	Header http.Header
	// Logger receives what the transport ignores, drops or gives up on.
	// Nil discards.
	Logger *slog.Logger
	// MaxEventSize bounds one SSE event. Zero means sse.DefaultMaxEventSize.
	MaxEventSize int
}

// Transport is an HTTP+SSE client transport, connected by Dial. It
// implements jsonrpc.Transport; all its methods are safe for concurrent use.
type Transport struct {
	endpoint string // the POST URL, as used
	redacted string // the POST URL for errors and logs
	sseURL   string // the SSE URL for errors and logs, password redacted
	client   *http.Client
	header   http.Header
	log      *slog.Logger
	maxSize  int

	queue *wire.Queue

	// ctx is the life of the session: every request derives from it. It
	// is cancelled with ErrClosed by Close, or with the stream's error when
	// the stream ends first (see lost).
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the stream reader

	mu     sync.Mutex
	closed bool
	cursor streamCursor // where the stream stood when it ended

	closeOnce sync.Once
}

// streamCursor is where the SSE stream stood when it ended: what reopening
// it with Last-Event-ID, after the server's retry delay, would need.
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
// returned, ctx no longer matters: the stream lives until Close or until
// the server ends it.
//
// Errors: a non-2xx answer is a *jsonrpc.HTTPError; a 2xx answer that is
// not an event stream is a *NotSSEError; a stream that does not start with
// a usable endpoint event wraps ErrNoEndpoint; an endpoint on another
// origin than sseURL is a *CrossOriginError. All are wrapped: use errors.As
// and errors.Is.
func Dial(ctx context.Context, sseURL string, opts Options) (*Transport, error) {
	origin, err := url.Parse(sseURL)
	if err != nil {
		return nil, fmt.Errorf("legacy: SSE URL: %w", err)
	}
	if origin.Scheme != "http" && origin.Scheme != "https" {
		return nil, fmt.Errorf("legacy: SSE URL %q: scheme must be http or https", origin.Redacted())
	}
	if origin.Host == "" {
		return nil, fmt.Errorf("legacy: SSE URL %q: no host", origin.Redacted())
	}
	client := opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	stream := *client
	stream.Timeout = 0
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	t := &Transport{
		sseURL:  origin.Redacted(),
		client:  client,
		header:  opts.Header.Clone(),
		log:     logger,
		maxSize: opts.MaxEventSize,
		queue:   wire.NewQueue(),
	}
	t.ctx, t.cancel = context.WithCancelCause(context.Background())
	// Until the endpoint is known, ctx may end the dial; afterwards only
	// Close or the server end the stream.
	stop := context.AfterFunc(ctx, func() { t.cancel(context.Cause(ctx)) })

	rd, body, err := t.open(ctx, &stream, origin)
	if !stop() && err == nil {
		// ctx ended just as the endpoint arrived: honour it.
		err = fmt.Errorf("legacy: GET %s: %w", t.sseURL, ctx.Err())
	}
	if err != nil {
		if body != nil {
			body.Close()
		}
		t.cancel(err)
		return nil, err
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer body.Close()
		t.read(rd)
	}()
	return t, nil
}

// open sends the GET and reads the stream up to the endpoint event. On
// success it returns the reader positioned after that event and the body,
// which the caller closes; on failure the body may be returned too.
func (t *Transport) open(ctx context.Context, client *http.Client, origin *url.URL) (*sse.Reader, io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, origin.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("legacy: %w", err)
	}
	for k, v := range t.header {
		req.Header[k] = v
	}
	req.Header["Accept"] = acceptSSE
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, t.dialFailed(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		herr := wire.NewHTTPError(resp, http.MethodGet, t.sseURL)
		return nil, resp.Body, fmt.Errorf("legacy: %w", herr)
	}
	ct := resp.Header.Get("Content-Type")
	if wire.MediaType(ct) != "text/event-stream" {
		wire.Drain(resp.Body)
		nerr := &NotSSEError{URL: t.sseURL, Status: resp.StatusCode, ContentType: wire.Excerpt([]byte(ct))}
		return nil, resp.Body, fmt.Errorf("legacy: %w", nerr)
	}

	rd := sse.NewReader(resp.Body, t.maxSize)
	ev, err := rd.Next()
	if err != nil {
		if ctx.Err() != nil {
			return nil, resp.Body, t.dialFailed(ctx, err)
		}
		if errors.Is(err, io.EOF) {
			return nil, resp.Body, fmt.Errorf("legacy: GET %s: the stream ended before the endpoint event: %w", t.sseURL, ErrNoEndpoint)
		}
		return nil, resp.Body, fmt.Errorf("legacy: GET %s: the stream broke before the endpoint event: %w: %w", t.sseURL, ErrNoEndpoint, err)
	}
	if ev.Type != "endpoint" {
		return nil, resp.Body, fmt.Errorf("legacy: GET %s: the first event is %q, not \"endpoint\": %w",
			t.sseURL, wire.Excerpt([]byte(ev.Type)), ErrNoEndpoint)
	}
	// Relative references resolve against the URL the stream came from,
	// after redirects; the origin check is against the URL the host gave.
	base := origin
	if resp.Request != nil && resp.Request.URL != nil {
		base = resp.Request.URL
	}
	u, err := resolveEndpoint(ev.Data, base, origin)
	if err != nil {
		return nil, resp.Body, fmt.Errorf("legacy: GET %s: %w", t.sseURL, err)
	}
	t.endpoint, t.redacted = u.String(), u.Redacted()
	t.log.Debug("legacy: connected", "url", t.sseURL, "endpoint", t.redacted)
	return rd, resp.Body, nil
}

// dialFailed returns Dial's error for a failed GET: the caller's ctx error
// when ctx is what ended it.
func (t *Transport) dialFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("legacy: GET %s: %w", t.sseURL, ctx.Err())
	}
	return fmt.Errorf("legacy: GET %s: %w", t.sseURL, err)
}

// Endpoint returns the URL the transport POSTs to: the endpoint event's
// URI resolved against the SSE URL. It may carry the session id, and the
// user information of the SSE URL; do not log it carelessly.
func (t *Transport) Endpoint() string { return t.endpoint }

var errRecvClosed = fmt.Errorf("legacy: recv: %w", jsonrpc.ErrClosed)

// Recv returns the next message from the server, in the order the messages
// arrived on the stream, waiting until there is one. When the stream has
// ended, Recv returns the messages still queued and then an error wrapping
// ErrConnectionLost. After Close it returns an error wrapping
// jsonrpc.ErrClosed, and messages still queued are dropped.
func (t *Transport) Recv() (*jsonrpc.Message, error) {
	return t.queue.Pop()
}

// Close ends the session: it closes the GET stream, cancels every POST in
// flight (their Sends return errors wrapping jsonrpc.ErrClosed) and returns
// once the transport's goroutines have exited. It is idempotent and always
// returns nil; 2024-11-05 has no message that ends a session other than
// closing its stream.
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
