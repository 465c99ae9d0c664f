package fleet

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// New dials nothing, checks names and patterns.
func TestNewChecks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		servers []Server
	}{
		{"empty name", []Server{{Name: ""}}},
		{"same name", []Server{{Name: "a"}, {Name: "a"}}},
		{"bad pattern", []Server{{Name: "a", Allow: []string{"["}}}},
	} {
		if f, err := New(tc.servers); err == nil {
			f.Close()
			t.Errorf("%s: New accepted %+v", tc.name, tc.servers)
		}
	}
}

// A server that failed is dialled again only once its backoff ran out,
// not on every use.
func TestRetryBackoff(t *testing.T) {
	for _, tc := range []struct {
		name     string
		min, max time.Duration
		redial   bool
	}{
		{"within the backoff", time.Hour, time.Hour, false},
		{"after the backoff", time.Nanosecond, time.Nanosecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 500})
			defer srv.Close()
			f, err := New([]Server{{Name: "s", Target: client.URL(srv.URL)}}, WithRetryPolicy(reconnect.Policy{InitialDelay: tc.min, MaxDelay: tc.max}))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cat, err := f.Tools(ctxT(t))
			if err != nil || cat.Errors["s"] == nil || cat.Errors["s"].Kind != KindRefused {
				t.Fatalf("first listing: %v %v", err, cat.Errors)
			}
			first := srv.Hits()["POST /mcp"]
			again, err := f.Tools(ctxT(t))
			if err != nil || again.Errors["s"] == nil {
				t.Fatalf("second listing: %v %v", err, again.Errors)
			}
			if redialled := srv.Hits()["POST /mcp"] > first; redialled != tc.redial {
				t.Errorf("dialled again: %v, want %v (POSTs %d then %d)", redialled, tc.redial, first, srv.Hits()["POST /mcp"])
			}
			if st := f.Status()[0]; st.State != StateFailed || st.Err == nil || st.Err.Kind != KindRefused {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// WithEager dials every server at once, but never more than WithMaxDials
// of them at a time while they are in their start-up grace (here longer
// than the test).
func TestEagerBoundedDials(t *testing.T) {
	const servers, bound = 5, 2
	arrivals := make(chan string, 100)
	release := map[string]chan struct{}{}
	var held, most atomic.Int32 // dials held by the servers now, and at most
	var cfg []Server
	for i := range servers {
		name := string(rune('a' + i))
		rel := make(chan struct{})
		release[name] = rel
		var once sync.Once
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // so that the server notices a client that left
			first := false
			once.Do(func() { first = true })
			if first { // the dial's first request waits for the test
				n := held.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				arrivals <- name
				select {
				case <-rel:
				case <-r.Context().Done():
				}
				held.Add(-1)
				if r.Context().Err() != nil {
					return
				}
			}
			http.Error(w, "down", http.StatusInternalServerError)
		}))
		defer srv.Close()
		cfg = append(cfg, Server{Name: name, Target: client.URL(srv.URL + "/mcp")})
	}
	rec := newRecorder()
	f, err := New(cfg, WithEager(), WithMaxDials(bound), WithStartupGrace(time.Hour), OnStateChange(rec.record))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := ctxT(t)
	var blocked []string
	for arrived := 0; arrived < servers; {
		select {
		case name := <-arrivals:
			arrived++
			blocked = append(blocked, name)
			if len(blocked) > bound {
				t.Fatalf("%d servers dialled at once (%v), want at most %d", len(blocked), blocked, bound)
			}
			if len(blocked) < bound && arrived < servers {
				continue // let the dials fill the bound before releasing any
			}
			// Release the oldest: its dial fails, which frees a slot.
			s := blocked[0]
			blocked = blocked[1:]
			close(release[s])
			rec.wait(ctx, t, 0, is(s, StateFailed))
		case <-ctx.Done():
			t.Fatalf("dials stalled; states %v", f.Status())
		}
	}
	for _, s := range blocked {
		close(release[s])
		rec.wait(ctx, t, 0, is(s, StateFailed))
	}
	for _, s := range f.Status() {
		if s.State != StateFailed || s.Err.Kind != KindRefused {
			t.Errorf("%s: %s %v", s.Server, s.State, s.Err)
		}
	}
	if m := most.Load(); m != bound {
		t.Errorf("the servers held %d dials at once, want %d", m, bound)
	}
}

