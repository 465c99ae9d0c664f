package testservers

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/anymcp/anymcp/internal/servehttp"
	"github.com/anymcp/anymcp/jsonrpc"
)

// errStreamClosed: the stream was ended, or broke; nothing more goes on it.
var errStreamClosed = errors.New("test server: stream closed")

// sseConn writes server-sent events on one HTTP response: the SSE answer
// to a POST, a GET stream, or the resumption of a stream. Writers from
// many goroutines are serialized. Once closed nothing more is written;
// the handler that owns the response must call close (which waits for a
// write in progress) before it returns. done is closed when the server
// ends the connection by itself (a cut, or a write that failed): the
// handler then returns.
type sseConn struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	prime   string // the id of the priming event the header is followed by; none when ""
	started bool   // the header is written
	closed  bool
	dropped bool // cut without a retry: the handler aborts the connection (abortIfDropped)
	done    chan struct{}
	// noBuffering adds X-Accel-Buffering: no (the streams of 2026-07-28).
	noBuffering bool
}

func newSSEConn(w http.ResponseWriter, prime string) *sseConn {
	return &sseConn{w: w, rc: http.NewResponseController(w), prime: prime, done: make(chan struct{})}
}

// start writes the response header and the priming event, unless done
// already. The first event starts a connection not started yet.
func (c *sseConn) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started && !c.closed {
		c.startLocked()
	}
}

func (c *sseConn) startLocked() {
	c.started = true
	servehttp.StartStream(c.w, c.noBuffering)
	if c.prime != "" {
		_ = servehttp.WritePrime(c.w, c.prime, 0)
	}
	if err := c.rc.Flush(); err != nil {
		c.failLocked()
	}
}

// message sends m as one "message" event without id.
func (c *sseConn) message(m *jsonrpc.Message) error {
	data, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	return c.event("message", "", data)
}

// event sends one event of type name, with id unless it is "".
func (c *sseConn) event(name, id string, data []byte) (err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errStreamClosed
	}
	if !c.started {
		c.startLocked()
		if c.closed {
			return errStreamClosed
		}
	}
	if err = servehttp.WriteEvent(c.w, id, name, data); err == nil {
		err = c.rc.Flush()
	}
	if err != nil {
		c.failLocked()
	}
	return err
}

// answerInstead answers the request with a JSON body and status instead
// of an event stream, if nothing of the stream is written yet, and
// reports whether it did. Nothing more is written after it.
func (c *sseConn) answerInstead(status int, body []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started || c.closed {
		return false
	}
	c.started, c.closed = true, true
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(status)
	_, _ = c.w.Write(body)
	return true
}

// comment sends an SSE comment line, a keep-alive, on a started stream.
func (c *sseConn) comment() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || !c.started {
		return errStreamClosed
	}
	err := servehttp.WriteComment(c.w)
	if err == nil {
		err = c.rc.Flush()
	}
	if err != nil {
		c.failLocked()
	}
	return err
}

// failLocked marks a connection that can take no more writes.
func (c *sseConn) failLocked() {
	if !c.closed {
		c.closed = true
		close(c.done)
	}
}

// cut ends the connection from the server's side. With retry > 0 it is
// the close a server makes to have its client poll (the spec's SSE
// polling): "retry: <ms>" goes out, then the stream ends cleanly. Without,
// it is a dropped connection: the handler, when it returns, aborts it
// (abortIfDropped), so the client reads an unexpected EOF, as when the
// network or the server fails, not a clean end.
func (c *sseConn) cut(retry time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if !c.started {
		c.startLocked()
	}
	if retry > 0 {
		if err := servehttp.WriteRetry(c.w, retry); err == nil {
			_ = c.rc.Flush()
		}
	} else {
		c.dropped = true
	}
	c.failLocked()
}

// end ends the connection cleanly from the server's side and tells the
// handler to return.
func (c *sseConn) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked()
}

// abortIfDropped aborts the connection of a stream cut as dropped; the
// handler that owns c defers it. net/http closes the connection without
// ending the response, and logs nothing for http.ErrAbortHandler.
func (c *sseConn) abortIfDropped() {
	c.mu.Lock()
	dropped := c.dropped
	c.mu.Unlock()
	if dropped {
		panic(http.ErrAbortHandler)
	}
}

// close ends writing; it waits for a write in progress.
func (c *sseConn) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// exchange is one POST that carried requests: it ends when each of them
// has been answered (or ended without an answer). Messages the core sends
// while handling them go on the POST's event stream; in JSON mode (stream
// nil) the responses are collected for one application/json body.
type exchange struct {
	mu        sync.Mutex
	stream    *eventStream
	remaining int
	responses []*jsonrpc.Message // JSON mode only
	failed    bool               // some response was an error
	begun     bool               // the core took a request of it to run
	done      chan struct{}
	// beforeReply, when set, sees each request's end (resp nil: no
	// response) before anything of it is written.
	beforeReply func(resp *jsonrpc.Message)
}

type exchangeKey struct{}

func exchangeFrom(ctx context.Context) *exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

func newExchange(requests int, stream *eventStream) *exchange {
	return &exchange{remaining: requests, stream: stream, done: make(chan struct{})}
}

// send writes a notification or server request on the POST's stream, and
// reports whether it did: not in JSON mode, nor once the exchange is over
// or its stream gone.
func (ex *exchange) send(m *jsonrpc.Message) bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.stream == nil || ex.remaining == 0 {
		return false
	}
	return ex.stream.write(m) == nil
}

// reply records the end of one request of the exchange.
func (ex *exchange) reply(resp *jsonrpc.Message) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.remaining == 0 {
		return
	}
	if ex.beforeReply != nil {
		ex.beforeReply(resp)
	}
	if resp != nil {
		if resp.Error != nil {
			ex.failed = true
		}
		if ex.stream != nil {
			_ = ex.stream.write(resp)
		} else {
			ex.responses = append(ex.responses, resp)
		}
	}
	ex.remaining--
	if ex.remaining == 0 {
		close(ex.done)
		if ex.stream != nil {
			ex.stream.finish()
		}
	}
}

// begin records that the core took one of the exchange's requests to run.
func (ex *exchange) begin() {
	ex.mu.Lock()
	ex.begun = true
	ex.mu.Unlock()
}

// ran reports whether the core took a request of the exchange to run: its
// handler may have started. A server that then answers 404 or 503 would
// say it did not run; it drops the connection instead, as a server that
// fails while running a request does.
func (ex *exchange) ran() bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.begun
}

// abandon ends the exchange early (client gone from a stream that cannot
// be resumed, session ended, server closing): later replies are dropped.
// It returns the responses collected and whether every request had ended.
func (ex *exchange) abandon() (responses []*jsonrpc.Message, complete, failed bool) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	complete = ex.remaining == 0
	if !complete {
		ex.remaining = 0
		close(ex.done)
		if ex.stream != nil {
			ex.stream.finish()
		}
	}
	return ex.responses, complete, ex.failed
}
