package retry

import (
	"github.com/anymcp/anymcp/reconnect"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/logtest"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/anymcp/anymcp/jsonrpc"
)

const ms = time.Millisecond

// fast is the policy of these tests: waits of a few milliseconds.
var fast = reconnect.Policy{InitialDelay: 5 * ms, MaxDelay: 20 * ms, Jitter: 0.2, MaxAttempts: 3, MaxRetryAfter: 2 * time.Second}

// step is how the test server answers one hit.
type step func(w http.ResponseWriter, r *http.Request)

// answer writes status with a short body and the given headers (name, value, ...).
func answer(status int, header ...string) step {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		io.WriteString(w, "answer "+strconv.Itoa(status))
	}
}

// reset closes the connection under the request once it has been read:
// the server got it, the client gets no answer.
func reset(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
	conn.Close()
}

// hang answers nothing until the client gives up.
func hang(_ http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

// server plays its steps in order, the last one again and again, and
// keeps every request body it got.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newServer(t *testing.T, steps ...step) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		steps[min(n, len(steps)-1)](w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) hits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// transport counts round trips and checks that every body it handed out
// was closed.
type transport struct {
	base   *http.Transport
	trips  atomic.Int32
	mu     sync.Mutex
	bodies []*body
}

type body struct {
	io.ReadCloser
	closed atomic.Bool
}

func (b *body) Close() error { b.closed.Store(true); return b.ReadCloser.Close() }

func (tr *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	tr.trips.Add(1)
	resp, err := tr.base.RoundTrip(r)
	if resp != nil {
		b := &body{ReadCloser: resp.Body}
		resp.Body = b
		tr.mu.Lock()
		tr.bodies = append(tr.bodies, b)
		tr.mu.Unlock()
	}
	return resp, err
}

func (tr *transport) CloseIdleConnections() { tr.base.CloseIdleConnections() }

func (tr *transport) allClosed() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, b := range tr.bodies {
		if !b.closed.Load() {
			return false
		}
	}
	return true
}

// logs keeps the records of a logger.
type logs = logtest.Recorder

// rig is a Retrying client over a counting transport, with its logs; or,
// when viaSender is set (TestSenderAsRetrying), a Sender over the same.
type rig struct {
	c    *retryablehttp.Client
	s    *Sender
	tr   *transport
	logs *logs
}

// viaSender makes newRig's rigs send through a Sender: every test of
// Retrying then holds for Sender too.
var viaSender bool

func newRig(t *testing.T, p reconnect.Policy, timeout time.Duration) *rig {
	t.Helper()
	tr := &transport{base: &http.Transport{}}
	t.Cleanup(tr.CloseIdleConnections)
	l := &logs{}
	hc := &http.Client{Transport: tr, Timeout: timeout}
	g := &rig{tr: tr, logs: l}
	if viaSender {
		g.s = NewSender(p, hc, slog.New(l))
	} else {
		g.c = Retrying(p, hc, slog.New(l))
	}
	return g
}

