package modern

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
)

// TestGETReconnect: the GET stream is reopened each time it ends or
// fails, with Last-Event-ID of the last event seen on it and the policy's
// backoff; messages keep arriving, and the POST channel is unaffected.
func TestGETReconnect(t *testing.T) {
	var gets atomic.Int32
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method != http.MethodGet {
			mcp("s-g")(w, r, body)
			return
		}
		switch n := gets.Add(1); n {
		case 1, 3:
			ev := startSSE(w)
			ev(fmt.Sprintf("id: g%d\n", n) + data(fmt.Sprintf(`{"jsonrpc":"2.0","method":"n%d"}`, n)))
			if n == 3 {
				cut() // broken rather than ended
			}
		case 2:
			http.Error(w, "restarting", http.StatusBadGateway) // a failed reconnect
		case 4:
			ev := startSSE(w)
			ev(data(`{"jsonrpc":"2.0","method":"n4"}`))
			<-r.Context().Done()
		default:
			t.Errorf("GET #%d: unexpected", n)
		}
	})
	l := &logs{}
	tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tiny()}})
	handshake(t, tr, ch)
	for _, want := range []string{"notification n1", "notification n3", "notification n4"} {
		if got := describe(next(t, ch)); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	send(t, tr, request(2, "tools/list"))
	next(t, ch)
	var ids []string
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet {
			ids = append(ids, r.Header.Get("Last-Event-Id"))
			if r.Header.Get("Mcp-Session-Id") != "s-g" {
				t.Errorf("GET without the session: %v", r.Header)
			}
		}
	}
	if fmt.Sprint(ids) != fmt.Sprint([]string{"", "g1", "g1", "g3"}) {
		t.Errorf("Last-Event-ID of the GETs: %q", ids)
	}
	// The backoff grows after the failed reconnect, and starts over after
	// the stream that brought a new id (tiny: 1 ms doubling, no jitter).
	if got := l.Durations("modern: reconnecting the GET stream", "wait"); fmt.Sprint(got) != "[1ms 2ms 1ms]" {
		t.Errorf("reconnect waits %v, want [1ms 2ms 1ms]", got)
	}
	if w := l.Messages(slog.LevelWarn); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
}

// TestGETReconnectServerRetry: a retry: on the GET stream is the wait
// before reopening it, exactly: the conformance suite's sse-retry scenario
// wants the reconnect between 450 and 700 ms after retry: 500.
func TestGETReconnectServerRetry(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method != http.MethodGet {
			mcp("")(w, r, body)
			return
		}
		mu.Lock()
		times = append(times, time.Now())
		n := len(times)
		mu.Unlock()
		ev := startSSE(w)
		if n == 1 {
			ev("id: prime\nretry: 500\ndata:\n\n")
			return
		}
		ev(data(`{"jsonrpc":"2.0","method":"back"}`))
		<-r.Context().Done()
	})
	// A policy whose own delays would be far off the window, jitter on.
	p := &reconnect.Policy{InitialDelay: 5 * time.Second, Jitter: 0.5}
	tr, ch := dial(t, s, Options{Common: httpopt.Common{Reconnect: p}})
	handshake(t, tr, ch)
	if got := describe(next(t, ch)); got != "notification back" {
		t.Fatalf("got %s", got)
	}
	mu.Lock()
	gap := times[1].Sub(times[0])
	mu.Unlock()
	if gap < 500*time.Millisecond || gap > 700*time.Millisecond {
		t.Errorf("reconnected %v after the stream with retry: 500", gap)
	}
	if id := s.Requests()[len(s.Requests())-1]; id.Header.Get("Last-Event-Id") != "prime" {
		t.Errorf("Last-Event-ID = %q", id.Header.Get("Last-Event-Id"))
	}
}

// TestGETReconnectExhausted: a GET stream that keeps failing is a warning
// once the policy gives up, and goes on being retried.
func TestGETReconnectExhausted(t *testing.T) {
	var gets atomic.Int32
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method != http.MethodGet {
			mcp("")(w, r, body)
			return
		}
		if gets.Add(1) <= 6 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		ev := startSSE(w)
		ev(data(`{"jsonrpc":"2.0","method":"up"}`))
		<-r.Context().Done()
	})
	l := &logs{}
	tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tiny()}})
	handshake(t, tr, ch)
	if got := describe(next(t, ch)); got != "notification up" {
		t.Fatalf("got %s", got)
	}
	if w := l.Messages(slog.LevelWarn); len(w) != 1 {
		t.Errorf("warnings %q, want one", w)
	}
}

// sessions is a server whose sessions the test can end: a request with an
// unknown session id gets 404; initialize starts session "s<N>". GET
// streams send one event and end, or stay open when hold is set.
type sessions struct {
	mu      sync.Mutex
	n       int
	current string
	hold    bool
}

