package legacy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/internal/testkit"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/jsonrpc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every blocking step of a test.
const wait = 5 * time.Second

// The recording server of these tests.
type (
	seen    = testkit.Request
	handler = testkit.Handler
	server  = testkit.Server
)

var newServer = testkit.NewServer

// startSSE sends the headers of an event stream and returns a function
// that writes raw event text and flushes it.
func startSSE(w http.ResponseWriter) func(text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	f.Flush()
	return func(text string) {
		io.WriteString(w, text)
		f.Flush()
	}
}

func endpointEvent(uri string) string { return "event: endpoint\ndata: " + uri + "\n\n" }
func messageEvent(msg string) string  { return "event: message\ndata: " + msg + "\n\n" }

// sseServer is a small HTTP+SSE server: GET /sse opens a stream that starts
// with the endpoint event and then carries whatever is put on events until
// the client goes away or end is closed; POST answers with post, by default
// 202 and, for a request, a response on the stream whose result names the
// method. It serves one stream at a time. Tests may change its fields
// before they Dial.
type sseServer struct {
	*server
	endpoint string                  // data of the endpoint event
	events   chan string             // raw event text for the stream
	end      chan struct{}           // close to end the stream
	gone     chan struct{}           // closed when the GET handler returns
	post     handler                 // nil: accept and echo
	onGET    func(send func(string)) // runs after the endpoint event, if set
}

func newSSEServer(t testing.TB) *sseServer {
	t.Helper()
	l := &sseServer{
		endpoint: "/message?sessionId=s1",
		events:   make(chan string, 1024),
		end:      make(chan struct{}),
		gone:     make(chan struct{}),
	}
	l.server = newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.Method {
		case http.MethodGet:
			defer close(l.gone)
			send := startSSE(w)
			send(endpointEvent(l.endpoint))
			if l.onGET != nil {
				l.onGET(send)
			}
			for {
				select {
				case ev := <-l.events:
					send(ev)
				case <-l.end:
					return
				case <-r.Context().Done():
					return
				}
			}
		case http.MethodPost:
			if l.post != nil {
				l.post(w, r, body)
				return
			}
			l.echo(w, body)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
	return l
}

// echo accepts a POST with 202 and answers a request on the stream.
func (l *sseServer) echo(w http.ResponseWriter, body []byte) {
	m, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if m.IsRequest() {
		l.events <- messageEvent(response(m.ID.Raw(), `{"method":"`+m.Method+`"}`))
	}
	w.WriteHeader(http.StatusAccepted)
}

func response(id, result string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`
}

func note(method string) string { return `{"jsonrpc":"2.0","method":"` + method + `"}` }

func request(id int64, method string) *jsonrpc.Message {
	return &jsonrpc.Message{ID: jsonrpc.Int(id), Method: method, Params: []byte(`{"name":"echo"}`)}
}

func notification(method string) *jsonrpc.Message { return &jsonrpc.Message{Method: method} }

// recvLoop is a host's Recv loop: messages go to msgs, and the error that
// ends the loop to end.
type recvLoop struct {
	msgs chan *jsonrpc.Message
	end  chan error
}

// dial connects to sseURL, closes the transport at the end of the test and
// runs a Recv loop.
func dial(t testing.TB, sseURL string, opts Options) (*Transport, *recvLoop) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	tr, err := Dial(ctx, sseURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	loop := &recvLoop{msgs: make(chan *jsonrpc.Message, 1024), end: make(chan error, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := tr.Recv()
			if err != nil {
				loop.end <- err
				return
			}
			loop.msgs <- m
		}
	}()
	t.Cleanup(func() {
		tr.Close()
		<-done
	})
	return tr, loop
}

// dialErr runs Dial expecting it to fail.
func dialErr(t testing.TB, sseURL string, opts Options) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	tr, err := Dial(ctx, sseURL, opts)
	if err == nil {
		tr.Close()
		t.Fatal("Dial succeeded; want an error")
	}
	return err
}

// next returns the next message of the Recv loop.
func (l *recvLoop) next(t testing.TB) *jsonrpc.Message {
	t.Helper()
	select {
	case m := <-l.msgs:
		return m
	case err := <-l.end:
		// Both may be ready at once: the messages came first.
		select {
		case m := <-l.msgs:
			l.end <- err
			return m
		default:
		}
		t.Fatalf("Recv ended: %v", err)
	case <-time.After(wait):
		t.Fatal("no message within", wait)
	}
	return nil
}

// ended returns the error that ended the Recv loop, failing the test if a
// message comes first.
func (l *recvLoop) ended(t testing.TB) error {
	t.Helper()
	select {
	case m := <-l.msgs:
		t.Fatalf("unexpected message %s", describe(m))
	case err := <-l.end:
		return err
	case <-time.After(wait):
		t.Fatal("Recv did not end within", wait)
	}
	return nil
}

// describe is a message in a few words, for comparisons.
func describe(m *jsonrpc.Message) string {
	switch {
	case m.IsRequest():
		return "request " + m.Method + " " + m.ID.Raw()
	case m.IsNotification():
		return "notification " + m.Method
	case m.Error != nil:
		return fmt.Sprintf("error %s %d", m.ID.Raw(), m.Error.Code)
	default:
		return "response " + m.ID.Raw() + " " + string(m.Result)
	}
}

func send(t testing.TB, tr *Transport, m *jsonrpc.Message) {
	t.Helper()
	if err := sendErr(tr, m); err != nil {
		t.Fatalf("Send %s: %v", describe(m), err)
	}
}

func sendErr(tr *Transport, m *jsonrpc.Message) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return tr.Send(ctx, m)
}

// closed waits for ch to be closed.
func closed(t testing.TB, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wait):
		t.Fatal("timed out waiting for", what)
	}
}

// logs records what the transport logged.
type logs = logtest.Recorder
