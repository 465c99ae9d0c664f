package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// The regression tests of issue 11: through expiring sessions, 429 and
// 503, a call that did not run is sent again until it runs, and is never
// sent on a session known to be dead.

// posted is one POST as the server received it: the methods of the
// requests it carried and the session id it named.
type posted struct {
	methods []string
	session string
}

// postLog records the POSTs a testservers HTTP server receives.
type postLog struct {
	mu    sync.Mutex
	posts []posted
}

// hook is an HTTPOptions.OnRequest that records r and puts its body back.
func (l *postLog) hook(r *http.Request) {
	if r.Method != http.MethodPost {
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var p posted
	p.session = r.Header.Get("Mcp-Session-Id")
	if msgs, err := jsonrpc.Decode(body); err == nil {
		for _, m := range msgs {
			if m.IsRequest() {
				p.methods = append(p.methods, m.Method)
			}
		}
	}
	l.mu.Lock()
	l.posts = append(l.posts, p)
	l.mu.Unlock()
}

// sessions returns the session id each POST of a request of method
// carried, in order.
func (l *postLog) sessions(method string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.posts {
		for _, m := range p.methods {
			if m == method {
				out = append(out, p.session)
			}
		}
	}
	return out
}

// expiryServer starts a Streamable HTTP test server that records POSTs.
func expiryServer(t *testing.T) (*testservers.HTTPServer, *postLog) {
	t.Helper()
	l := &postLog{}
	srv := testservers.StartStreamable(testservers.HTTPOptions{Priming: true, OnRequest: l.hook})
	t.Cleanup(srv.Close) // after the Conn's Close, which ends the session
	return srv, l
}

// dialExpiry dials srv, closing the Conn at the end of the test.
func dialExpiry(t *testing.T, srv *testservers.HTTPServer, opts ...Option) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, URL(srv.URL), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitServer waits until cond holds for srv's Stats.
func waitServer(t *testing.T, srv *testservers.HTTPServer, what string, cond func(testservers.Stats) bool) testservers.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := srv.Server().WaitStats(ctx, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v (stats %+v)", what, err, st)
	}
	return st
}

// callOnce calls the once tool for key and checks that it ran once.
func callOnce(ctx context.Context, c *Conn, key string) error {
	res, err := c.CallTool(ctx, "once", map[string]string{"key": key})
	if err != nil {
		return err
	}
	if !strings.Contains(res.Content[0].Text, "executed 1 time(s)") {
		return fmt.Errorf("once %s: %s", key, res.Content[0].Text)
	}
	return nil
}

// TestThrottledResendCarriesTheCurrentSession (cause 1): a tools/call
// waiting out a 429 while its session expires is not sent again with the
// dead session id. When the session has been replaced by the time it is
// sent again, it carries the new one; when the new one is not ready yet,
// the transport refuses it unsent and the Conn sends it once the new
// session is initialized. Either way it runs once, and the only request
// the server ever refused for the dead session is the one that found out.
func TestThrottledResendCarriesTheCurrentSession(t *testing.T) {
	tests := []struct {
		name string
		// slowInit holds the re-initialization past the tools/call's
		// wait: its initialize is answered 503 with Retry-After 1.
		slowInit bool
	}{
		{"the new session is ready when the wait ends", false},
		{"the new session is still being initialized when the wait ends", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, posts := expiryServer(t)
			// A 429 without Retry-After: the call waits InitialDelay. (A
			// 503 without one is not waited out for a tools/call: it may
			// come from a gateway after the server ran it.)
			c := dialExpiry(t, srv, WithReconnectPolicy(reconnect.Policy{InitialDelay: 500 * time.Millisecond, Jitter: -1, MaxAttempts: 3}))
			ctx := testCtx(t)
			srv.Inject(testservers.FaultRule{Fault: testservers.FaultTooManyRequests, Method: "tools/call", Count: 1})
			if tt.slowInit {
				srv.Inject(testservers.FaultRule{Fault: testservers.FaultUnavailable, Method: "initialize", RetryAfter: "1", Count: 1})
			}
			res := make(chan error, 1)
			go func() { res <- callOnce(ctx, c, "throttled") }()
			waitServer(t, srv, "the 503", func(st testservers.Stats) bool { return st.Rejected == 1 })

			// The session expires during the wait; a ping finds out.
			if n := srv.ExpireAll(); n != 1 {
				t.Fatalf("expired %d sessions", n)
			}
			pinged := make(chan error, 1)
			go func() { pinged <- c.Ping(ctx) }()
			if tt.slowInit {
				waitServer(t, srv, "the re-initialization's 503", func(st testservers.Stats) bool { return st.Rejected == 2 })
			}
			if err := <-pinged; err != nil {
				t.Fatalf("ping: %v", err)
			}
			if err := <-res; err != nil {
				t.Fatalf("the throttled call: %v", err)
			}

			sessions := posts.sessions("tools/call")
			if len(sessions) < 2 {
				t.Fatalf("tools/call POSTed with sessions %q: want the 503'd one, then another", sessions)
			}
			dead := sessions[0]
			for i, s := range sessions[1:] {
				if s == dead {
					t.Errorf("tools/call sent again (#%d) on the expired session", i+2)
				}
			}
			if pings := posts.sessions("ping"); len(pings) != 2 || pings[0] != dead || pings[1] == dead {
				t.Errorf("ping POSTed with sessions %q: want the expired one (refused), then the new one", pings)
			}
			st := srv.Server().Stats()
			if st.SessionsCreated != 2 || st.Executions != 1 {
				t.Errorf("%d sessions created, once ran %d time(s): want 2 and 1", st.SessionsCreated, st.Executions)
			}
		})
	}
}