func (ss *sessions) expire() {
	ss.mu.Lock()
	ss.current = ""
	ss.mu.Unlock()
}

func (ss *sessions) handler(w http.ResponseWriter, r *http.Request, body []byte) {
	m, _ := jsonrpc.DecodeMessage(body)
	ss.mu.Lock()
	if m != nil && m.Method == "initialize" {
		ss.n++
		ss.current = "s" + strconv.Itoa(ss.n)
	}
	current, hold := ss.current, ss.hold
	ss.mu.Unlock()
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && sid != current {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if r.Method == http.MethodGet {
		ev := startSSE(w)
		ev("id: " + current + "-1\n" + data(`{"jsonrpc":"2.0","method":"on-`+current+`"}`))
		if hold {
			<-r.Context().Done()
		}
		return
	}
	mcp(current)(w, r, body)
}

// getsSince returns the GETs from the i-th request on.
func getsSince(s *server, i int) []seen {
	var out []seen
	for _, r := range s.Requests()[i:] {
		if r.Method == http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

// TestGETSessionLost: a 404 when reopening the GET stream while a session
// is held: Recv reports a SessionLostError, the session is forgotten, no
// GET is sent until a new session's notifications/initialized, Send
// refuses everything but initialize without a request, and the new
// session's stream starts afresh.
func TestGETSessionLost(t *testing.T) {
	ss := &sessions{}
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodGet {
			defer func() {
				if r.Header.Get("Last-Event-Id") == "" {
					ss.expire() // the first stream of a session ends with the session
				}
			}()
		}
		ss.handler(w, r, body)
	})
	tr, ch, lost := dialLost(t, s, Options{Common: httpopt.Common{Reconnect: tiny()}})
	handshake(t, tr, ch)
	if got := describe(next(t, ch)); got != "notification on-s1" {
		t.Fatalf("got %s", got)
	}
	select {
	case err := <-lost:
		var sl *jsonrpc.SessionLostError
		var he *jsonrpc.HTTPError
		if !errors.As(err, &sl) || !errors.Is(err, jsonrpc.ErrSessionExpired) || !errors.As(err, &he) || he.StatusCode != 404 {
			t.Fatalf("Recv = %v, want a SessionLostError for a 404", err)
		}
	case <-time.After(wait):
		t.Fatal("Recv reported no lost session")
	}
	if tr.SessionID() != "" || tr.ProtocolVersion() != "" {
		t.Errorf("session kept: %q %q", tr.SessionID(), tr.ProtocolVersion())
	}
	before := len(s.Requests())
	// Once the GET stream's goroutine has ended, nothing sends a GET
	// until a new session's notifications/initialized.
	testkit.Eventually(t, wait, "the GET stream's goroutine to end", func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.listener == nil
	})
	for _, m := range []*jsonrpc.Message{request(2, "tools/call"), notification("notifications/initialized"),
		{ID: jsonrpc.String("srv"), Result: []byte(`{}`)}} {
		if err := sendErr(tr, m); !errors.Is(err, jsonrpc.ErrSessionExpired) {
			t.Errorf("Send %s = %v, want ErrSessionExpired", describe(m), err)
		}
	}
	if n := len(s.Requests()); n != before {
		t.Fatalf("%d requests after the session was lost, want none", n-before)
	}

	ss.mu.Lock()
	ss.hold = true
	ss.mu.Unlock()
	handshake(t, tr, ch)
	if tr.SessionID() != "s2" {
		t.Fatalf("SessionID() = %q, want s2", tr.SessionID())
	}
	if got := describe(next(t, ch)); got != "notification on-s2" {
		t.Fatalf("got %s", got)
	}
	gets := getsSince(s, before)
	if len(gets) != 1 || gets[0].Header.Get("Mcp-Session-Id") != "s2" || gets[0].Header.Get("Last-Event-Id") != "" {
		t.Errorf("GETs of the new session: %d, first %v", len(gets), gets)
	}
	send(t, tr, request(3, "tools/call"))
	if got := describe(next(t, ch)); got != `response 3 {"ok":true}` {
		t.Errorf("got %s", got)
	}
}