// do sends req through the rig's client.
func (g *rig) do(req *retryablehttp.Request) (*http.Response, error) {
	if g.s != nil {
		// A plain request of the same bytes, headers and context, as the
		// transports build them for a Sender.
		b, err := req.BodyBytes()
		if err != nil {
			return nil, err
		}
		r, err := http.NewRequestWithContext(req.Context(), req.Method, req.URL.String(), bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		r.Header = req.Header.Clone()
		return g.s.Do(r)
	}
	return g.c.Do(req)
}

// post sends body to url and reads the answer; the error is Do's.
func (g *rig) post(ctx context.Context, url, body string) (status int, answer string, err error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, url, []byte(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.do(req)
	if err != nil {
		if resp != nil {
			return 0, "", errors.New("Do returned a response with its error")
		}
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestRetryingConfig(t *testing.T) {
	base := &http.Client{Timeout: time.Second}
	c := Retrying(fast, base, nil)
	if c.HTTPClient == base || c.HTTPClient.Timeout != base.Timeout || c.HTTPClient.CheckRedirect == nil {
		t.Error("HTTPClient is not a copy of base with the redirect policy")
	}
	if base.CheckRedirect != nil {
		t.Error("Retrying changed base")
	}
	if c.RetryMax != 3 {
		t.Errorf("RetryMax = %d, want MaxAttempts", c.RetryMax)
	}
	if c.Logger != nil {
		t.Errorf("Logger = %v, want nil", c.Logger)
	}
	if c.CheckRetry == nil || c.Backoff == nil || c.ErrorHandler == nil || c.RequestLogHook == nil || c.PrepareRetry == nil {
		t.Error("CheckRetry, Backoff, ErrorHandler, RequestLogHook or PrepareRetry left to go-retryablehttp")
	}
	if c := Retrying(reconnect.Policy{}, nil, nil); c.HTTPClient.Transport != http.DefaultClient.Transport ||
		c.HTTPClient.CheckRedirect == nil || c.RetryMax != reconnect.DefaultPolicy().MaxAttempts {
		t.Errorf("nil base: HTTPClient %+v, RetryMax %d", c.HTTPClient, c.RetryMax)
	}
	if http.DefaultClient.CheckRedirect != nil {
		t.Error("Retrying changed http.DefaultClient")
	}
	if c := Retrying(reconnect.Policy{MaxAttempts: -1}, nil, nil); c.RetryMax < 1<<30 {
		t.Errorf("unlimited attempts: RetryMax = %d", c.RetryMax)
	}
}

// TestRetryingSendsAgain covers the answers that are sent again, then
// succeed: each attempt carries the same bytes, each retry is logged.
func TestRetryingSendsAgain(t *testing.T) {
	tests := []struct {
		name    string
		steps   []step
		hits    int
		reasons []string
		status  []string
		minTook time.Duration
	}{
		{"429 Retry-After 0", []step{answer(429, "Retry-After", "0"), answer(200)},
			2, []string{"server asked to retry after"}, []string{"429"}, 0},
		{"503 Retry-After 0", []step{answer(503, "Retry-After", "0"), answer(200)},
			2, []string{"server asked to retry after"}, []string{"503"}, 0},
		{"503 without Retry-After backs off", []step{answer(503), answer(503), answer(200)},
			3, []string{"server busy, backing off", "server busy, backing off"}, []string{"503", "503"}, 4*ms + 8*ms},
		{"429 then 503 then 429", []step{answer(429, "Retry-After", "0"), answer(503), answer(429, "Retry-After", "0"), answer(200)},
			4, []string{"server asked to retry after", "server busy, backing off", "server asked to retry after"}, []string{"429", "503", "429"}, 0},
		{"Retry-After an HTTP date", []step{answer(429, "Retry-After", time.Now().Add(time.Second).UTC().Format(http.TimeFormat)), answer(200)},
			2, []string{"server asked to retry after"}, []string{"429"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.steps...)
			g := newRig(t, fast, 0)
			const sent = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"charge","arguments":{"cents":100}}}`
			began := time.Now()
			// Marked safe to repeat: a 503 without Retry-After is sent again too.
			status, body, err := g.post(WithResendable(context.Background(), yes), s.URL+"/mcp?session=secret", sent)
			took := time.Since(began)
			if err != nil || status != 200 || body != "answer 200" {
				t.Fatalf("post = (%d, %q, %v), want 200", status, body, err)
			}
			hits := s.hits()
			if len(hits) != tt.hits {
				t.Errorf("server hit %d times, want %d", len(hits), tt.hits)
			}
			for i, h := range hits {
				if h != sent {
					t.Errorf("attempt %d sent %q, want %q", i+1, h, sent)
				}
			}
			if took < tt.minTook || took > 1500*ms {
				t.Errorf("took %v, want at least %v and well under the test's budget", took, tt.minTook)
			}
			recs := g.logs.Flat()
			if len(recs) != len(tt.reasons) {
				t.Fatalf("%d log records, want one per retry (%d): %v", len(recs), len(tt.reasons), recs)
			}
			for i, r := range recs {
				if r["level"] != "INFO" || r["reason"] != tt.reasons[i] || r["status"] != tt.status[i] || r["wait"] == "" ||
					r["method"] != "POST" || r["attempt"] != strconv.Itoa(i+1) {
					t.Errorf("record %d: %v", i, r)
				}
				if strings.Contains(r["url"], "secret") || !strings.Contains(r["url"], "/mcp?session=") {
					t.Errorf("record %d: url %q, want the query value hidden", i, r["url"])
				}
			}
			if !g.tr.allClosed() {
				t.Error("a response body was left open")
			}
		})
	}
}

// TestRetryingGivesUp covers the 429 and 503 answers that are not sent
// again: the error carries the status, the wait, the cap and the reason,
// and comes at once.
func TestRetryingGivesUp(t *testing.T) {
	tests := []struct {
		name     string
		step     step
		p        reconnect.Policy
		timeout  time.Duration // of the request's context
		cancel   time.Duration // cancel the context after this
		hits     int
		wait     time.Duration // the reconnect.RetryAfterError's; -1: any
		reason   string
		ctxErr   error
		maxTook  time.Duration
		wantBody string
		unknown  bool // the last answer, a 503 without Retry-After, may come after the request ran
	}{
		{name: "Retry-After over the cap", step: answer(429, "Retry-After", "3600"), p: fast,
			hits: 1, wait: time.Hour, reason: reasonOverCap, maxTook: 500 * ms},
		{name: "Retry-After date over the cap", step: answer(503, "Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)), p: fast,
			hits: 1, wait: -1, reason: reasonOverCap, maxTook: 500 * ms},
		{name: "Retry-After past the deadline", step: answer(429, "Retry-After", "1"), p: fast, timeout: 300 * ms,
			hits: 1, wait: time.Second, reason: reasonDeadline, maxTook: 200 * ms},
		{name: "backoff past the deadline", step: answer(503), p: reconnect.Policy{InitialDelay: time.Second, Jitter: -1}, timeout: 300 * ms,
			hits: 1, wait: time.Second, reason: reasonDeadline, maxTook: 200 * ms, unknown: true},
		{name: "cancelled during a Retry-After wait", step: answer(429, "Retry-After", "1"), p: fast, cancel: 30 * ms,
			hits: 1, wait: time.Second, reason: context.Canceled.Error(), ctxErr: context.Canceled, maxTook: 300 * ms},
		{name: "cancelled during a backoff wait", step: answer(503), p: reconnect.Policy{InitialDelay: 10 * time.Second, Jitter: -1}, cancel: 30 * ms,
			hits: 1, wait: 10 * time.Second, reason: context.Canceled.Error(), ctxErr: context.Canceled, maxTook: 300 * ms, unknown: true},
		{name: "always 429: attempts run out", step: answer(429, "Retry-After", "0"), p: fast,
			hits: 4, wait: 0, reason: reasonAttempts, maxTook: 500 * ms},
		{name: "always 503: attempts run out", step: answer(503), p: reconnect.Policy{InitialDelay: ms, Jitter: -1, MaxAttempts: 2},
			hits: 3, wait: 0, reason: reasonAttempts, maxTook: 500 * ms, unknown: true},
		// The budget counts from the first failure: 20 ms fits in 30, and a
		// second 20 ms after a second failure (at 20 ms or later) never does,
		// however slow the round trips: two hits on any machine.
		{name: "always 503: budget spent", step: answer(503), p: reconnect.Policy{InitialDelay: 20 * ms, Multiplier: 1, Jitter: -1, MaxAttempts: -1, Budget: 30 * ms},
			hits: 2, wait: 20 * ms, reason: reasonBudget, maxTook: 500 * ms, unknown: true},
		{name: "the JSON-RPC error of the body", p: fast, step: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "86400")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			io.WriteString(w, `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"slow down"}}`)
		}, hits: 1, wait: 24 * time.Hour, reason: reasonOverCap, maxTook: 500 * ms, wantBody: "slow down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.step)
			g := newRig(t, tt.p, 0)
			// Marked safe to repeat: a 503 without Retry-After is sent again too.
			ctx, cancel := context.WithCancel(WithResendable(context.Background(), yes))
			defer cancel()
			if tt.timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			began := time.Now()
			_, _, err := g.post(ctx, s.URL+"/mcp", `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
			if took := time.Since(began); took > tt.maxTook {
				t.Errorf("took %v, want at most %v", took, tt.maxTook)
			}
			var rae *reconnect.RetryAfterError
			if !errors.As(err, &rae) {
				t.Fatalf("err = %v, want a *reconnect.RetryAfterError", err)
			}
			status := 429
			if strings.Contains(err.Error(), "answered 503") {
				status = 503
			}
			if rae.Status != status || rae.Reason != tt.reason || rae.Cap != Fill(tt.p).MaxRetryAfter || (tt.wait >= 0 && rae.Wait != tt.wait) {
				t.Errorf("got %+v, want status %d, wait %v, reason %q", rae, status, tt.wait, tt.reason)
			}
			if rae.Wait <= rae.Cap && tt.reason == reasonOverCap {
				t.Errorf("Wait %v is under the cap %v", rae.Wait, rae.Cap)
			}
			var herr *jsonrpc.HTTPError
			if !errors.As(rae.Err, &herr) || herr.StatusCode != status || herr.Method != http.MethodPost || herr.URL != s.URL+"/mcp" {
				t.Errorf("Err = %#v, want the *jsonrpc.HTTPError of the last answer", rae.Err)
			} else if tt.wantBody != "" && (herr.RPCError == nil || herr.RPCError.Message != tt.wantBody) {
				t.Errorf("HTTPError.RPCError = %v, want %q", herr.RPCError, tt.wantBody)
			} else if tt.wantBody == "" && herr.Body != "answer "+strconv.Itoa(status) {
				t.Errorf("HTTPError.Body = %q", herr.Body)
			}
			if got := errors.Is(err, jsonrpc.ErrOutcomeUnknown); got != tt.unknown || rae.MayHaveRun != tt.unknown {
				t.Errorf("errors.Is(err, ErrOutcomeUnknown) = %v, MayHaveRun %v, want %v", got, rae.MayHaveRun, tt.unknown)
			}
			if (tt.ctxErr == nil) != (rae.CtxErr == nil) || (tt.ctxErr != nil && !errors.Is(rae.CtxErr, tt.ctxErr)) {
				t.Errorf("CtxErr = %v, want %v", rae.CtxErr, tt.ctxErr)
			}
			if tt.ctxErr != nil && !errors.Is(err, tt.ctxErr) {
				t.Errorf("errors.Is(err, %v) = false", tt.ctxErr)
			}
			if tt.ctxErr == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
				t.Errorf("err %v claims a context error", err)
			}
			if n := len(s.hits()); n != tt.hits {
				t.Errorf("server hit %d times, want %d", n, tt.hits)
			}
			if !g.tr.allClosed() {
				t.Error("the last answer's body was left open")
			}
		})
	}
}

