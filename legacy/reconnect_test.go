package legacy

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
)

// TestReconnectAfterDrop: a stream that ends or breaks is reported by
// Recv as a SessionLostError after the messages it delivered; the
// transport opens a new stream, and the next initialize goes to the new
// endpoint, its answer arriving on the new stream. One warning for the
// drop, one record per attempt, one when reconnected, with the session id
// hidden.
func TestReconnectAfterDrop(t *testing.T) {
	for _, how := range []string{"end", "cut"} {
		t.Run(how, func(t *testing.T) {
			f := newFlaky(t)
			var rec logs
			tr, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: fast(), Logger: slog.New(&rec)}})
			s1 := f.next(t)
			s1.events <- messageEvent(note("notifications/one"))
			s1.events <- messageEvent(note("notifications/two"))
			for _, w := range []string{"notification notifications/one", "notification notifications/two"} {
				if got := describe(fd.msg(t)); got != w {
					t.Fatalf("got %s, want %s", got, w)
				}
			}
			if how == "end" {
				close(s1.end)
			} else {
				close(s1.cut)
			}
			lost := fd.lost(t)
			if how == "cut" && !strings.Contains(lost.Error(), "broke") {
				t.Errorf("cause %q does not say the stream broke", lost.Cause)
			}
			f.next(t) // the new stream
			testkit.Eventually(t, wait, "the new endpoint", func() bool { return strings.HasSuffix(tr.Endpoint(), "sessionId=s2") })

			send(t, tr, initialize(1))
			if got := describe(fd.msg(t)); got != `response 1 {"method":"initialize","session":"s2"}` {
				t.Errorf("initialize answered with %s", got)
			}
			send(t, tr, notification("notifications/initialized"))
			send(t, tr, request(2, "tools/list"))
			if got := describe(fd.msg(t)); got != `response 2 {"method":"tools/list","session":"s2"}` {
				t.Errorf("tools/list answered with %s", got)
			}
			want := []string{"/message?sessionId=s2", "/message?sessionId=s2", "/message?sessionId=s2"}
			if got := f.posts(); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("POSTs %q, want %q", got, want)
			}

			if w := rec.Messages(slog.LevelWarn); len(w) != 1 || !strings.Contains(w[0], "lost") {
				t.Errorf("warnings %q, want one for the drop", w)
			}
			info := rec.Messages(slog.LevelInfo)
			if len(info) != 2 || !strings.Contains(info[0], "reconnecting") || !strings.Contains(info[1], "reconnected") {
				t.Errorf("info records %q, want one attempt and the reconnection", info)
			}
			attrs := rec.Attrs("legacy: reconnected")
			if ep := attrs["endpoint"]; !strings.Contains(ep, "sessionId=…") || strings.Contains(ep, "s2") {
				t.Errorf("logged endpoint %q, want the session id hidden", ep)
			}
			if a := rec.Attrs("legacy: reconnecting"); a["attempt"] != "1" || a["wait"] != "5ms" {
				t.Errorf("attempt record %v", a)
			}
		})
	}
}

