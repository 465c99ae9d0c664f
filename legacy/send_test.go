package legacy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
)

// TestSendAccepted: any 2xx accepts a message, with or without a body;
// the POST carries the encoded message as application/json.
func TestSendAccepted(t *testing.T) {
	tests := []struct {
		status int
		body   string
	}{
		{http.StatusAccepted, ""},
		{http.StatusAccepted, "Accepted"},
		{http.StatusOK, ""},
		{http.StatusOK, strings.Repeat("ok", 100000)}, // more than is drained
		{http.StatusNoContent, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %d bytes", tt.status, len(tt.body)), func(t *testing.T) {
			s := newSSEServer(t)
			s.post = func(w http.ResponseWriter, r *http.Request, body []byte) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}
			tr, _ := dial(t, s.URL+"/sse", Options{})
			m := request(5, "tools/call")
			send(t, tr, m)
			want, _ := jsonrpc.Encode(m)
			post := s.Requests()[1]
			if post.Method != http.MethodPost || post.Body != string(want) || post.Header.Get("Content-Type") != "application/json" {
				t.Errorf("POST %+v", post)
			}
		})
	}
}

// TestSendHTTPError: a status other than 2xx is a *jsonrpc.HTTPError that
// carries the status, the endpoint without its query values (the session
// id), a bounded excerpt of the body and the JSON-RPC error the body
// holds, if any.
func TestSendHTTPError(t *testing.T) {
	tests := []struct {
		status  int
		body    string
		rpcCode int64
	}{
		{http.StatusInternalServerError, `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"boom"}}`, jsonrpc.CodeInternalError},
		{http.StatusBadRequest, strings.Repeat("bad ", 3000), 0},
		{http.StatusNotFound, "Could not find session", 0},
		{http.StatusMovedPermanently, "", 0},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			s := newSSEServer(t)
			s.post = func(w http.ResponseWriter, r *http.Request, body []byte) {
				w.WriteHeader(tt.status) // a 301 without Location is not followed
				w.Write([]byte(tt.body))
			}
			tr, _ := dial(t, s.URL+"/sse", Options{})
			err := sendErr(tr, request(5, "tools/call"))
			var he *jsonrpc.HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("Send = %v, want a *jsonrpc.HTTPError", err)
			}
			// The session id in the endpoint's query is not shown.
			wantURL := strings.Replace(tr.Endpoint(), "sessionId=s1", "sessionId=…", 1)
			if he.Method != http.MethodPost || he.StatusCode != tt.status || he.URL != wantURL || strings.Contains(err.Error(), "=s1") {
				t.Errorf("HTTPError %+v", he)
			}
			if len(he.Body) > 512 || !strings.HasPrefix(strings.TrimSpace(tt.body), he.Body) {
				t.Errorf("Body = %q (%d bytes)", he.Body, len(he.Body))
			}
			if tt.rpcCode != 0 {
				var re *jsonrpc.Error
				if he.RPCError == nil || he.RPCError.Code != tt.rpcCode || !errors.As(err, &re) {
					t.Errorf("RPCError = %v, want code %d", he.RPCError, tt.rpcCode)
				}
			}
			if !strings.HasPrefix(err.Error(), "HTTP+SSE: tools/call (id 5): POST ") {
				t.Errorf("message %q", err)
			}
		})
	}
}

// TestSendContext: ctx cancels a POST the server does not answer.
func TestSendContext(t *testing.T) {
	s := newSSEServer(t)
	s.post = s.stallOn("tools/call")
	tr, _ := dial(t, s.URL+"/sse", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := tr.Send(ctx, request(1, "tools/call"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Send took %v", d)
	}
	// The transport is still fine.
	send(t, tr, notification("notifications/initialized"))
}

// stallOn returns a POST handler that never answers messages with the
// method, and otherwise echoes.
func (l *sseServer) stallOn(method string) handler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		if m, err := jsonrpc.DecodeMessage(body); err == nil && m.Method == method {
			<-r.Context().Done()
			return
		}
		l.echo(w, body)
	}
}

// TestSendConcurrent: many Sends at once each get their answer.
func TestSendConcurrent(t *testing.T) {
	const n = 50
	s := newSSEServer(t)
	tr, loop := dial(t, s.URL+"/sse", Options{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { send(t, tr, request(int64(i+1), "tools/call")) })
	}
	wg.Wait()
	got := map[string]bool{}
	for range n {
		got[loop.next(t).ID.Raw()] = true
	}
	if len(got) != n {
		t.Errorf("%d distinct responses, want %d", len(got), n)
	}
}

// countingTransport counts the requests it carries.
type countingTransport struct {
	rt    *http.Transport
	count atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.count.Add(1)
	return c.rt.RoundTrip(r)
}