// TestRetryingNeverAgain covers what the server may have run: the answer
// or the error comes back as is, after exactly one hit.
func TestRetryingNeverAgain(t *testing.T) {
	tests := []struct {
		name    string
		step    step
		timeout time.Duration // of the base client
		status  int           // 0: an error
	}{
		{"500", answer(500), 0, 500},
		{"502", answer(502), 0, 502},
		{"504", answer(504), 0, 504},
		{"404", answer(404), 0, 404},
		{"401", answer(401, "WWW-Authenticate", "Bearer"), 0, 401},
		{"400", answer(400), 0, 400},
		{"409", answer(409), 0, 409},
		{"202", answer(202), 0, 202},
		{"500 with Retry-After", answer(500, "Retry-After", "0"), 0, 500},
		{"503 without Retry-After to a request not marked resendable", answer(503), 0, 503},
		{"connection reset after the request was read", reset, 0, 0},
		{"timeout after the request went out", hang, 50 * ms, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.step)
			g := newRig(t, fast, tt.timeout)
			status, body, err := g.post(context.Background(), s.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
			if tt.status == 0 {
				var rae *reconnect.RetryAfterError
				if err == nil || errors.As(err, &rae) {
					t.Errorf("err = %v, want the transport's error", err)
				}
			} else if err != nil || status != tt.status || body != "answer "+strconv.Itoa(tt.status) {
				t.Errorf("post = (%d, %q, %v), want %d as is", status, body, err, tt.status)
			}
			if n := len(s.hits()); n != 1 {
				t.Errorf("server hit %d times, want exactly 1", n)
			}
			if n := g.tr.trips.Load(); n != 1 {
				t.Errorf("%d round trips, want 1", n)
			}
			if recs := g.logs.Flat(); len(recs) != 0 {
				t.Errorf("logged a retry: %v", recs)
			}
		})
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestRetryingConnectionRefused(t *testing.T) {
	url := "http://" + closedAddr(t) + "/mcp"

	t.Run("retried up to MaxAttempts, then the dial error", func(t *testing.T) {
		g := newRig(t, fast, 0)
		_, _, err := g.post(context.Background(), url, "{}")
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("err = %v, want the dial error", err)
		}
		if n := g.tr.trips.Load(); n != 4 {
			t.Errorf("%d attempts, want 1 + MaxAttempts (3)", n)
		}
		recs := g.logs.Flat()
		if len(recs) != 3 {
			t.Fatalf("%d log records, want 3: %v", len(recs), recs)
		}
		for _, r := range recs {
			if r["reason"] != "connection refused" || r["status"] != "0" {
				t.Errorf("record %v", r)
			}
		}
	})

	t.Run("then the server comes up", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		var hits atomic.Int32
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			io.WriteString(w, "up")
		})}
		done := make(chan struct{})
		time.AfterFunc(15*ms, func() {
			defer close(done)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return // the port was taken meanwhile: the test says so below
			}
			go srv.Serve(ln)
		})
		t.Cleanup(func() { <-done; srv.Close() })
		g := newRig(t, reconnect.Policy{InitialDelay: 10 * ms, MaxDelay: 10 * ms, Jitter: -1, MaxAttempts: 20}, 0)
		status, body, err := g.post(context.Background(), "http://"+addr, "{}")
		if err != nil || status != 200 || body != "up" || hits.Load() != 1 {
			t.Errorf("post = (%d, %q, %v) after %d hits, want one 200", status, body, err, hits.Load())
		}
	})

	t.Run("the wait past the deadline is not waited", func(t *testing.T) {
		g := newRig(t, reconnect.Policy{InitialDelay: time.Second, Jitter: -1}, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 300*ms)
		defer cancel()
		began := time.Now()
		_, _, err := g.post(ctx, url, "{}")
		if !errors.Is(err, syscall.ECONNREFUSED) || time.Since(began) > 200*ms || g.tr.trips.Load() != 1 {
			t.Errorf("err = %v after %v and %d attempts, want the dial error at once", err, time.Since(began), g.tr.trips.Load())
		}
	})

	t.Run("cancelled during the wait", func(t *testing.T) {
		g := newRig(t, reconnect.Policy{InitialDelay: 10 * time.Second, Jitter: -1}, 0)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*ms, cancel)
		began := time.Now()
		_, _, err := g.post(ctx, url, "{}")
		if !errors.Is(err, syscall.ECONNREFUSED) || !errors.Is(err, context.Canceled) || time.Since(began) > 300*ms {
			t.Errorf("err = %v after %v, want the dial error and the context's, promptly", err, time.Since(began))
		}
	})
}

