package testservers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
)

// errStreamClosed: the stream was ended, or broke; nothing more goes on it.
var errStreamClosed = errors.New("testservers: stream closed")

// sseStream writes server-sent events on one HTTP response: the SSE answer
// to a POST, or a GET stream. Writers from many goroutines are serialized;
// once closed (by its handler, which must not return while a write is in
// progress) nothing more is written.
type sseStream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	ids     bool   // events carry ids
	prefix  string // the stream's part of its event ids, unique in the session
	seq     int
	started bool // the header is written
	closed  bool
}

func newSSEStream(w http.ResponseWriter, prefix string, ids bool) *sseStream {
	return &sseStream{w: w, rc: http.NewResponseController(w), prefix: prefix, ids: ids}
}

// start writes the response header and, when events carry ids, the
// priming event: an id and empty data. The first event starts a stream
// not started yet.
func (s *sseStream) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started && !s.closed {
		s.startLocked()
	}
}

func (s *sseStream) startLocked() {
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	s.w.WriteHeader(http.StatusOK)
	if s.ids {
		_, _ = s.w.Write([]byte("id: " + s.nextID() + "\ndata:\n\n"))
	}
	if err := s.rc.Flush(); err != nil {
		s.closed = true
	}
}

func (s *sseStream) nextID() string {
	id := s.prefix + "-" + strconv.Itoa(s.seq)
	s.seq++
	return id
}

// write sends m as one "message" event.
func (s *sseStream) write(m *jsonrpc.Message) error {
	data, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	// JSON as encoded holds no raw newline, so the message is one data line.
	return s.event("message", data)
}

// event sends one event of type name whose data, one line, is data.
func (s *sseStream) event(name string, data []byte) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	if !s.started {
		s.startLocked()
	}
	head := "event: " + name + "\n"
	if s.ids {
		head += "id: " + s.nextID() + "\n"
	}
	head += "data: "
	if _, err = s.w.Write([]byte(head)); err == nil {
		if _, err = s.w.Write(data); err == nil {
			if _, err = s.w.Write([]byte("\n\n")); err == nil {
				err = s.rc.Flush()
			}
		}
	}
	if err != nil {
		s.closed = true
	}
	return err
}

// close ends writing; it waits for a write in progress.
func (s *sseStream) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// exchange is one POST that carried requests: it ends when each of them
// has been answered (or ended without an answer). Messages the core sends
// while handling them go on the POST's SSE stream; in JSON mode (stream
// nil) the responses are collected for one application/json body.
type exchange struct {
	mu        sync.Mutex
	stream    *sseStream
	remaining int
	responses []*jsonrpc.Message // JSON mode only
	failed    bool               // some response was an error
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

func newExchange(requests int, stream *sseStream) *exchange {
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
	}
}

// abandon ends the exchange early (client gone, session ended, server
// closing): later replies are dropped. It returns the responses collected
// and whether every request had ended.
func (ex *exchange) abandon() (responses []*jsonrpc.Message, complete, failed bool) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	complete = ex.remaining == 0
	if !complete {
		ex.remaining = 0
		close(ex.done)
	}
	if ex.stream != nil {
		ex.stream.close()
	}
	return ex.responses, complete, ex.failed
}