// TestSessionRefusedAfter404: after a POST answered 404 for the session,
// nothing but initialize is sent until an initialize succeeds; the new
// session is adopted, and its notifications/initialized replaces the old
// session's GET stream with a new one.
func TestSessionRefusedAfter404(t *testing.T) {
	ss := &sessions{hold: true}
	s := newServer(t, ss.handler)
	tr, ch := dial(t, s, Options{Common: httpopt.Common{Reconnect: tiny()}})
	handshake(t, tr, ch)
	if got := describe(next(t, ch)); got != "notification on-s1" {
		t.Fatalf("got %s", got)
	}
	ss.expire()
	if err := sendErr(tr, request(2, "tools/call")); !errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Fatalf("Send = %v, want ErrSessionExpired", err)
	}
	before := len(s.Requests())
	for _, m := range []*jsonrpc.Message{request(2, "tools/call"), notification("notifications/cancelled")} {
		err := sendErr(tr, m)
		if !errors.Is(err, jsonrpc.ErrSessionExpired) || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Errorf("Send %s = %v, want ErrSessionExpired", describe(m), err)
		}
	}
	if n := len(s.Requests()); n != before {
		t.Fatalf("%d requests sent with the session lost", n-before)
	}

	handshake(t, tr, ch)
	if tr.SessionID() != "s2" {
		t.Fatalf("SessionID() = %q, want s2", tr.SessionID())
	}
	if got := describe(next(t, ch)); got != "notification on-s2" {
		t.Fatalf("got %s", got)
	}
	send(t, tr, request(3, "tools/call"))
	if got := describe(next(t, ch)); got != `response 3 {"ok":true}` {
		t.Errorf("got %s", got)
	}
	gets := getsSince(s, 0)
	if len(gets) != 2 || gets[1].Header.Get("Mcp-Session-Id") != "s2" {
		t.Errorf("GETs: %d, want the first session's and the second's", len(gets))
	}
}

// TestThrottled: a POST answered 429, or 503 with Retry-After, was not
// run: it is sent again after the Retry-After (or the backoff), and the
// caller sees one answer. So is one answered 503 without Retry-After when
// its context is marked retry.WithResendable (TestSendStatusAfterRequest
// covers the unmarked one).
func TestThrottled(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		retryAfter string
		refusals   int
		min        time.Duration
	}{
		{"429 with Retry-After", http.StatusTooManyRequests, "1", 1, time.Second},
		{"503 with an HTTP date in the past", http.StatusServiceUnavailable, "Sun, 06 Nov 1994 08:49:37 GMT", 1, 0},
		{"503 without Retry-After", http.StatusServiceUnavailable, "", 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if m, _ := jsonrpc.DecodeMessage(body); m != nil && m.Method == "tools/call" && calls.Add(1) <= int32(tt.refusals) {
					if tt.retryAfter != "" {
						w.Header().Set("Retry-After", tt.retryAfter)
					}
					http.Error(w, "later", tt.status)
					return
				}
				mcp("")(w, r, body)
			})
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tiny()}})
			start := time.Now()
			ctx, cancel := context.WithTimeout(retry.WithResendable(context.Background(), func() bool { return true }), wait)
			defer cancel()
			if err := tr.Send(ctx, request(5, "tools/call")); err != nil {
				t.Fatalf("Send: %v", err)
			}
			if d := time.Since(start); d < tt.min || d > tt.min+time.Second {
				t.Errorf("Send took %v, want about %v", d, tt.min)
			}
			if got := describe(next(t, ch)); got != `response 5 {"ok":true}` {
				t.Fatalf("got %s", got)
			}
			none(t, ch)
			if n := s.Count(http.MethodPost); n != tt.refusals+1 {
				t.Errorf("%d POSTs, want %d", n, tt.refusals+1)
			}
			if n := len(l.Messages(slog.LevelInfo)); n != tt.refusals {
				t.Errorf("%d info records, want one per retry", n)
			}
		})
	}
}

// TestThrottledGiveUp: a Retry-After over the cap, or past the caller's
// deadline, is not waited for: Send fails at once with a
// *reconnect.RetryAfterError after one POST, and the request did not run.
func TestThrottledGiveUp(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		timeout    time.Duration
		wait       time.Duration
	}{
		{"over the cap", "120", wait, 120 * time.Second},
		{"past the deadline", "1", 300 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				w.Header().Set("Retry-After", tt.retryAfter)
				http.Error(w, "slow down", http.StatusTooManyRequests)
			})
			l := &logs{}
			tr, _ := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tiny()}})
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			start := time.Now()
			err := tr.Send(ctx, request(5, "tools/call"))
			var ra *reconnect.RetryAfterError
			if !errors.As(err, &ra) || ra.Status != http.StatusTooManyRequests || ra.Wait != tt.wait {
				t.Fatalf("Send = %v, want a RetryAfterError asking %v", err, tt.wait)
			}
			if errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Error("a throttled request did not run: its outcome is known")
			}
			if d := time.Since(start); d > 200*time.Millisecond {
				t.Errorf("Send took %v; the wait should not have been started", d)
			}
			if n := s.Count(http.MethodPost); n != 1 {
				t.Errorf("%d POSTs, want 1", n)
			}
			if w := l.Messages(slog.LevelWarn); len(w) != 1 {
				t.Errorf("warnings %q, want one", w)
			}
		})
	}
}

// onRetry is a slog handler that runs f, once, when the retrying client
// logs that it will send a request again (the first time, or the at-th
// time when at > 1): before the wait, so that what f changes is in place
// when the request goes out again.
type onRetry struct {
	at int
	mu sync.Mutex
	n  int
	f  func()
}