// TestSessionRulesWhileDown: while the transport reconnects, every
// message but initialize is refused with ErrSessionExpired and not sent;
// an initialize waits (bounded by its ctx) and then goes to the new
// endpoint, after which everything goes normally.
func TestSessionRulesWhileDown(t *testing.T) {
	f := newFlaky(t)
	gate := make(chan struct{})
	f.onGET = func(n int, _ http.Header) (int, bool) {
		if n == 2 {
			<-gate // hold the reconnection until the test lets it go
		}
		return 0, false
	}
	tr, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: fast()}})
	close(f.next(t).end)
	fd.lost(t)

	for _, m := range []*jsonrpc.Message{request(1, "tools/call"), notification("notifications/roots/list_changed"), {ID: jsonrpc.Int(9), Result: []byte(`{}`)}} {
		if err := sendErr(tr, m); !errors.Is(err, jsonrpc.ErrSessionExpired) || !errors.Is(err, jsonrpc.ErrNotSent) || errors.Is(err, ErrConnectionLost) {
			t.Errorf("Send %s while down = %v, want ErrSessionExpired", describe(m), err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	err := tr.Send(ctx, initialize(2))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("initialize bounded by its ctx = %v, want DeadlineExceeded", err)
	}

	sent := make(chan error, 1)
	go func() { sent <- sendErr(tr, initialize(3)) }()
	select {
	case err := <-sent:
		t.Fatalf("initialize returned while down: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if n := len(f.posts()); n != 0 {
		t.Fatalf("%d POSTs while down", n)
	}
	close(gate)
	select {
	case err := <-sent:
		if err != nil {
			t.Fatalf("waiting initialize = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("initialize still waiting after the reconnection")
	}
	if got := describe(fd.msg(t)); got != `response 3 {"method":"initialize","session":"s2"}` {
		t.Errorf("initialize answered with %s", got)
	}
	send(t, tr, notification("notifications/initialized"))
	send(t, tr, request(4, "tools/list"))
	if got := describe(fd.msg(t)); got != `response 4 {"method":"tools/list","session":"s2"}` {
		t.Errorf("tools/list answered with %s", got)
	}
	want := "/message?sessionId=s2 /message?sessionId=s2 /message?sessionId=s2"
	if got := strings.Join(f.posts(), " "); got != want {
		t.Errorf("POSTs %q, want %q", got, want)
	}
}

// TestSessionRulesAfterReconnect: a reconnected session refuses
// everything but initialize until one has been sent on it; an initialize
// the server rejects puts the rule back.
func TestSessionRulesAfterReconnect(t *testing.T) {
	f := newFlaky(t)
	var rejected atomic.Bool
	f.post = func(w http.ResponseWriter, r *http.Request, body []byte) {
		if m, _ := jsonrpc.DecodeMessage(body); m != nil && m.Method == "initialize" && !rejected.Swap(true) {
			http.Error(w, "not now", http.StatusInternalServerError)
			return
		}
		f.echo(w, r, body)
	}
	tr, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: fast()}})
	close(f.next(t).end)
	fd.lost(t)
	f.next(t)
	testkit.Eventually(t, wait, "the new endpoint", func() bool { return strings.HasSuffix(tr.Endpoint(), "sessionId=s2") })

	if err := sendErr(tr, request(1, "tools/list")); !errors.Is(err, jsonrpc.ErrSessionExpired) || !errors.Is(err, jsonrpc.ErrNotSent) {
		t.Errorf("Send before initialize = %v, want ErrSessionExpired", err)
	}
	var he *jsonrpc.HTTPError
	if err := sendErr(tr, initialize(2)); !errors.As(err, &he) || he.StatusCode != 500 {
		t.Fatalf("rejected initialize = %v", err)
	}
	if posts := f.posts(); len(posts) != 1 || posts[0] != "/message?sessionId=s2" {
		t.Fatalf("the rejected initialize went to %v, want the new session's endpoint", posts)
	}
	if err := sendErr(tr, notification("notifications/initialized")); !errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Errorf("Send after a rejected initialize = %v, want ErrSessionExpired", err)
	}
	send(t, tr, initialize(3))
	if got := describe(fd.msg(t)); got != `response 3 {"method":"initialize","session":"s2"}` {
		t.Errorf("initialize answered with %s", got)
	}
	send(t, tr, request(4, "tools/list"))
	if got := describe(fd.msg(t)); got != `response 4 {"method":"tools/list","session":"s2"}` {
		t.Errorf("tools/list answered with %s", got)
	}
	if got := strings.Join(f.posts(), " "); strings.Count(got, "/message?sessionId=s2") != 3 || strings.Count(got, " ") != 2 {
		t.Errorf("POSTs %q, want three to s2", got)
	}
}

