package modern

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
)

// newTransport is a transport to s's endpoint with the given query (where
// a test puts a secret that no error may show), closed at the end of the
// test, with no Recv loop: the tests here look at Send's error only.
func newTransport(t *testing.T, url string, opts Options) *Transport {
	t.Helper()
	tr, err := New(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// A connection that breaks after the server read the whole request, before
// any answer: the server may have run it. Send's error says so, keeps the
// network error for errors.As, names no secret of the URL, and the request
// went out once.
func TestSendBrokenAfterRequestIsOutcomeUnknown(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		panic(http.ErrAbortHandler) // the body is read: drop the connection, no answer
	})
	tr := newTransport(t, s.URL+"/mcp?key=sekrit", Options{Common: httpopt.Common{Reconnect: tiny()}})
	err := sendErr(tr, request(5, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v; want an error matching ErrOutcomeUnknown", err)
	}
	if strings.Contains(err.Error(), "sekrit") {
		t.Errorf("the error shows the URL's query: %v", err)
	}
	if _, ok := errors.AsType[*jsonrpc.HTTPError](err); ok {
		t.Errorf("no answer came, yet the error holds an *HTTPError: %v", err)
	}
	if n := s.Count(http.MethodPost); n != 1 {
		t.Errorf("the request was POSTed %d times; want 1", n)
	}
}

// The HTTP client's Timeout runs out while the server works on a request
// it has read: the error matches ErrOutcomeUnknown and is still the
// client's timeout (a net.Error whose Timeout is true).
func TestSendClientTimeoutAfterRequestIsOutcomeUnknown(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		<-r.Context().Done() // works until the client gives up
	})
	tr := newTransport(t, s.URL+"/mcp", Options{Common: httpopt.Common{Reconnect: tiny(), HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}}})
	err := sendErr(tr, request(5, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v; want an error matching ErrOutcomeUnknown", err)
	}
	if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() {
		t.Errorf("the error is not the client's timeout any more: %v", err)
	}
	if n := s.Count(http.MethodPost); n != 1 {
		t.Errorf("the request was POSTed %d times; want 1", n)
	}
}

// The caller's ctx ends while the server works on a request it has read:
// the error matches both context.Canceled and ErrOutcomeUnknown.
func TestSendCancelledAfterRequestIsOutcomeUnknown(t *testing.T) {
	got := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		close(got)
		<-r.Context().Done()
	})
	tr := newTransport(t, s.URL+"/mcp", Options{Common: httpopt.Common{Reconnect: tiny()}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-got
		cancel()
	}()
	err := tr.Send(ctx, request(5, "tools/call"))
	if !errors.Is(err, context.Canceled) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v; want an error matching context.Canceled and ErrOutcomeUnknown", err)
	}
}

// A refused connection sends nothing: the error does not match
// ErrOutcomeUnknown.
func TestSendRefusedConnectionIsNotSent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	tr := newTransport(t, "http://"+addr+"/mcp", Options{Common: httpopt.Common{Reconnect: tiny()}})
	err = sendErr(tr, request(5, "tools/call"))
	if err == nil || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v; want an error that says the request was not sent", err)
	}
}

// A 429 says the server did not run the request; the resend that follows
// is what Send's error speaks of. Here the server goes away after its 429,
// so the resend finds the connection refused: the request never ran, and
// the error does not match ErrOutcomeUnknown.
func TestSendRefusedAfterThrottleIsNotSent(t *testing.T) {
	var s *server
	s = newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		s.Listener.Close() // the resend finds nothing listening
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	tr := newTransport(t, s.URL+"/mcp", Options{Common: httpopt.Common{Reconnect: tiny()}})
	err := sendErr(tr, request(5, "tools/call"))
	if err == nil || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v; want an error that says the request did not run", err)
	}
	if n := s.Count(http.MethodPost); n != 1 {
		t.Errorf("the server got %d POSTs; want 1", n)
	}
}

// After a 429, a resend whose connection breaks once the server read it
// may have run: the error matches ErrOutcomeUnknown.
func TestSendBrokenAfterThrottleIsOutcomeUnknown(t *testing.T) {
	first := true
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if first { // requests come one at a time
			first = false
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		panic(http.ErrAbortHandler)
	})
	tr := newTransport(t, s.URL+"/mcp", Options{Common: httpopt.Common{Reconnect: tiny()}})
	err := sendErr(tr, request(5, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v; want an error matching ErrOutcomeUnknown", err)
	}
	if n := s.Count(http.MethodPost); n != 2 {
		t.Errorf("the server got %d POSTs; want 2", n)
	}
}