func (h *onRetry) Enabled(context.Context, slog.Level) bool { return true }
func (h *onRetry) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *onRetry) WithGroup(string) slog.Handler            { return h }
func (h *onRetry) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "reconnect: retrying request" {
		return nil
	}
	h.mu.Lock()
	h.n++
	run := h.n == max(h.at, 1)
	h.mu.Unlock()
	if run {
		h.f()
	}
	return nil
}

// TestThrottledResendSession: a message waiting out a 429 is sent again on
// the session current when it goes out — never on one that expired
// meanwhile: a lost session, or one replaced by a session not yet
// initialized, refuses it unsent (ErrNotSent with ErrSessionExpired: it
// did not run); a request moves to a replacing session once that one got
// notifications/initialized; a notification belongs to its session and
// is refused.
func TestThrottledResendSession(t *testing.T) {
	tests := []struct {
		name     string
		msg      *jsonrpc.Message
		reinit   bool // a new session is initialized during the wait
		notified bool // ... and gets notifications/initialized
		sessions []string
		notSent  bool
	}{
		{"lost during the wait", request(5, "tools/call"), false, false, []string{"s1"}, true},
		{"replaced during the wait", request(5, "tools/call"), true, true, []string{"s1", "s2"}, false},
		{"replaced by a session not initialized yet", request(5, "tools/call"), true, false, []string{"s1"}, true},
		{"a notification's session replaced", notification("notifications/roots/list_changed"), true, true, []string{"s1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			alive, issued, throttled := map[string]bool{}, 0, false
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				m, _ := jsonrpc.DecodeMessage(body)
				mu.Lock()
				defer mu.Unlock()
				switch sid := r.Header.Get("Mcp-Session-Id"); {
				case m != nil && m.Method == "initialize":
					issued++
					sid = "s" + strconv.Itoa(issued)
					alive[sid] = true
					mcp(sid)(w, r, body)
				case r.Method == http.MethodPost && !alive[sid]:
					http.Error(w, "no such session", http.StatusNotFound)
				case m != nil && m.Method == tt.msg.Method && !throttled:
					throttled = true
					http.Error(w, "later", http.StatusTooManyRequests) // no Retry-After: the backoff
				default:
					mcp("")(w, r, body)
				}
			})
			h := &onRetry{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(h), Reconnect: tiny()}})
			handshake(t, tr, ch)
			h.f = func() {
				mu.Lock()
				alive["s1"] = false
				mu.Unlock()
				if err := sendErr(tr, request(2, "ping")); !errors.Is(err, jsonrpc.ErrSessionExpired) {
					t.Errorf("ping on the expired session: %v", err)
				}
				if tt.reinit {
					send(t, tr, initialize())
					next(t, ch)
				}
				if tt.notified {
					send(t, tr, notification("notifications/initialized"))
				}
			}
			err := sendErr(tr, tt.msg)
			if tt.notSent {
				if !errors.Is(err, jsonrpc.ErrNotSent) || !errors.Is(err, jsonrpc.ErrSessionExpired) || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
					t.Errorf("Send = %v, want a refusal: not sent, session expired", err)
				}
			} else if err != nil {
				t.Errorf("Send = %v", err)
			}
			var got []string
			for _, r := range s.Requests() {
				if m, _ := jsonrpc.DecodeMessage([]byte(r.Body)); r.Method == http.MethodPost && m != nil && m.Method == tt.msg.Method {
					got = append(got, r.Header.Get("Mcp-Session-Id"))
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.sessions, ",") {
				t.Errorf("%s POSTed with sessions %q, want %q", tt.msg.Method, got, tt.sessions)
			}
		})
	}
}