// TestPostInFlightAtDrop: a POST under way when the stream drops is
// cancelled, and its Send says the outcome is unknown.
func TestPostInFlightAtDrop(t *testing.T) {
	f := newFlaky(t)
	posted := make(chan struct{})
	f.post = func(w http.ResponseWriter, r *http.Request, _ []byte) {
		close(posted)
		<-r.Context().Done()
	}
	tr, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: fast()}})
	s1 := f.next(t)
	sent := make(chan error, 1)
	go func() { sent <- sendErr(tr, request(1, "tools/call")) }()
	closed(t, "the POST", posted)
	close(s1.cut)
	select {
	case err := <-sent:
		if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.Is(err, ErrConnectionLost) || errors.Is(err, jsonrpc.ErrSessionExpired) {
			t.Errorf("Send = %v, want ErrOutcomeUnknown and ErrConnectionLost", err)
		}
	case <-time.After(wait):
		t.Fatal("Send still waiting after the stream dropped")
	}
	fd.lost(t)
}

// TestReconnectServerRetry: the retry: field of the lost stream sets the
// wait before the next GET, whatever the policy's delay.
func TestReconnectServerRetry(t *testing.T) {
	const retry = 200 * time.Millisecond
	f := newFlaky(t)
	f.prelude = func(n int) string {
		if n == 1 {
			return "retry: 200\n\n"
		}
		return ""
	}
	_, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: fast()}})
	s1 := f.next(t)
	close(s1.end)
	fd.lost(t)
	f.next(t)
	<-s1.done
	gap := f.getTimes()[1].Sub(s1.ended)
	if gap < retry || gap > retry+300*time.Millisecond {
		t.Errorf("the second GET came %v after the end, want %v (+ a little)", gap, retry)
	}
}

// TestReconnectBackoff: failed reconnection GETs (500) are spaced by a
// growing backoff; the new stream's endpoint is progress, so the wait
// after the next drop is the first one again.
func TestReconnectBackoff(t *testing.T) {
	const first = 20 * time.Millisecond
	f := newFlaky(t)
	f.onGET = func(n int, _ http.Header) (int, bool) {
		if n >= 2 && n <= 4 {
			return http.StatusInternalServerError, false
		}
		return 0, false
	}
	var rec logs
	p := &reconnect.Policy{InitialDelay: first, Multiplier: 2, MaxDelay: time.Second, Jitter: -1, MaxAttempts: 5}
	tr, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: p, Logger: slog.New(&rec)}})
	s1 := f.next(t)
	close(s1.end)
	fd.lost(t)
	s5 := f.next(t)
	<-s1.done
	times := f.getTimes()
	if len(times) != 5 {
		t.Fatalf("%d GETs, want 5", len(times))
	}
	const slack = 150 * time.Millisecond
	prev, want := s1.ended, first
	for i, at := range times[1:] {
		gap := at.Sub(prev)
		if gap < want || gap > want+slack {
			t.Errorf("GET %d came %v after the previous one, want %v", i+2, gap, want)
		}
		prev, want = at, 2*want
	}
	send(t, tr, initialize(1))
	if got := describe(fd.msg(t)); !strings.Contains(got, `"session":"s5"`) {
		t.Errorf("initialize answered with %s", got)
	}
	if n := len(rec.Messages(slog.LevelInfo)); n != 5 {
		t.Errorf("%d info records, want 4 attempts and the reconnection", n)
	}

	close(s5.end)
	fd.lost(t)
	f.next(t)
	<-s5.done
	if gap := f.getTimes()[5].Sub(s5.ended); gap < first || gap > first+slack {
		t.Errorf("after progress the wait was %v, want %v again", gap, first)
	}
}