// The statuses of an answer to a request that went out in full: which say
// the server refused it, which leave open that it ran. The error holds the
// *jsonrpc.HTTPError either way, and the request went out once.
func TestSendStatusAfterRequest(t *testing.T) {
	for _, tc := range testkit.StatusOutcomes {
		t.Run(strconv.Itoa(tc.Status)+tc.Body, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				w.WriteHeader(tc.Status)
				io.WriteString(w, tc.Body)
			})
			tr := newTransport(t, s.URL+"/mcp", Options{Common: httpopt.Common{Reconnect: tiny()}})
			err := sendErr(tr, request(5, "tools/call"))
			herr, ok := errors.AsType[*jsonrpc.HTTPError](err)
			if !ok || herr.StatusCode != tc.Status {
				t.Fatalf("Send = %v; want a *jsonrpc.HTTPError with status %d", err, tc.Status)
			}
			if got := errors.Is(err, jsonrpc.ErrOutcomeUnknown); got != tc.Unknown {
				t.Errorf("Send = %v: matches ErrOutcomeUnknown: %v; want %v", err, got, tc.Unknown)
			}
			if n := s.Count(http.MethodPost); n != 1 {
				t.Errorf("the request was POSTed %d times; want 1", n)
			}
		})
	}
}

// A notification answered 500 is no request that may have run: its error
// is the *jsonrpc.HTTPError alone.
func TestSendNotificationStatusIsNoOutcome(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	tr := newTransport(t, s.URL+"/mcp", Options{Common: httpopt.Common{Reconnect: tiny()}})
	err := sendErr(tr, notification("notifications/cancelled"))
	if _, ok := errors.AsType[*jsonrpc.HTTPError](err); !ok || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v; want a *jsonrpc.HTTPError that does not match ErrOutcomeUnknown", err)
	}
}

// Once the server has answered a request 2xx, it has taken the request
// and may be running it: the caller's ctx or Close ending the exchange —
// while its event stream is read, or while Send waits for room in a full
// queue — is an error that matches ErrOutcomeUnknown, as well as
// context.Canceled or ErrClosed. It matched only the latter.
func TestSendInterruptedAnswerIsOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		full bool // the server fills the queue, nobody calls Recv
		stop func(tr *Transport, cancel context.CancelFunc)
		want error
	}{
		{"ctx, reading the stream", false, func(_ *Transport, cancel context.CancelFunc) { cancel() }, context.Canceled},
		{"Close, reading the stream", false, func(tr *Transport, _ context.CancelFunc) { tr.Close() }, jsonrpc.ErrClosed},
		{"ctx, waiting for room in the queue", true, func(_ *Transport, cancel context.CancelFunc) { cancel() }, context.Canceled},
		{"Close, waiting for room in the queue", true, func(tr *Transport, _ context.CancelFunc) { tr.Close() }, jsonrpc.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				ev := startSSE(w)
				n := 1
				if tc.full {
					n = wire.MaxQueued + 1
				}
				for range n {
					ev(data(progressNote)) // the tool runs
				}
				<-r.Context().Done()
			})
			tr := newTransport(t, s.URL+"/mcp", Options{Common: httpopt.Common{Reconnect: tiny()}})
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			res := make(chan error, 1)
			go func() { res <- tr.Send(ctx, request(5, "tools/call")) }()
			if tc.full {
				testkit.Eventually(t, wait, "a full queue", func() bool { return tr.queue.Len() == wire.MaxQueued })
			} else {
				m, err := tr.Recv() // the stream is open, and read
				if err != nil || describe(m) != "notification notifications/progress" {
					t.Fatalf("Recv = %v, %v", m, err)
				}
			}
			tc.stop(tr, cancel)
			var err error
			select {
			case err = <-res:
			case <-time.After(wait):
				t.Fatal("Send still blocked")
			}
			if !errors.Is(err, tc.want) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Errorf("Send = %v; want an error matching %v and ErrOutcomeUnknown (the server took the request)", err, tc.want)
			}
		})
	}
}