// TestThrottledThenSessionLost: a request refused by every answer it got
// — 429s, 503s with Retry-After — and then refused unsent because its
// session expired during a wait did not run: the error matches ErrNotSent
// and ErrSessionExpired, and not ErrOutcomeUnknown, however many answers
// came before (after two, it matched ErrOutcomeUnknown too: the latest
// attempt had gone out in full, and nothing recorded that a 429 had
// refused it). An answer that leaves open whether the server ran it — a
// 503 without Retry-After, sent again only because the request is marked
// retry.WithResendable — keeps ErrOutcomeUnknown.
func TestThrottledThenSessionLost(t *testing.T) {
	const (
		tooMany     = "429"
		later       = "503 Retry-After: 0"
		unexplained = "503"
	)
	tests := []struct {
		answers []string // to the request's attempts, in order; the session expires in the last wait
		unknown bool
	}{
		{[]string{tooMany, tooMany}, false},
		{[]string{tooMany, later, tooMany}, false},
		{[]string{tooMany}, false},
		{[]string{unexplained, tooMany}, true},
		{[]string{tooMany, unexplained}, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.answers, ", "), func(t *testing.T) {
			var mu sync.Mutex
			alive, answered := true, 0
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				m, _ := jsonrpc.DecodeMessage(body)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case m != nil && m.Method == "initialize":
					alive = true
					mcp("s1")(w, r, body)
				case r.Method == http.MethodPost && !alive:
					http.Error(w, "no such session", http.StatusNotFound)
				case m != nil && m.Method == "tools/call" && answered < len(tt.answers):
					a := tt.answers[answered]
					answered++
					if a == later {
						w.Header().Set("Retry-After", "0")
					}
					code, _ := strconv.Atoi(a[:3])
					http.Error(w, "later", code)
				default:
					mcp("s1")(w, r, body)
				}
			})
			h := &onRetry{at: len(tt.answers)}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(h), Reconnect: tiny()}})
			handshake(t, tr, ch)
			h.f = func() {
				mu.Lock()
				alive = false
				mu.Unlock()
				if err := sendErr(tr, request(2, "ping")); !errors.Is(err, jsonrpc.ErrSessionExpired) {
					t.Errorf("ping on the expired session: %v", err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			err := tr.Send(retry.WithResendable(ctx, func() bool { return true }), request(5, "tools/call"))
			if !errors.Is(err, jsonrpc.ErrNotSent) || !errors.Is(err, jsonrpc.ErrSessionExpired) || errors.Is(err, jsonrpc.ErrOutcomeUnknown) != tt.unknown {
				t.Errorf("Send = %v\nwant: not sent, session expired, outcome unknown %v", err, tt.unknown)
			}
			mu.Lock()
			n := answered
			mu.Unlock()
			if n != len(tt.answers) {
				t.Errorf("tools/call POSTed %d times, want %d", n, len(tt.answers))
			}
		})
	}
}

// TestGETReconnectQuietStreams: a GET stream that opened and stayed open a
// while (the policy's InitialDelay) is progress, even if nothing came on
// it: one that the server or an idle proxy ends after a quiet while is
// reopened after InitialDelay every time, without a warning. Such streams
// counted as failures: the waits grew, and once the policy's attempts
// were spent the transport warned and waited MaxDelay before each GET.
func TestGETReconnectQuietStreams(t *testing.T) {
	const hold = 30 * time.Millisecond // each stream's life: well over InitialDelay
	var gets atomic.Int32
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method != http.MethodGet {
			mcp("s1")(w, r, body)
			return
		}
		gets.Add(1)
		startSSE(w)
		select { // quiet, then a clean end
		case <-time.After(hold):
		case <-r.Context().Done():
		}
	})
	l := &logs{}
	p := &reconnect.Policy{InitialDelay: 5 * time.Millisecond, MaxDelay: time.Hour,
		Jitter: -1, MaxAttempts: 2, Budget: time.Hour}
	tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: p}})
	handshake(t, tr, ch)
	const streams = 6 // twice the policy's attempts, and more
	testkit.Eventually(t, wait, "the GET streams", func() bool { return gets.Load() >= streams })
	if w := l.Messages(slog.LevelWarn); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
	waits := l.Durations("modern: reconnecting the GET stream", "wait")
	if len(waits) < streams-1 {
		t.Fatalf("reconnect waits %v, want at least %d", waits, streams-1)
	}
	for _, w := range waits {
		if w != p.InitialDelay {
			t.Errorf("reconnect waits %v, want InitialDelay (%v) each", waits, p.InitialDelay)
			break
		}
	}
}

// TestGETReconnectEndedAtOnce: a GET stream that the server ends as soon
// as it opened it, with nothing in it but a new event id (and no retry:,
// which would make it a poll: see TestGETStreamServerPoll) or a retry:
// without a new id, is no progress: the policy's waits grow and its
// attempts run out (a warning, then MaxDelay), although a stream that
// lasts is progress — a server that accepts and ends every GET gets no
// hot loop, even with retry: 0 (waited minServerRetry at least after a
// clean end).
func TestGETReconnectEndedAtOnce(t *testing.T) {
	// InitialDelay is far over a loopback GET even on a loaded machine.
	p := &reconnect.Policy{InitialDelay: 500 * time.Millisecond, MaxDelay: time.Hour,
		Jitter: -1, MaxAttempts: 1, Budget: time.Hour}
	tests := []struct {
		name  string
		event func(n int32) string // GET n's event, before the end
		first time.Duration
	}{
		{"a new id, no retry:", func(n int32) string { return fmt.Sprintf("id: g%d\ndata:\n\n", n) }, p.InitialDelay},
		{"retry: 0, no id", func(int32) string { return "retry: 0\ndata:\n\n" }, minServerRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gets atomic.Int32
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.Method != http.MethodGet {
					mcp("s1")(w, r, body)
					return
				}
				n := gets.Add(1)
				startSSE(w)(tt.event(n)) // and the end
			})
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: p}})
			handshake(t, tr, ch)
			const reconnecting = "modern: reconnecting the GET stream"
			testkit.Eventually(t, wait, "the second reconnect", func() bool { return len(l.Durations(reconnecting, "wait")) >= 2 })
			if got := l.Durations(reconnecting, "wait"); fmt.Sprint(got) != fmt.Sprint([]time.Duration{tt.first, p.MaxDelay}) {
				t.Errorf("reconnect waits %v, want [%v %v]", got, tt.first, p.MaxDelay)
			}
			if w := l.Messages(slog.LevelWarn); len(w) != 1 {
				t.Errorf("warnings %q, want one", w)
			}
			if n := gets.Load(); n != 2 {
				t.Errorf("%d GETs, want 2", n)
			}
		})
	}
}

