package legacy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
)

// A POST whose connection breaks after the server read the whole request,
// before any answer: the server may have run it, and Send's error says so;
// it was POSTed once.
func TestSendBrokenAfterRequestIsOutcomeUnknown(t *testing.T) {
	l := newSSEServer(t)
	l.post = func(w http.ResponseWriter, r *http.Request, body []byte) {
		panic(http.ErrAbortHandler) // the body is read: drop the connection, no answer
	}
	tr, _ := dial(t, l.URL+"/sse", Options{Common: httpopt.Common{Reconnect: fast()}})
	err := sendErr(tr, request(5, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v; want an error matching ErrOutcomeUnknown", err)
	}
	if n := l.Count(http.MethodPost); n != 1 {
		t.Errorf("the request was POSTed %d times; want 1", n)
	}
}

// The HTTP client's Timeout runs out while the server works on a POST it
// has read: the error matches ErrOutcomeUnknown and is still the client's
// timeout.
func TestSendClientTimeoutAfterRequestIsOutcomeUnknown(t *testing.T) {
	l := newSSEServer(t)
	l.post = func(w http.ResponseWriter, r *http.Request, body []byte) {
		<-r.Context().Done()
	}
	hc := &http.Client{Timeout: 50 * time.Millisecond} // the SSE stream runs without it
	tr, _ := dial(t, l.URL+"/sse", Options{Common: httpopt.Common{Reconnect: fast(), HTTPClient: hc}})
	err := sendErr(tr, request(5, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v; want an error matching ErrOutcomeUnknown", err)
	}
	if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() {
		t.Errorf("the error is not the client's timeout any more: %v", err)
	}
	if n := l.Count(http.MethodPost); n != 1 {
		t.Errorf("the request was POSTed %d times; want 1", n)
	}
}

// The caller's ctx ends while the server works on a POST it has read: the
// error matches both context.Canceled and ErrOutcomeUnknown.
func TestSendCancelledAfterRequestIsOutcomeUnknown(t *testing.T) {
	l := newSSEServer(t)
	got := make(chan struct{})
	l.post = func(w http.ResponseWriter, r *http.Request, body []byte) {
		close(got)
		<-r.Context().Done()
	}
	tr, _ := dial(t, l.URL+"/sse", Options{Common: httpopt.Common{Reconnect: fast()}})
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

// The statuses of an answer to a POSTed request: which say the server
// refused it, which leave open that it ran. The error holds the
// *jsonrpc.HTTPError either way, and the request was POSTed once.
func TestSendStatusAfterRequest(t *testing.T) {
	for _, tc := range testkit.StatusOutcomes {
		t.Run(strconv.Itoa(tc.Status)+tc.Body, func(t *testing.T) {
			l := newSSEServer(t)
			l.post = func(w http.ResponseWriter, r *http.Request, body []byte) {
				w.WriteHeader(tc.Status)
				io.WriteString(w, tc.Body)
			}
			tr, _ := dial(t, l.URL+"/sse", Options{Common: httpopt.Common{Reconnect: fast()}})
			err := sendErr(tr, request(5, "tools/call"))
			herr, ok := errors.AsType[*jsonrpc.HTTPError](err)
			if !ok || herr.StatusCode != tc.Status {
				t.Fatalf("Send = %v; want a *jsonrpc.HTTPError with status %d", err, tc.Status)
			}
			if got := errors.Is(err, jsonrpc.ErrOutcomeUnknown); got != tc.Unknown {
				t.Errorf("Send = %v: matches ErrOutcomeUnknown: %v; want %v", err, got, tc.Unknown)
			}
			if n := l.Count(http.MethodPost); n != 1 {
				t.Errorf("the request was POSTed %d times; want 1", n)
			}
		})
	}
}