// TestHTTPClientAndHeaders: the host's client (its RoundTripper) and
// static headers carry the GET and every POST; the client's Timeout cuts
// the POSTs but not the stream.
func TestHTTPClientAndHeaders(t *testing.T) {
	s := newSSEServer(t)
	s.post = s.stallOn("notifications/slow")
	rt := &countingTransport{rt: &http.Transport{}}
	t.Cleanup(rt.rt.CloseIdleConnections)
	client := &http.Client{Transport: rt, Timeout: 300 * time.Millisecond}
	header := http.Header{"Authorization": {"Bearer t0ken"}, "X-Tenant": {"a", "b"}}
	tr, loop := dial(t, s.URL+"/sse", Options{Common: httpopt.Common{HTTPClient: client, Header: header}})
	header.Set("Authorization", "changed after Dial")

	time.Sleep(400 * time.Millisecond) // longer than the client's Timeout
	send(t, tr, request(1, "ping"))
	if got := describe(loop.next(t)); got != `response 1 {"method":"ping"}` {
		t.Fatalf("got %s", got)
	}
	var ne net.Error
	if err := sendErr(tr, notification("notifications/slow")); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("slow POST: %v, want the client's timeout", err)
	}

	if n := rt.count.Load(); n != 3 {
		t.Errorf("the RoundTripper carried %d requests, want 3", n)
	}
	reqs := s.Requests()
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "Bearer t0ken" || strings.Join(r.Header.Values("X-Tenant"), ",") != "a,b" {
			t.Errorf("%s %s without the static headers: %v", r.Method, r.Path, r.Header)
		}
	}
	if reqs[0].Method != http.MethodGet || reqs[0].Header.Get("Accept") != "text/event-stream" {
		t.Errorf("GET %+v", reqs[0])
	}
}

// TestSendThrottled: a POST answered 429 (with Retry-After), or 503
// without Retry-After to a request marked retry.WithResendable (after
// the policy's backoff), is waited out and sent again, the same bytes; one
// over the cap is not sent again, and Send returns the
// *reconnect.RetryAfterError. A 503 without Retry-After to a request not
// so marked is not sent again: it may come after the server ran it.
func TestSendThrottled(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		retryAfter string
		minGap     time.Duration
		wantPOSTs  int
		wantErr    bool
		resendable bool // the request is marked safe to repeat
	}{
		{"429 Retry-After 1", http.StatusTooManyRequests, "1", time.Second, 2, false, false},
		{"503 without Retry-After, resendable", http.StatusServiceUnavailable, "", 5 * time.Millisecond, 2, false, true},
		{"503 without Retry-After", http.StatusServiceUnavailable, "", 0, 1, true, false},
		{"429 over the cap", http.StatusTooManyRequests, "3600", 0, 1, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSSEServer(t)
			var posts atomic.Int32
			s.post = func(w http.ResponseWriter, r *http.Request, body []byte) {
				if posts.Add(1) == 1 {
					if tt.retryAfter != "" {
						w.Header().Set("Retry-After", tt.retryAfter)
					}
					w.WriteHeader(tt.status)
					return
				}
				s.echo(w, body)
			}
			tr, loop := dial(t, s.URL+"/sse", Options{Common: httpopt.Common{Reconnect: fast()}})
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			if tt.resendable {
				ctx = retry.WithResendable(ctx, func() bool { return true })
			}
			err := tr.Send(ctx, request(1, "tools/call"))
			if tt.wantErr && tt.status == http.StatusServiceUnavailable {
				if he, ok := errors.AsType[*jsonrpc.HTTPError](err); !ok || he.StatusCode != tt.status || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
					t.Fatalf("Send = %v, want the 503 inside, matching ErrOutcomeUnknown", err)
				}
			} else if tt.wantErr {
				ra, ok := errors.AsType[*reconnect.RetryAfterError](err)
				if !ok || ra.Status != tt.status || ra.Wait != time.Hour {
					t.Fatalf("Send = %v, want a *reconnect.RetryAfterError for 1h", err)
				}
				if he, ok := errors.AsType[*jsonrpc.HTTPError](err); !ok || he.StatusCode != tt.status {
					t.Errorf("Send = %v, want the %d inside", err, tt.status)
				}
			} else {
				if err != nil {
					t.Fatalf("Send = %v", err)
				}
				if got := describe(loop.next(t)); got != `response 1 {"method":"tools/call"}` {
					t.Errorf("got %s", got)
				}
			}
			reqs := s.Requests()
			if n := int(posts.Load()); n != tt.wantPOSTs {
				t.Fatalf("%d POSTs, want %d", n, tt.wantPOSTs)
			}
			if tt.wantPOSTs == 2 {
				if reqs[1].Body != reqs[2].Body || reqs[2].Path != "/message?sessionId=s1" {
					t.Errorf("the POST sent again differs: %+v then %+v", reqs[1], reqs[2])
				}
			}
		})
	}
}

// TestSendThrottledContext: a caller's deadline shorter than the server's
// Retry-After is not waited for: Send returns the *reconnect.RetryAfterError
// at once.
func TestSendThrottledContext(t *testing.T) {
	s := newSSEServer(t)
	s.post = func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	tr, _ := dial(t, s.URL+"/sse", Options{Common: httpopt.Common{Reconnect: fast()}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err := tr.Send(ctx, request(1, "tools/call"))
	if _, ok := errors.AsType[*reconnect.RetryAfterError](err); !ok {
		t.Errorf("Send = %v, want a *reconnect.RetryAfterError", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Send took %v", d)
	}
}