// TestRetryingErrorsRedacted: whatever ends a request — a reset, a refused
// connection given up on or whose wait is cut short, a deadline — Do's
// error shows the URL without its password, query values or fragment,
// and errors.Is and errors.As find in it what the request's failure was.
func TestRetryingErrorsRedacted(t *testing.T) {
	secrets := []string{"pa55w0rd", "k3y-in-query", "BareKey", "frag-secret"}
	withSecrets := func(addr string) string {
		return "http://user:pa55w0rd@" + addr + "/mcp?api_key=k3y-in-query&BareKey#frag-secret"
	}
	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("the request succeeded")
		}
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("the error shows %q: %v", s, err)
			}
		}
		if ue, ok := errors.AsType[*url.Error](err); !ok || strings.Contains(ue.URL, "k3y-in-query") {
			t.Errorf("errors.As(*url.Error) = %v, %v", ue, ok)
		}
		if !strings.Contains(err.Error(), "/mcp?api_key=…&…") {
			t.Errorf("the error does not name the URL: %v", err)
		}
	}
	refusedAt := closedAddr(t)

	t.Run("reset", func(t *testing.T) {
		s := newServer(t, reset)
		_, _, err := newRig(t, fast, 0).post(context.Background(), withSecrets(s.Listener.Addr().String()), "{}")
		check(t, err)
	})
	t.Run("refused, given up", func(t *testing.T) {
		_, _, err := newRig(t, fast, 0).post(context.Background(), withSecrets(refusedAt), "{}")
		check(t, err)
		if op, ok := errors.AsType[*net.OpError](err); !ok || op.Op != "dial" || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("err = %v, want the dial error", err)
		}
	})
	t.Run("refused, the wait cut short", func(t *testing.T) {
		g := newRig(t, reconnect.Policy{InitialDelay: 10 * time.Second, Jitter: -1}, 0)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Cancelled by the retry's log record, just before its wait.
		hc := &http.Client{Transport: g.tr}
		if g.s != nil {
			g.s = NewSender(g.s.p, hc, slog.New(cancelOnLog(cancel)))
		} else {
			g.c = Retrying(reconnect.Policy{InitialDelay: 10 * time.Second, Jitter: -1}, hc, slog.New(cancelOnLog(cancel)))
		}
		_, _, err := g.post(ctx, withSecrets(refusedAt), "{}")
		check(t, err)
		if !errors.Is(err, syscall.ECONNREFUSED) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want the dial error and the context's", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		s := newServer(t, hang)
		ctx, cancel := context.WithTimeout(context.Background(), 50*ms)
		defer cancel()
		_, _, err := newRig(t, fast, 0).post(ctx, withSecrets(s.Listener.Addr().String()), "{}")
		check(t, err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	})
}