// TestGETStreamServerPoll: a GET stream that the server ends at once after
// a new event id, having sent a retry: field (on it or before), is a poll
// the server asked for: reopened after the retry: (minServerRetry at
// least), every time, without a warning, for the life of the transport.
// Each poll was a failed attempt: once the policy's attempts were spent
// the stream was reopened every MaxDelay (30 s by default), and the
// server's notifications came that late. Without a new id it is no poll:
// the attempts run out.
func TestGETStreamServerPoll(t *testing.T) {
	p := &reconnect.Policy{InitialDelay: 500 * time.Millisecond, MaxDelay: time.Hour,
		Jitter: -1, MaxAttempts: 2, Budget: time.Hour}
	const reconnects = 6 // three times the policy's attempts
	repeat := func(d time.Duration, n int) []time.Duration {
		w := make([]time.Duration, n)
		for i := range w {
			w[i] = d
		}
		return w
	}
	tests := []struct {
		name  string
		event func(n int32) string // GET n's event, before the end
		waits []time.Duration      // the first reconnects'
		warns int
	}{{
		name:  "a new id and retry: on every stream",
		event: func(n int32) string { return fmt.Sprintf("id: g%d\nretry: 5\ndata:\n\n", n) },
		waits: repeat(minServerRetry, reconnects),
	}, {
		name: "retry: 120 on the first stream only",
		event: func(n int32) string {
			if n == 1 {
				return "id: g1\nretry: 120\ndata:\n\n"
			}
			return fmt.Sprintf("id: g%d\ndata:\n\n", n)
		},
		waits: repeat(120*time.Millisecond, reconnects),
	}, {
		name:  "the same id again: no poll",
		event: func(int32) string { return "id: g\nretry: 0\ndata:\n\n" },
		waits: append(repeat(minServerRetry, 3), p.MaxDelay), // the poll, then 2 failed attempts
		warns: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gets atomic.Int32
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.Method != http.MethodGet {
					mcp("s1")(w, r, body)
					return
				}
				startSSE(w)(tt.event(gets.Add(1))) // and the end
			})
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: p}})
			handshake(t, tr, ch)
			const reconnecting = "modern: reconnecting the GET stream"
			testkit.Eventually(t, wait, "the reconnects", func() bool {
				return len(l.Durations(reconnecting, "wait")) >= len(tt.waits) || len(l.Messages(slog.LevelWarn)) > tt.warns
			})
			tr.Close() // ends the wait of an hour
			got := l.Durations(reconnecting, "wait")
			got = got[:min(len(got), len(tt.waits))]
			if fmt.Sprint(got) != fmt.Sprint(tt.waits) {
				t.Errorf("reconnect waits %v, want %v", got, tt.waits)
			}
			if w := l.Messages(slog.LevelWarn); len(w) != tt.warns {
				t.Errorf("warnings %q, want %d", w, tt.warns)
			}
		})
	}
}