// A stdio server unused for the idle time is stopped (its process gone),
// and started again by the next call; a listing meanwhile does not start
// it.
func TestIdleStop(t *testing.T) {
	target, pidLog := stdioServer(t, testservers.Options{})
	rec := newRecorder()
	f, err := New([]Server{{Name: "s", Target: target}}, WithIdleStop(20*time.Millisecond), OnStateChange(rec.record))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := ctxT(t)
	cat := mustTools(t, f)
	echo, _ := toolNamed(cat, "s", "echo")
	for round := 1; round <= 2; round++ {
		from := len(rec.all())
		res, err := f.CallTool(ctx, echo.Name, map[string]any{"text": "hi"})
		if err != nil || text(t, res) != "hi" {
			t.Fatalf("round %d: %v %v", round, res, err)
		}
		rec.wait(ctx, t, from, is("s", StateStopped))
		checkGone(t, pidLog)
		if n := len(pids(t, pidLog)); n != round {
			t.Fatalf("round %d: %d processes started", round, n)
		}
		mustTools(t, f) // from the cache: starts nothing
		if st := f.Status()[0].State; st != StateStopped {
			t.Errorf("listing a stopped server made it %s", st)
		}
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	checkGone(t, pidLog)
}

// A stdio server that died is started again on next use, and listed
// again: its new process may offer other tools.
func TestRestartedServerListedAgain(t *testing.T) {
	target, pidLog := stdioServer(t, testservers.Options{Stdio: testservers.StdioFaults{CrashOnCall: 1}})
	rec := newRecorder()
	f, err := New([]Server{{Name: "s", Target: target}}, OnStateChange(rec.record))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := ctxT(t)
	cat := mustTools(t, f)
	echo, _ := toolNamed(cat, "s", "echo")
	if _, err := f.CallTool(ctx, echo.Name, map[string]any{"text": "x"}); !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("the call the server died in: %v, want the Conn's outcome-unknown error", err)
	}
	i := rec.wait(ctx, t, 0, is("s", StateFailed))
	if st := rec.all()[i]; st.Err == nil || st.Err.Kind != KindClosed {
		t.Errorf("a dead server's status: %+v", st)
	}
	again := mustTools(t, f) // dials again at once: the first retry waits for no backoff
	if n := len(pids(t, pidLog)); n != 2 {
		t.Fatalf("%d processes, want the server started again", n)
	}
	if !slices.EqualFunc(cat.Tools, again.Tools, func(a, b Tool) bool { return a.Name == b.Name }) {
		t.Error("the names changed across a restart")
	}
	if err := f.Close(); err != nil {
		t.Log(err) // the crashed process's exit is no error of the fleet's
	}
	checkGone(t, pidLog)
}

// States move NotConnected → Connecting → Ready → Closed, seen in order by
// OnStateChange; a disabled server stays Disabled and is never dialled.
func TestStatesObserved(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	rec := newRecorder()
	f, err := New([]Server{
		{Name: "on", Target: client.URL(srv.URL)},
		{Name: "off", Target: client.URL(srv.URL), Disabled: true},
	}, OnStateChange(rec.record))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Conn(ctxT(t), "on"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Conn(ctxT(t), "off"); err == nil {
		t.Error("a disabled server's Conn")
	}
	f.Close()
	var got []State
	for _, s := range rec.all() {
		if s.Server == "on" {
			got = append(got, s.State)
		}
		if s.Server == "off" && s.State != StateClosed {
			t.Errorf("the disabled server moved to %s", s.State)
		}
	}
	if want := []State{StateConnecting, StateReady, StateClosed}; !slices.Equal(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
	if srv.Server().Stats().Initializations != 1 {
		t.Errorf("%d initializations, want 1", srv.Server().Stats().Initializations)
	}
	_ = context.Background
}

// The same configuration gives the same names whichever servers answer:
// a fleet where a server is down names the others' tools as one where
// it is up, as another run would.
func TestNamesIndependentOfWhoAnswered(t *testing.T) {
	a := testservers.StartStreamable(testservers.HTTPOptions{})
	defer a.Close()
	b := testservers.StartStreamable(testservers.HTTPOptions{})
	defer b.Close()
	names := func(bURL string) []string {
		// "x y" and "x_y" clean to one prefix: both names hash.
		f, err := New([]Server{{Name: "x y", Target: client.URL(a.URL)}, {Name: "x_y", Target: client.URL(bURL)}})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cat, err := f.Tools(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range cat.Tools {
			if tl.Server == "x y" {
				out = append(out, tl.Name)
			}
		}
		return out
	}
	up, down := names(b.URL), names(deadURL(t))
	if len(up) == 0 || !slices.Equal(up, down) {
		t.Errorf("names with the other server up %v, down %v", up, down)
	}
}

// A stdio server started again after an idle stop is listed again: its
// new process may offer other tools. (The idle time is long enough for
// the listing after the call to come first: a second on this machine is
// three orders of magnitude more than a listing takes.)
func TestIdleRestartListedAgain(t *testing.T) {
	target, pidLog := stdioServer(t, testservers.Options{})
	var lists atomic.Int32
	hook := client.WithMessageHook(func(sent bool, m *jsonrpc.Message) {
		if sent && m.Method == "tools/list" {
			lists.Add(1)
		}
	})
	rec := newRecorder()
	f, err := New([]Server{{Name: "s", Target: target, Options: []client.Option{hook}}}, WithIdleStop(time.Second), OnStateChange(rec.record))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := ctxT(t)
	cat := mustTools(t, f)
	rec.wait(ctx, t, 0, is("s", StateStopped))
	from := len(rec.all())
	echo, _ := toolNamed(cat, "s", "echo")
	if _, err := f.CallTool(ctx, echo.Name, map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	mustTools(t, f)
	if n := lists.Load(); n != 2 {
		t.Errorf("%d listings, want the restarted server listed again; states since the restart: %v", n, rec.all()[from:])
	}
	f.Close()
	checkGone(t, pidLog)
}