// holdingHandler is a slog handler that holds the read loop inside its
// "session lost" record until a call has recorded its own refusal, to
// open the window between a session's loss and the start of its
// re-initialization.
type holdingHandler struct {
	held    chan struct{} // closed when the read loop is held
	refused chan struct{} // closed when the call logged its refusal
	once    [2]sync.Once
}

func (h *holdingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *holdingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *holdingHandler) WithGroup(string) slog.Handler            { return h }

func (h *holdingHandler) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "anymcp: session lost; re-initializing":
		h.once[0].Do(func() {
			close(h.held)
			select {
			case <-h.refused:
			case <-time.After(10 * time.Second):
			}
		})
	case "anymcp: session expired; re-initializing, then sending again":
		h.once[1].Do(func() { close(h.refused) })
	}
	return nil
}

// TestRefusedWhileRecoveryIsDueCostsNothing (cause 2): a call made after
// the session was found lost, before the re-initialization began, is
// refused by the transport without being sent; that refusal must not
// spend the call's budget. Here the call's own sessions then refuse it
// as many times as the policy allows (MaxAttempts 3): it must still go
// through on the next.
func TestRefusedWhileRecoveryIsDueCostsNothing(t *testing.T) {
	srv, posts := expiryServer(t)
	h := &holdingHandler{held: make(chan struct{}), refused: make(chan struct{})}
	c := dialExpiry(t, srv, WithLogger(slog.New(h)),
		WithReconnectPolicy(reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxAttempts: 3}),
		OnToolsChanged(func() {})) // a listener: the GET stream is open, and notices the loss
	ctx := testCtx(t)

	// The next three sessions each expire at the ping they get (letting
	// nothing else fail).
	srv.Inject(testservers.FaultRule{Fault: testservers.FaultExpireSession, Method: "ping", Count: 3, LetRun: true})
	// The session expires: the GET stream finds out, and the read loop is
	// held before it starts the re-initialization.
	srv.ExpireAll()
	select {
	case <-h.held:
	case <-ctx.Done():
		t.Fatal("the loss of the session was never noticed")
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if pings := posts.sessions("ping"); len(pings) != 4 {
		t.Errorf("ping POSTed %d times, want 4: on the three sessions that refused it, then on the one that answered (never on the lost one)", len(pings))
	}
	st := srv.Server().Stats()
	if st.SessionsCreated != 5 || st.SessionsExpired != 4 {
		t.Errorf("sessions created %d, expired %d: want 5 and 4 (one initialize per expiry)", st.SessionsCreated, st.SessionsExpired)
	}
}