// cancelOnLog is a slog.Handler that calls its function at every record.
type cancelOnLog func()

func (c cancelOnLog) Enabled(context.Context, slog.Level) bool  { return true }
func (c cancelOnLog) Handle(context.Context, slog.Record) error { c(); return nil }
func (c cancelOnLog) WithAttrs([]slog.Attr) slog.Handler        { return c }
func (c cancelOnLog) WithGroup(string) slog.Handler             { return c }

// TestRetryingConcurrent runs many requests through one client at once:
// each Do has its own run of the policy.
func TestRetryingConcurrent(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[string(b)]++
		n := seen[string(b)]
		mu.Unlock()
		if n <= 2 {
			answer(503)(w, r)
			return
		}
		w.Write(b)
	}))
	defer s.Close()
	g := newRig(t, fast, 0)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			sent := strconv.Itoa(i)
			status, body, err := g.post(WithResendable(context.Background(), yes), s.URL, sent)
			if err != nil || status != 200 || body != sent {
				t.Errorf("request %d: (%d, %q, %v)", i, status, body, err)
			}
		})
	}
	wg.Wait()
	for b, n := range seen {
		if n != 3 {
			t.Errorf("body %q sent %d times, want 3", b, n)
		}
	}
}

// TestRetryingRedact: the URL of a 429 — in the retry's log record and
// in the error once the wait asked for is over the cap — is shown as
// origin.Redact shows it: no user information, no query value (a bare
// parameter included), no fragment.
func TestRetryingRedact(t *testing.T) {
	s := newServer(t, answer(429, "Retry-After", "0"), answer(429, "Retry-After", "3600"))
	addr := s.Listener.Addr().String()
	raw := "http://user:pa55w0rd@" + addr + "/mcp?sessionId=abc123&BareSecretKey#frag-secret"
	want := "http://" + addr + "/mcp?sessionId=…&…"
	g := newRig(t, fast, 0)
	_, _, err := g.post(context.Background(), raw, "{}")
	var he *jsonrpc.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 429 {
		t.Fatalf("err = %v, want the 429 not waited out", err)
	}
	if he.URL != want {
		t.Errorf("the error's URL is %q, want %q", he.URL, want)
	}
	recs := g.logs.Flat()
	if len(recs) != 1 || recs[0]["url"] != want {
		t.Errorf("log records %v, want one retry with url %q", recs, want)
	}
	for _, secret := range []string{"user", "pa55w0rd", "abc123", "BareSecretKey", "frag-secret"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}
}

func TestFirstContactDoesNotRetryRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := reconnect.Policy{InitialDelay: 50 * time.Millisecond, MaxAttempts: 5}
	c := Retrying(p, nil, nil)
	req, _ := retryablehttp.NewRequestWithContext(FirstContact(context.Background()), "POST", "http://"+addr+"/mcp", []byte("{}"))
	start := time.Now()
	_, err = c.Do(req)
	if err == nil || !refused(err) {
		t.Fatalf("want the refused dial error, got %v", err)
	}
	if d := time.Since(start); d > 40*time.Millisecond {
		t.Errorf("a first contact must not wait for retries (took %v)", d)
	}
}

func TestFirstContactWaitsOnlyWhenTold(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		switch {
		case r.URL.Path == "/told" && n == 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/told":
			w.WriteHeader(http.StatusOK)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := Retrying(reconnect.Policy{InitialDelay: 5 * time.Millisecond, MaxAttempts: 5}, nil, nil)
	req, _ := retryablehttp.NewRequestWithContext(FirstContact(context.Background()), "POST", srv.URL+"/silent", []byte("{}"))
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || hits.Load() != 1 {
		t.Fatalf("a 503 without Retry-After on first contact: %v %v, %d hits", resp, err, hits.Load())
	}
	resp.Body.Close()
	hits.Store(0)
	req, _ = retryablehttp.NewRequestWithContext(FirstContact(context.Background()), "POST", srv.URL+"/told", []byte("{}"))
	resp, err = c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK || hits.Load() != 2 {
		t.Fatalf("a 503 with Retry-After on first contact must be waited out: %v %v, %d hits", resp, err, hits.Load())
	}
	resp.Body.Close()
}

// TestRetryingBeforeResend: a request sent again after a 429, a 503 or a
// refused connection first goes through its BeforeResend function, which
// sets what that attempt carries (and nothing an earlier attempt carried
// changes); an error from it ends Do with that error, without sending.
func TestRetryingBeforeResend(t *testing.T) {
	errGone := errors.New("the session is gone")
	tests := []struct {
		name    string
		steps   []step
		refuse  int      // the call of f that refuses (1-based); 0: none
		carried []string // the X-Session each hit carried
		calls   int      // calls of f
		unknown bool     // the refusal matches jsonrpc.ErrOutcomeUnknown: an answer before it left that open
	}{
		{"429 then 503 then ok: each resend carries the newest", []step{answer(429, "Retry-After", "0"), answer(503), answer(200)},
			0, []string{"s0", "s1", "s2"}, 2, false},
		{"ok at once: f is never called", []step{answer(200)}, 0, []string{"s0"}, 0, false},
		{"refused before the resend: not sent again", []step{answer(429, "Retry-After", "0"), answer(200)},
			1, []string{"s0"}, 1, false},
		{"refused after two 429s: not run", []step{answer(429, "Retry-After", "0"), answer(429, "Retry-After", "0"), answer(200)},
			2, []string{"s0", "s1"}, 2, false},
		{"refused before the second resend, a 503 without Retry-After before it", []step{answer(503), answer(429, "Retry-After", "0"), answer(200)},
			2, []string{"s0", "s1"}, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var carried []string
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				carried = append(carried, r.Header.Get("X-Session"))
				n := len(carried)
				mu.Unlock()
				tt.steps[min(n, len(tt.steps))-1](w, r)
			})
			g := newRig(t, reconnect.Policy{InitialDelay: ms, MaxDelay: 2 * ms, MaxAttempts: 5}, 0)
			var headers []http.Header // the header maps each call of f saw
			calls := 0
			ctx := BeforeResend(WithResendable(context.Background(), yes), func(req *http.Request) error {
				calls++
				headers = append(headers, req.Header)
				if calls == tt.refuse {
					return errGone
				}
				req.Header.Set("X-Session", "s"+strconv.Itoa(calls))
				return nil
			})
			req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, s.URL, []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Session", "s0")
			first := req.Request.Header
			resp, err := g.do(req)
			if resp != nil {
				resp.Body.Close()
			}
			var refused *reconnect.ResendRefusedError
			switch {
			case tt.refuse > 0 && (!errors.Is(err, errGone) || resp != nil):
				t.Errorf("Do = (%v, %v), want f's error and no response", resp, err)
			case tt.refuse > 0 && (!errors.As(err, &refused) || errors.Is(err, jsonrpc.ErrOutcomeUnknown) != tt.unknown || refused.MayHaveRun != tt.unknown):
				t.Errorf("Do = %v, want a *reconnect.ResendRefusedError matching ErrOutcomeUnknown, MayHaveRun: %v", err, tt.unknown)
			case tt.refuse == 0 && (err != nil || resp.StatusCode != 200):
				t.Errorf("Do = (%v, %v), want 200", resp, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Join(carried, ",") != strings.Join(tt.carried, ",") || calls != tt.calls {
				t.Errorf("hits carried %v with %d call(s) of f, want %v with %d", carried, calls, tt.carried, tt.calls)
			}
			if first.Get("X-Session") != "s0" {
				t.Errorf("the first attempt's headers changed to %v", first)
			}
			for i, h := range headers {
				if sameMap(h, first) {
					t.Errorf("call %d of f got the first attempt's header map", i+1)
				}
			}
			if !g.tr.allClosed() {
				t.Error("a response body was left open")
			}
		})
	}
}

