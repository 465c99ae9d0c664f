package modern

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/internal/testkit"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
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

const initResult = `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"test","version":"1"}}`

// mcp answers like a small MCP server: initialize gets initResult (and the
// session id, if any), other requests get {"ok":true}, notifications and
// responses get 202, GET gets 405 and DELETE 200. Tests wrap it.
func mcp(session string) handler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.Method {
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		case http.MethodDelete:
			return
		}
		m, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !m.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{"ok":true}`
		if m.Method == "initialize" {
			result = initResult
			if session != "" {
				w.Header().Set("Mcp-Session-Id", session)
			}
		}
		writeJSON(w, response(m.ID.Raw(), result))
	}
}

func response(id, result string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

// startSSE sends the headers of an event stream and returns a function
// that writes one event (data may hold a JSON message) and flushes it.
func startSSE(w http.ResponseWriter) func(event string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	f.Flush()
	return func(event string) {
		io.WriteString(w, event)
		f.Flush()
	}
}

func data(msg string) string { return "data: " + msg + "\n\n" }

func request(id int64, method string) *jsonrpc.Message {
	return &jsonrpc.Message{ID: jsonrpc.Int(id), Method: method, Params: []byte(`{"name":"echo"}`)}
}

func notification(method string) *jsonrpc.Message {
	return &jsonrpc.Message{Method: method}
}

func initialize() *jsonrpc.Message {
	return &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "initialize",
		Params: []byte(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)}
}

// dial returns a transport to s, closed at the end of the test, and the
// channel its Recv loop feeds.
func dial(t *testing.T, s *server, opts Options) (*Transport, <-chan *jsonrpc.Message) {
	t.Helper()
	tr, ch, _ := dialLost(t, s, opts)
	return tr, ch
}

// dialLost is dial whose Recv loop goes on after a *jsonrpc.SessionLostError
// or a *jsonrpc.GapError, passing it on the third channel.
func dialLost(t *testing.T, s *server, opts Options) (*Transport, <-chan *jsonrpc.Message, <-chan error) {
	t.Helper()
	tr, err := New(s.URL+"/mcp", opts)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *jsonrpc.Message, 1000)
	lost := make(chan error, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := tr.Recv()
			var sl *jsonrpc.SessionLostError
			var gap *jsonrpc.GapError
			if errors.As(err, &sl) || errors.As(err, &gap) {
				lost <- err
				continue
			}
			if err != nil {
				return
			}
			ch <- m
		}
	}()
	t.Cleanup(func() {
		tr.Close()
		<-done
	})
	return tr, ch, lost
}

// next returns the next message from the Recv loop.
func next(t *testing.T, ch <-chan *jsonrpc.Message) *jsonrpc.Message {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(wait):
		t.Fatal("no message within", wait)
		return nil
	}
}

// none checks that the Recv loop got nothing more.
func none(t *testing.T, ch <-chan *jsonrpc.Message) {
	t.Helper()
	select {
	case m := <-ch:
		t.Fatalf("unexpected message %s", describe(m))
	case <-time.After(20 * time.Millisecond):
	}
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

func send(t *testing.T, tr *Transport, m *jsonrpc.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := tr.Send(ctx, m); err != nil {
		t.Fatalf("Send %s: %v", describe(m), err)
	}
}

func sendErr(tr *Transport, m *jsonrpc.Message) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return tr.Send(ctx, m)
}

// handshake sends initialize and notifications/initialized and consumes
// the initialize response.
func handshake(t *testing.T, tr *Transport, ch <-chan *jsonrpc.Message) {
	t.Helper()
	send(t, tr, initialize())
	if got := describe(next(t, ch)); !strings.HasPrefix(got, "response 1 ") {
		t.Fatalf("initialize answered by %s", got)
	}
	send(t, tr, notification("notifications/initialized"))
}

// logs records what the transport logged.
type logs = logtest.Recorder

// tiny is a reconnect policy with waits short enough for tests: 1 ms
// doubling to 20 ms, no jitter, 3 attempts without progress.
func tiny() *reconnect.Policy {
	return &reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond,
		Jitter: -1, MaxAttempts: 3, Budget: wait, MaxRetryAfter: time.Second}
}