// TestReconnectGivesUp: after MaxAttempts failed GETs the transport is
// over: Recv reports that reconnection was exhausted, and so does an
// initialize that was waiting, and every later Send.
func TestReconnectGivesUp(t *testing.T) {
	f := newFlaky(t)
	f.onGET = func(n int, _ http.Header) (int, bool) {
		if n > 1 {
			return http.StatusBadGateway, false
		}
		return 0, false
	}
	p := fast()
	p.MaxAttempts = 3
	tr, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: p}})
	close(f.next(t).end)
	fd.lost(t)
	sent := make(chan error, 1)
	go func() { sent <- sendErr(tr, initialize(1)) }()

	err := fd.terminal(t)
	var he *jsonrpc.HTTPError
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "exhausted after 3 attempts") ||
		!errors.As(err, &he) || he.StatusCode != http.StatusBadGateway {
		t.Errorf("Recv = %v, want exhaustion after 3 attempts, the last a 502", err)
	}
	if n := len(f.getTimes()); n != 4 {
		t.Errorf("%d GETs, want 1 + 3", n)
	}
	select {
	case err := <-sent:
		if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "exhausted") {
			t.Errorf("waiting initialize = %v, want the exhaustion", err)
		}
	case <-time.After(wait):
		t.Fatal("initialize still waiting after the transport gave up")
	}
	if err := sendErr(tr, request(2, "ping")); !errors.Is(err, ErrConnectionLost) || errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Errorf("Send after giving up = %v, want ErrConnectionLost", err)
	}
	if _, err := tr.Recv(); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("Recv again = %v", err)
	}
}

// TestReconnectRefused: a refusal that will not change ends the transport
// at the first reconnection attempt; a cross-origin endpoint too.
func TestReconnectRefused(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed, 0} {
		name := http.StatusText(status)
		if status == 0 {
			name = "cross-origin endpoint"
		}
		t.Run(name, func(t *testing.T) {
			f := newFlaky(t)
			f.onGET = func(n int, _ http.Header) (int, bool) {
				if n > 1 {
					return status, false
				}
				return 0, false
			}
			f.endpoint = func(n int) string {
				if n > 1 {
					return "http://elsewhere.test/message"
				}
				return "/message?sessionId=s1"
			}
			tr, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: fast()}})
			close(f.next(t).end)
			fd.lost(t)
			err := fd.terminal(t)
			if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "refused") {
				t.Errorf("Recv = %v, want a refusal wrapping ErrConnectionLost", err)
			}
			var he *jsonrpc.HTTPError
			var ce *CrossOriginError
			if status != 0 && (!errors.As(err, &he) || he.StatusCode != status) {
				t.Errorf("Recv = %v, want the %d", err, status)
			}
			if status == 0 && !errors.As(err, &ce) {
				t.Errorf("Recv = %v, want a *CrossOriginError", err)
			}
			streamDone(t, tr)
			if n := len(f.getTimes()); n != 2 {
				t.Errorf("%d GETs, want 2", n)
			}
		})
	}
}

// TestReconnectRetryAfter: a 429 on the reconnection GET is waited out as
// its Retry-After says; one over MaxRetryAfter ends the transport.
func TestReconnectRetryAfter(t *testing.T) {
	t.Run("waited", func(t *testing.T) {
		f := newFlaky(t)
		f.onGET = func(n int, h http.Header) (int, bool) {
			if n == 2 {
				h.Set("Retry-After", "1")
				return http.StatusTooManyRequests, false
			}
			return 0, false
		}
		tr, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: fast()}})
		close(f.next(t).end)
		fd.lost(t)
		f.next(t)
		times := f.getTimes()
		if gap := times[2].Sub(times[1]); gap < time.Second || gap > time.Second+300*time.Millisecond {
			t.Errorf("the GET after the 429 came %v later, want 1s", gap)
		}
		send(t, tr, initialize(1))
	})
	t.Run("over the cap", func(t *testing.T) {
		f := newFlaky(t)
		f.onGET = func(n int, h http.Header) (int, bool) {
			if n == 2 {
				h.Set("Retry-After", "3600")
				return http.StatusServiceUnavailable, false
			}
			return 0, false
		}
		p := fast()
		p.MaxRetryAfter = time.Minute
		_, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: p}})
		close(f.next(t).end)
		fd.lost(t)
		err := fd.terminal(t)
		if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "1h0m0s, more than the cap of 1m0s") {
			t.Errorf("Recv = %v, want the wait over the cap", err)
		}
	})
}