// TestExpiryResendsPerSession (cause 3): a request refused for an expired
// session is sent again on each new session, counting one attempt per
// session against the reconnect policy; it gives up only when those are
// spent, or when several new sessions in a row answered nobody; many
// callers refused together share one initialize per expiry and all go
// through.
func TestExpiryResendsPerSession(t *testing.T) {
	tests := []struct {
		name     string
		rule     testservers.FaultRule // expiries of tools/call
		attempts int                   // the policy's MaxAttempts
		callers  int
		ok       bool
		// sessions is how many the server created in all; 0 for one per
		// expiry, plus the first (several callers may draw the rule's
		// expiries on one session).
		sessions int
	}{
		{name: "refused by four sessions in a row, then served",
			rule:     testservers.FaultRule{Fault: testservers.FaultExpireSession, Method: "tools/call", Count: 4, LetRun: true},
			attempts: 10, callers: 1, ok: true, sessions: 5},
		{name: "refused by more sessions than the policy allows",
			rule:     testservers.FaultRule{Fault: testservers.FaultExpireSession, Method: "tools/call", Count: 3, LetRun: true},
			attempts: 2, callers: 1, ok: false, sessions: 3},
		{name: "new sessions that answer nobody",
			rule:     testservers.FaultRule{Fault: testservers.FaultExpireSession, Method: "tools/call", LetRun: true},
			attempts: 100, callers: 1, ok: false, sessions: 1 + maxBarrenSessions},
		{name: "eight callers refused together, session after session",
			rule:     testservers.FaultRule{Fault: testservers.FaultExpireSession, Method: "tools/call", Count: 4, LetRun: true},
			attempts: 10, callers: 8, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := expiryServer(t)
			reinits := new(atomic.Int32)
			c := dialExpiry(t, srv, OnReinitialized(func(Info) { reinits.Add(1) }),
				WithReconnectPolicy(reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxAttempts: tt.attempts}))
			ctx := testCtx(t)
			srv.Inject(tt.rule)
			errs := make([]error, tt.callers)
			var wg sync.WaitGroup
			for i := range tt.callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = callOnce(ctx, c, fmt.Sprint("k", i))
				}()
			}
			wg.Wait()
			c.Close() // runs the OnReinitialized callbacks still queued
			st := srv.Server().Stats()
			for i, err := range errs {
				switch {
				case tt.ok && err != nil:
					t.Errorf("caller %d: %v", i, err)
				case !tt.ok && (!errors.Is(err, jsonrpc.ErrSessionExpired) || errors.Is(err, jsonrpc.ErrOutcomeUnknown)):
					t.Errorf("caller %d: %v, want a refusal for an expired session (it did not run)", i, err)
				}
			}
			want := tt.callers
			if !tt.ok {
				want = 0
			}
			if st.Executions != want || st.Duplicates != 0 {
				t.Errorf("once ran %d time(s) (%d duplicates), want %d", st.Executions, st.Duplicates, want)
			}
			if want := tt.sessions; (want > 0 && st.SessionsCreated != want) || (want == 0 && st.SessionsCreated != st.SessionsExpired+1) {
				t.Errorf("%d sessions created for %d expiries, want %d", st.SessionsCreated, st.SessionsExpired, want)
			}
			if tt.ok && int(reinits.Load()) != st.SessionsExpired {
				t.Errorf("%d re-initializations for %d expiries, want one each", reinits.Load(), st.SessionsExpired)
			}
		})
	}
}

// TestCutStreamResumesAtOnce (cause 4): an answer stream cut without a
// retry: field is resumed at once, not after the policy's first delay
// (an hour here: the call would never end); a retry: from the server is
// still waited out, exactly.
func TestCutStreamResumesAtOnce(t *testing.T) {
	tests := []struct {
		name  string
		retry time.Duration // the server's retry:, 0 for none
	}{
		{"no retry: at once", 0},
		{"retry: 300 ms, waited", 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := expiryServer(t)
			c := dialExpiry(t, srv, WithReconnectPolicy(reconnect.Policy{InitialDelay: time.Hour, Jitter: -1, MaxAttempts: 3}))
			ctx := testCtx(t)
			srv.Inject(testservers.FaultRule{Fault: testservers.FaultDropStream, Method: "tools/call", Count: 1, Retry: tt.retry})
			start := time.Now()
			if err := callOnce(ctx, c, "cut"); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			st := srv.Server().Stats()
			if st.Resumed != 1 || st.Faults[string(testservers.FaultDropStream)] != 1 {
				t.Errorf("resumed %d, faults %v: want the stream cut once and resumed once", st.Resumed, st.Faults)
			}
			if took < tt.retry {
				t.Errorf("the call took %v: the server's retry: %v was not waited out", took, tt.retry)
			}
		})
	}
}
