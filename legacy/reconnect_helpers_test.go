package legacy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
)

// fast is a reconnection policy for tests: small delays, no jitter.
func fast() *reconnect.Policy {
	return &reconnect.Policy{InitialDelay: 5 * time.Millisecond, MaxDelay: 50 * time.Millisecond, Jitter: -1, MaxAttempts: 5}
}

// flaky is an HTTP+SSE server whose streams can be ended, cut or refused
// one by one. The n-th GET (from 1) is answered as onGET says, by default
// with a stream whose endpoint is /message?sessionId=s<n>; POSTs to a
// session's endpoint are accepted with 202 and a request is answered on
// that session's stream, unless post says otherwise.
type flaky struct {
	*server
	// onGET decides the n-th GET before any stream is served: a status
	// other than 0 answers with it (and headers h), block waits until the
	// request is cancelled. Set before Dial.
	onGET func(n int, h http.Header) (status int, block bool)
	// prelude is raw event text sent before the endpoint event of stream n.
	prelude func(n int) string
	// endpoint is the data of the endpoint event of stream n.
	endpoint func(n int) string
	post     handler // nil: accept and answer on the stream

	mu      sync.Mutex
	gets    []time.Time        // arrival of each GET
	live    map[string]*stream // by session id
	streams chan *stream       // every stream served, in order
}

// stream is one served SSE stream.
type stream struct {
	n      int
	events chan string   // raw event text to send
	end    chan struct{} // close to end the stream cleanly
	cut    chan struct{} // close to drop the connection mid-event
	ended  time.Time     // when the handler returned; read after done
	done   chan struct{} // closed when the handler returned
}

func newFlaky(t testing.TB) *flaky {
	t.Helper()
	f := &flaky{live: map[string]*stream{}, streams: make(chan *stream, 64)}
	f.server = newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.Method {
		case http.MethodGet:
			f.get(w, r)
		case http.MethodPost:
			if f.post != nil {
				f.post(w, r, body)
				return
			}
			f.echo(w, r, body)
		}
	})
	return f
}

func (f *flaky) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.gets = append(f.gets, time.Now())
	n := len(f.gets)
	f.mu.Unlock()
	if f.onGET != nil {
		status, block := f.onGET(n, w.Header())
		if block {
			<-r.Context().Done()
			return
		}
		if status != 0 {
			w.WriteHeader(status)
			return
		}
	}
	s := &stream{n: n, events: make(chan string, 64), end: make(chan struct{}), cut: make(chan struct{}), done: make(chan struct{})}
	id := fmt.Sprintf("s%d", n)
	f.mu.Lock()
	f.live[id] = s
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.live, id)
		f.mu.Unlock()
		s.ended = time.Now()
		close(s.done)
	}()
	send := startSSE(w)
	if f.prelude != nil {
		send(f.prelude(n))
	}
	ep := "/message?sessionId=" + id
	if f.endpoint != nil {
		ep = f.endpoint(n)
	}
	send(endpointEvent(ep))
	f.streams <- s
	for {
		select {
		case ev := <-s.events:
			send(ev)
		case <-s.end:
			return
		case <-s.cut:
			send("event: message\ndata: {\"jsonrpc\":")
			panic(http.ErrAbortHandler)
		case <-r.Context().Done():
			return
		}
	}
}

// echo accepts a POST for a live session with 202 and answers a request on
// its stream with a result that names the method and the session; an
// unknown session is a 404.
func (f *flaky) echo(w http.ResponseWriter, r *http.Request, body []byte) {
	id := r.URL.Query().Get("sessionId")
	f.mu.Lock()
	s := f.live[id]
	f.mu.Unlock()
	if s == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	m, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if m.IsRequest() {
		s.events <- messageEvent(response(m.ID.Raw(), `{"method":"`+m.Method+`","session":"`+id+`"}`))
	}
	w.WriteHeader(http.StatusAccepted)
}

// next returns the next stream the server serves.
func (f *flaky) next(t testing.TB) *stream {
	t.Helper()
	select {
	case s := <-f.streams:
		return s
	case <-time.After(wait):
		t.Fatal("no new stream within", wait)
	}
	return nil
}

// getTimes returns when each GET arrived.
func (f *flaky) getTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.gets...)
}

// posts returns the paths of the POSTs received so far.
func (f *flaky) posts() []string {
	var out []string
	for _, r := range f.Requests() {
		if r.Method == http.MethodPost {
			out = append(out, r.Path)
		}
	}
	return out
}

// feed is a host's Recv loop that goes on after a SessionLostError: each
// item is a message or an error, and the loop ends after any other error.
type feed chan any

func recvAll(t testing.TB, tr *Transport) feed {
	f := make(feed, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := tr.Recv()
			if err != nil {
				f <- err
				var lost *jsonrpc.SessionLostError
				if !errors.As(err, &lost) {
					return
				}
				continue
			}
			f <- m
		}
	}()
	t.Cleanup(func() {
		tr.Close()
		<-done
	})
	return f
}

// dialFlaky dials f's /sse with opts and runs a Recv loop.
func dialFlaky(t testing.TB, f *flaky, opts Options) (*Transport, feed) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	tr, err := Dial(ctx, f.URL+"/sse", opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr, recvAll(t, tr)
}

func (fd feed) item(t testing.TB) any {
	t.Helper()
	select {
	case it := <-fd:
		return it
	case <-time.After(wait):
		t.Fatal("nothing from Recv within", wait)
	}
	return nil
}

// msg returns the next item, which must be a message.
func (fd feed) msg(t testing.TB) *jsonrpc.Message {
	t.Helper()
	switch it := fd.item(t).(type) {
	case *jsonrpc.Message:
		return it
	default:
		t.Fatalf("Recv = %v, want a message", it)
	}
	return nil
}

// lost returns the next item, which must be a *jsonrpc.SessionLostError
// whose cause wraps ErrConnectionLost.
func (fd feed) lost(t testing.TB) *jsonrpc.SessionLostError {
	t.Helper()
	it := fd.item(t)
	err, _ := it.(error)
	var lost *jsonrpc.SessionLostError
	if !errors.As(err, &lost) || !errors.Is(err, jsonrpc.ErrSessionExpired) || !errors.Is(lost.Cause, ErrConnectionLost) {
		t.Fatalf("Recv = %v, want a SessionLostError wrapping ErrConnectionLost", it)
	}
	return lost
}

// terminal returns the next item, which must be an error that ends Recv.
func (fd feed) terminal(t testing.TB) error {
	t.Helper()
	it := fd.item(t)
	err, _ := it.(error)
	var lost *jsonrpc.SessionLostError
	if err == nil || errors.As(err, &lost) {
		t.Fatalf("Recv = %v, want a terminal error", it)
	}
	return err
}

// initialize is an initialize request.
func initialize(id int64) *jsonrpc.Message {
	return &jsonrpc.Message{ID: jsonrpc.Int(id), Method: "initialize", Params: []byte(`{"protocolVersion":"2024-11-05"}`)}
}

// streamDone waits until tr's stream goroutine has returned: it makes
// every GET, so none comes after.
func streamDone(t *testing.T, tr *Transport) {
	t.Helper()
	done := make(chan struct{})
	go func() { tr.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("the stream goroutine still runs")
	}
}