// TestRetryAfterErrorRemembersA503: a 503 without Retry-After, sent again
// (WithResendable), may have come after the server ran the request: the
// reconnect.RetryAfterError of a later 429 not waited out still says so, where it
// spoke of the last answer alone.
func TestRetryAfterErrorRemembersA503(t *testing.T) {
	steps := []step{answer(503), answer(429, "Retry-After", "3600")}
	hits := 0
	var mu sync.Mutex
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		n := hits
		mu.Unlock()
		steps[min(n, len(steps))-1](w, r)
	})
	g := newRig(t, reconnect.Policy{InitialDelay: ms, MaxDelay: 2 * ms, MaxAttempts: 5}, 0)
	req, err := retryablehttp.NewRequestWithContext(WithResendable(context.Background(), yes), http.MethodPost, s.URL, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.do(req)
	if resp != nil {
		resp.Body.Close()
	}
	var ra *reconnect.RetryAfterError
	if !errors.As(err, &ra) || ra.Status != 429 || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Do = %v, want the 429's *reconnect.RetryAfterError matching ErrOutcomeUnknown", err)
	}
}

// sameMap reports whether a and b are the same map (not equal ones).
func sameMap(a, b http.Header) bool {
	const probe = "X-Same-Map-Probe"
	defer delete(a, probe)
	a[probe] = nil
	_, ok := b[probe]
	return ok
}