// TestNoReconnect: with reconnection off, the first drop ends the
// transport: no SessionLostError, no second GET.
func TestNoReconnect(t *testing.T) {
	f := newFlaky(t)
	tr, fd := dialFlaky(t, f, Options{NoReconnect: true, Common: httpopt.Common{Reconnect: fast()}})
	s1 := f.next(t)
	s1.events <- messageEvent(note("notifications/last"))
	fd.msg(t)
	close(s1.end)
	err := fd.terminal(t)
	if !errors.Is(err, ErrConnectionLost) || errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Errorf("Recv = %v, want ErrConnectionLost", err)
	}
	if err := sendErr(tr, initialize(1)); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("Send = %v, want ErrConnectionLost", err)
	}
	streamDone(t, tr)
	if n := len(f.getTimes()); n != 1 {
		t.Errorf("%d GETs, want 1", n)
	}
}

// TestCloseWhileReconnecting: Close ends a reconnection promptly, in its
// wait or in its GET; a waiting initialize and Recv report ErrClosed.
func TestCloseWhileReconnecting(t *testing.T) {
	for _, where := range []string{"wait", "GET"} {
		t.Run(where, func(t *testing.T) {
			f := newFlaky(t)
			p := fast()
			if where == "wait" {
				p.InitialDelay, p.MaxDelay, p.Budget = time.Hour, time.Hour, 2*time.Hour
			}
			f.onGET = func(n int, _ http.Header) (int, bool) { return 0, n > 1 }
			tr, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: p}})
			close(f.next(t).end)
			fd.lost(t)
			if where == "GET" {
				testkit.Eventually(t, wait, "the second GET", func() bool { return len(f.getTimes()) == 2 })
			}
			sent := make(chan error, 1)
			go func() { sent <- sendErr(tr, initialize(1)) }()
			testkit.BlockedIn(t, wait, "legacy.(*Transport).session") // the initialize waits for the stream

			start := time.Now()
			tr.Close()
			if d := time.Since(start); d > time.Second {
				t.Errorf("Close took %v", d)
			}
			if err := <-sent; !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("waiting initialize = %v, want ErrClosed", err)
			}
			if err := fd.terminal(t); !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Recv = %v, want ErrClosed", err)
			}
		})
	}
}

// A server that announces an endpoint and ends the stream at once, every
// time, after a first stream that asked for retry: 0, is not a reason to
// reconnect in a hot loop: a session that delivered nothing is no
// progress, so the waits grow and the policy's attempts run out (the
// transport made thousands of GETs a second, each queuing a lost session).
func TestReconnectUselessSessionsBackOff(t *testing.T) {
	f := newFlaky(t)
	f.prelude = func(n int) string {
		if n == 1 {
			return "retry: 0\n\n"
		}
		return ""
	}
	p := fast() // 5 attempts
	_, fd := dialFlaky(t, f, Options{Common: httpopt.Common{Reconnect: p}})
	stop, stopped := make(chan struct{}), make(chan struct{})
	defer func() { close(stop); <-stopped }()
	go func() { // every stream ends at once
		defer close(stopped)
		for {
			select {
			case s := <-f.streams:
				close(s.end)
			case <-stop:
				return
			}
		}
	}()
	for range p.MaxAttempts {
		fd.lost(t)
	}
	// The last lost session, then the end: its sessions ended at once.
	var err error
	for {
		it := fd.item(t)
		if e, ok := it.(error); ok && !errors.Is(e, jsonrpc.ErrSessionExpired) {
			err = e
			break
		}
	}
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "exhausted after 5 attempts") {
		t.Fatalf("Recv = %v, want the policy exhausted", err)
	}
	if n := len(f.getTimes()); n != 1+p.MaxAttempts {
		t.Errorf("%d GETs, want 1 + %d", n, p.MaxAttempts)
	}
}