// TestGETRetryAfter: a 429 or 503 with Retry-After to a GET — reopening
// the standalone stream, or resuming a request's — is waited out before
// the next GET, as for a POST: within the policy's MaxRetryAfter the wait
// is the Retry-After (100 ms at least: Retry-After: 0 is no hot loop), not
// the policy's backoff; over the cap it is the cap. Each is a failed
// attempt (see TestGETRetryAfterBounded). GETs ignored Retry-After: they
// came back on the policy's backoff, and a resumption used up its
// attempts before the server's wait was over.
func TestGETRetryAfter(t *testing.T) {
	p := &reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond,
		Jitter: -1, MaxAttempts: 4, Budget: wait, MaxRetryAfter: time.Hour}
	over := *p
	over.MaxRetryAfter = 50 * time.Millisecond
	tests := []struct {
		name       string
		resume     bool // the GETs resume a request's stream; else the standalone stream
		status     int
		retryAfter string
		throttles  int // GETs answered so; the next is served
		policy     *reconnect.Policy
		waits      []time.Duration
	}{
		{"standalone, 429 Retry-After: 0", false, http.StatusTooManyRequests, "0", 3, p,
			[]time.Duration{minServerRetry, minServerRetry, minServerRetry}},
		{"standalone, 503 over the cap", false, http.StatusServiceUnavailable, "3600", 1, &over,
			[]time.Duration{over.MaxRetryAfter}},
		{"resuming, 429 Retry-After: 0", true, http.StatusTooManyRequests, "0", 3, p,
			[]time.Duration{0, minServerRetry, minServerRetry, minServerRetry}},
		{"resuming, 503 over the cap", true, http.StatusServiceUnavailable, "3600", 1, &over,
			[]time.Duration{0, over.MaxRetryAfter}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gets atomic.Int32
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				m, _ := jsonrpc.DecodeMessage(body)
				switch {
				case r.Method == http.MethodPost && m != nil && m.Method == "tools/call":
					startSSE(w)("id: e1\ndata:\n\n")
					cut()
				case r.Method == http.MethodGet:
					if int(gets.Add(1)) <= tt.throttles {
						w.Header().Set("Retry-After", tt.retryAfter)
						http.Error(w, "later", tt.status)
						return
					}
					ev := startSSE(w)
					if tt.resume {
						ev("id: e2\n" + data(response("5", `{}`)))
						return
					}
					ev(data(`{"jsonrpc":"2.0","method":"back"}`))
					<-r.Context().Done()
				default:
					mcp("s1")(w, r, body)
				}
			})
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tt.policy}})
			msg := "modern: reconnecting the GET stream"
			if tt.resume {
				msg = "modern: resuming the event stream of a request"
				send(t, tr, initialize())
				next(t, ch)
				send(t, tr, request(5, "tools/call"))
			} else {
				handshake(t, tr, ch)
			}
			if got := describe(next(t, ch)); got != map[bool]string{false: "notification back", true: "response 5 {}"}[tt.resume] {
				t.Fatalf("got %s", got)
			}
			if got := l.Durations(msg, "wait"); fmt.Sprint(got) != fmt.Sprint(tt.waits) {
				t.Errorf("waits %v, want %v", got, tt.waits)
			}
			if w := l.Messages(slog.LevelWarn); len(w) != 0 {
				t.Errorf("warnings: %q", w)
			}
			if n := int(gets.Load()); n != tt.throttles+1 {
				t.Errorf("%d GETs, want %d", n, tt.throttles+1)
			}
		})
	}
}

// TestGETRetryAfterBounded: each 429 or 503 with Retry-After to a GET is a
// failed attempt of the policy, as the retrying client counts one to a
// POST: a resumption that the server throttles for ever gives up once the
// policy's attempts or its budget are spent, and Send fails as outcome
// unknown; the standalone stream warns and goes on every MaxDelay (or the
// server's Retry-After, when longer). Throttled GETs were no failed
// attempt: neither MaxAttempts nor Budget ever ended a resumption, and a
// server answering 503 Retry-After: 0 kept a Send busy for ever.
func TestGETRetryAfterBounded(t *testing.T) {
	tests := []struct {
		name   string
		resume bool // the GETs resume a request's stream; else the standalone stream
		policy *reconnect.Policy
		want   string // in Send's error
	}{{
		name:   "resuming, the attempts",
		resume: true,
		policy: &reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
			Jitter: -1, MaxAttempts: 3, Budget: time.Hour, MaxRetryAfter: time.Second},
		want: "3 attempts in a row without progress",
	}, {
		name:   "resuming, the budget",
		resume: true,
		policy: &reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
			Jitter: -1, MaxAttempts: -1, Budget: 300 * time.Millisecond, MaxRetryAfter: time.Second},
		want: "budget without progress spent",
	}, {
		name: "standalone, the attempts",
		policy: &reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 300 * time.Millisecond,
			Jitter: -1, MaxAttempts: 2, Budget: time.Hour, MaxRetryAfter: time.Second},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gets atomic.Int32
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				m, _ := jsonrpc.DecodeMessage(body)
				switch {
				case r.Method == http.MethodPost && m != nil && m.Method == "tools/call":
					startSSE(w)("id: e1\ndata:\n\n")
					cut()
				case r.Method == http.MethodGet:
					if n := gets.Add(1); tt.resume || n <= 4 {
						w.Header().Set("Retry-After", "0")
						http.Error(w, "busy", http.StatusServiceUnavailable)
						return
					}
					startSSE(w)(data(`{"jsonrpc":"2.0","method":"back"}`))
					<-r.Context().Done()
				default:
					mcp("s1")(w, r, body)
				}
			})
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tt.policy}})
			if !tt.resume {
				handshake(t, tr, ch)
				if got := describe(next(t, ch)); got != "notification back" {
					t.Fatalf("got %s", got)
				}
				// 2 throttles waited as asked, then the policy's attempts
				// are spent: MaxDelay, longer than the server asked for.
				want := []time.Duration{minServerRetry, minServerRetry, tt.policy.MaxDelay, tt.policy.MaxDelay}
				if got := l.Durations("modern: reconnecting the GET stream", "wait"); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("waits %v, want %v", got, want)
				}
				if w := l.Messages(slog.LevelWarn); len(w) != 1 {
					t.Errorf("warnings %q, want one", w)
				}
				return
			}
			send(t, tr, initialize())
			next(t, ch)
			done := make(chan error, 1)
			go func() { done <- tr.Send(context.Background(), request(5, "tools/call")) }()
			select {
			case err := <-done:
				if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Send = %v, want ErrOutcomeUnknown, %s", err, tt.want)
				}
			case <-time.After(wait):
				t.Errorf("Send still resuming after %v: %d throttled GETs so far", wait, gets.Load())
				tr.Close()
				<-done
			}
		})
	}
}