// yes is a WithResendable function that says the request is safe to repeat.
func yes() bool { return true }

// TestResendableAskedOnlyAfter503 covers WithResendable: its function is
// asked only when a 503 without Retry-After comes, and a request it does
// not vouch for gets that answer back after one hit; 429, and 503 with
// Retry-After, are sent again without asking it.
func TestResendableAskedOnlyAfter503(t *testing.T) {
	for _, via := range []bool{false, true} {
		viaSender = via
		for _, tt := range []struct {
			name   string
			steps  []step
			vouch  bool
			hits   int
			asked  int32
			status int
		}{
			{"503 without Retry-After, not vouched for", []step{answer(503), answer(200)}, false, 1, 1, 503},
			{"503 without Retry-After, vouched for", []step{answer(503), answer(200)}, true, 2, 1, 200},
			{"429 without Retry-After", []step{answer(429), answer(200)}, false, 2, 0, 200},
			{"503 with Retry-After", []step{answer(503, "Retry-After", "0"), answer(200)}, false, 2, 0, 200},
			{"429, then 503 without Retry-After", []step{answer(429, "Retry-After", "0"), answer(503), answer(200)}, false, 2, 1, 503},
		} {
			t.Run(fmt.Sprintf("%s/sender=%v", tt.name, via), func(t *testing.T) {
				s := newServer(t, tt.steps...)
				g := newRig(t, fast, 0)
				var asked atomic.Int32
				ctx := WithResendable(context.Background(), func() bool { asked.Add(1); return tt.vouch })
				status, _, err := g.post(ctx, s.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
				if err != nil || status != tt.status {
					t.Fatalf("post = (%d, %v), want %d", status, err, tt.status)
				}
				if n := len(s.hits()); n != tt.hits {
					t.Errorf("server hit %d times, want %d", n, tt.hits)
				}
				if n := asked.Load(); n != tt.asked {
					t.Errorf("the WithResendable function was asked %d times, want %d", n, tt.asked)
				}
				if !g.tr.allClosed() {
					t.Error("a response body was left open")
				}
			})
		}
	}
	viaSender = false
}