// TestGETStreamGap: a GET stream whose events have no ids that ends and
// opens again cannot be resumed: once it is open, Recv returns a
// *jsonrpc.GapError, before the messages of the new stream. A stream with
// ids is resumed (Last-Event-ID), and says nothing of a gap.
func TestGETStreamGap(t *testing.T) {
	for _, ids := range []bool{false, true} {
		t.Run(fmt.Sprintf("ids=%v", ids), func(t *testing.T) {
			var gets atomic.Int32
			// GET #3 opens once the Recv loop has passed on n2, and the
			// gap before it: so that the gap of #3 is not one that waits
			// still (see TestGETStreamGapsCoalesce).
			tookN2 := make(chan struct{})
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.Method != http.MethodGet {
					mcp("s-g")(w, r, body)
					return
				}
				id := ""
				if ids {
					id = "id: g1\n"
				}
				switch n := gets.Add(1); n {
				case 1:
					startSSE(w)(id + data(`{"jsonrpc":"2.0","method":"n1"}`))
					cut() // broken
				case 2, 3:
					if n == 3 {
						<-tookN2
					}
					ev := startSSE(w)
					ev(data(fmt.Sprintf(`{"jsonrpc":"2.0","method":"n%d"}`, n)))
					if n == 2 {
						return // ended
					}
					<-r.Context().Done()
				default:
					t.Errorf("GET #%d: unexpected", n)
				}
			})
			tr, ch, lost := dialLost(t, s, Options{Common: httpopt.Common{Reconnect: tiny()}})
			handshake(t, tr, ch)
			for _, want := range []string{"notification n1", "notification n2", "notification n3"} {
				if got := describe(next(t, ch)); got != want {
					t.Fatalf("got %s, want %s", got, want)
				}
				if want == "notification n2" {
					close(tookN2)
				}
			}
			// The Recv loop passes on an error before the message after
			// it: what lost holds now came before n3.
			var gaps []string
			for len(lost) > 0 {
				err := <-lost
				gap, ok := err.(*jsonrpc.GapError)
				if !ok {
					t.Fatalf("Recv: %v", err)
				}
				gaps = append(gaps, gap.Reason)
			}
			want := 0
			if !ids {
				want = 2 // on opening GET #2 (after #1 broke) and GET #3 (after #2 ended)
			}
			if len(gaps) != want {
				t.Fatalf("%d gaps (%q), want %d", len(gaps), gaps, want)
			}
			if want > 0 && (!strings.HasPrefix(gaps[0], "the stream broke") || gaps[1] != "the server ended the stream") {
				t.Errorf("gap reasons %q", gaps)
			}
		})
	}
}

// TestGETStreamGapsCoalesce: while a *jsonrpc.GapError waits for Recv,
// the GET streams that open again add none: a server that ends its stream
// over and over cannot grow the queue.
func TestGETStreamGapsCoalesce(t *testing.T) {
	var gets atomic.Int32
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method != http.MethodGet {
			mcp("s-g")(w, r, body)
			return
		}
		if gets.Add(1) > 5 {
			http.Error(w, "no more", http.StatusMethodNotAllowed) // not reopened
			return
		}
		startSSE(w) // and ended at once, no ids
	})
	tr, err := New(s.URL+"/mcp", Options{Common: httpopt.Common{Reconnect: tiny()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	send(t, tr, initialize())
	if m, err := tr.Recv(); err != nil || !m.IsResponse() {
		t.Fatalf("initialize: %v %v", m, err)
	}
	send(t, tr, notification("notifications/initialized"))
	testkit.Eventually(t, wait, "the GET stream opened 5 times and refused", func() bool { return gets.Load() >= 6 })
	if _, err := tr.Recv(); !errors.As(err, new(*jsonrpc.GapError)) {
		t.Fatalf("Recv: %v, want a *jsonrpc.GapError", err)
	}
	tr.InterruptRecv()
	if m, err := tr.Recv(); !errors.Is(err, jsonrpc.ErrInterrupted) {
		t.Fatalf("Recv after the gap: %v %v, want nothing queued (ErrInterrupted)", m, err)
	}
}
