package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/reconnect"
)

// serveScripted answers requests until the test ends: initialize (counted),
// tools/list (one read-only tool, one not), and everything else with an
// echo of the method. notifications are swallowed.
func serveScripted(t *testing.T, p *scriptedPeer, inits *atomic.Int32, seen chan<- string) {
	t.Helper()
	go func() {
		for {
			var m *jsonrpc.Message
			select {
			case m = <-p.toServer:
			case <-p.closed:
				return
			}
			if seen != nil && m.Method != "" {
				select {
				case seen <- m.Method:
				default:
				}
			}
			switch {
			case m.Method == "initialize":
				inits.Add(1)
				p.reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)
			case m.Method == "tools/list":
				p.reply(m.ID, `{"tools":[{"name":"look","inputSchema":{},"annotations":{"readOnlyHint":true}},{"name":"pay","inputSchema":{},"annotations":{"readOnlyHint":false}}]}`)
			case m.IsRequest():
				p.reply(m.ID, fmt.Sprintf(`{"content":[{"type":"text","text":%q}]}`, m.Method))
			}
		}
	}()
}

func openServed(t *testing.T, opts ...Option) (*Conn, *scriptedPeer, *atomic.Int32, chan string) {
	t.Helper()
	p := newScriptedPeer(t)
	inits := new(atomic.Int32)
	seen := make(chan string, 256)
	serveScripted(t, p, inits, seen)
	c, err := Open(context.Background(), p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, p, inits, seen
}

func TestExpiredSessionReinitializesOnceAndResends(t *testing.T) {
	reinits := make(chan Info, 4)
	c, p, inits, seen := openServed(t, OnReinitialized(func(i Info) { reinits <- i }))
	ctx := context.Background()
	if err := c.Subscribe(ctx, "test://r"); err != nil {
		t.Fatal(err)
	}
	for len(seen) > 0 {
		<-seen
	}
	p.expire()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Ping(ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a call refused for an expired session must be re-sent and answered: %v", err)
	}
	if n := inits.Load(); n != 2 {
		t.Errorf("initialize sent %d times in all, want 2 (one re-initialize for every caller)", n)
	}
	select {
	case <-reinits:
	case <-time.After(5 * time.Second):
		t.Fatal("OnReinitialized not called")
	}
	resubscribed := false
	for len(seen) > 0 {
		if <-seen == "resources/subscribe" {
			resubscribed = true
		}
	}
	if !resubscribed {
		t.Error("the subscription was not restored")
	}
	if c.State() != StateReady {
		t.Errorf("state %v", c.State())
	}
}

func TestSessionLostFailsInFlightAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := openScripted(t) // the handshake over: nothing else reads the peer
		res := make(chan error, 1)
		go func() { _, err := c.CallTool(context.Background(), "pay", nil); res <- err }()
		p.expect("tools/call")
		p.loseSession()
		err := <-res
		var le *LostError
		if !errors.As(err, &le) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Fatalf("in-flight call: want LostError, got %v", err)
		}
		// The Conn re-initializes by itself; a call made meanwhile waits.
		m := p.expect("initialize")
		later := make(chan error, 1)
		go func() { later <- c.Ping(context.Background()) }()
		select {
		case m2 := <-p.toServer:
			t.Fatalf("%s went out before the new session was initialized", m2.Method)
		case <-time.After(50 * time.Millisecond):
		}
		p.reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"2"}}`)
		p.expect("notifications/initialized")
		ping := p.expect("ping")
		p.reply(ping.ID, `{}`)
		if err := <-later; err != nil {
			t.Fatal(err)
		}
		if c.Info().ServerInfo.Version != "2" {
			t.Errorf("info not updated: %+v", c.Info().ServerInfo)
		}
	})
}

func TestReplayOnlyWhatIsSafe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := openScripted(t, WithReplay()) // the handshake over: nothing else reads the peer
		ctx := context.Background()
		go func() {
			m := p.expect("tools/list")
			p.reply(m.ID, `{"tools":[{"name":"look","inputSchema":{},"annotations":{"readOnlyHint":true}},{"name":"pay","inputSchema":{}}]}`)
		}()
		if _, err := c.AllTools(ctx); err != nil {
			t.Fatal(err)
		}

		// A read-only tool whose answer was lost is replayed after recovery.
		res := make(chan error, 1)
		go func() { _, err := c.CallTool(ctx, "look", nil); res <- err }()
		p.expect("tools/call")
		p.loseSession()
		m := p.expect("initialize")
		p.reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)
		p.expect("notifications/initialized")
		again := p.expect("tools/call")
		p.reply(again.ID, `{"content":[]}`)
		if err := <-res; err != nil {
			t.Fatalf("a read-only call must be replayed: %v", err)
		}

		// A tool that is not marked safe is not.
		go func() { _, err := c.CallTool(ctx, "pay", nil); res <- err }()
		p.expect("tools/call")
		p.loseSession()
		if err := <-res; !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Fatalf("a non-idempotent call must fail as outcome unknown, got %v", err)
		}
		m = p.expect("initialize")
		p.reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)
		p.expect("notifications/initialized")
		select {
		case m := <-p.toServer:
			t.Fatalf("unexpected %s after recovery: the call was replayed", m.Method)
		case <-time.After(50 * time.Millisecond):
		}
	})
}

func TestNoReplayWithoutOption(t *testing.T) {
	c, p := openScripted(t)
	res := make(chan error, 1)
	go func() { _, err := c.AllTools(context.Background()); res <- err }()
	p.expect("tools/list")
	p.loseSession()
	if err := <-res; !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("want outcome unknown, got %v", err)
	}
}

func TestStatesAndWatch(t *testing.T) {
	var mu sync.Mutex
	var changes []string
	c, p, _, _ := openServed(t, OnStateChange(func(from, to State) {
		mu.Lock()
		changes = append(changes, from.String()+"→"+to.String())
		mu.Unlock()
	}))
	if c.State() != StateReady {
		t.Fatalf("state after Open: %v", c.State())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if c.WaitForStateChange(ctx, StateReady) {
		t.Error("no change happened, yet WaitForStateChange said one did")
	}
	cancel()
	p.expire()
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if c.State() != StateClosed || !c.WaitForStateChange(context.Background(), StateReady) {
		t.Errorf("state after Close: %v", c.State())
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"connecting→ready", "ready→reconnecting", "reconnecting→ready", "ready→closed"}
	if fmt.Sprint(changes) != fmt.Sprint(want) {
		t.Errorf("changes %v, want %v", changes, want)
	}
}

func TestCloseFromHandlers(t *testing.T) {
	closed := make(chan error, 2)
	var c *Conn
	c, p := openScripted(t, OnToolsChanged(func() { closed <- c.Close() }))
	p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close from a notification handler hung")
	}
	<-c.Done()

	var c2 *Conn
	c2, p2 := openScripted(t, WithSampling(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		closed <- c2.Close()
		return nil, errors.New("closing")
	}))
	p2.send(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close from a server request's handler hung")
	}
	<-c2.Done()
}

func TestOutcomeOfAbandonedCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := openScripted(t, WithDefaultTimeout(50*time.Millisecond))
		// Sent, then timed out: it may have run.
		_, err := c.CallTool(context.Background(), "pay", nil)
		p.expect("tools/call")
		var te *TimeoutError
		if !errors.As(err, &te) || !te.MayHaveRun || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Fatalf("a sent call that timed out: %v", err)
		}
		p.expect("notifications/cancelled")
		// Cancelled by the caller after sending: it may have run.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err = c.CallTool(ctx, "pay", nil, WithTimeout(time.Second))
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Fatalf("a sent call whose context ended: %v", err)
		}
		// Never sent: refused by the transport.
		if mayHaveRun(fmt.Errorf("x: %w", jsonrpc.ErrSessionExpired)) || !mayHaveRun(errors.New("network")) {
			t.Error("mayHaveRun misreads Send errors")
		}
	})
}

func TestRecoveryRetriesWhenTheNewSessionExpiresAtOnce(t *testing.T) {
	reinits := make(chan Info, 2)
	c, p := openScripted(t, OnReinitialized(func(i Info) { reinits <- i }),
		WithReconnectPolicy(reconnect.Policy{InitialDelay: time.Millisecond}))
	go func() {
		m := p.expect("resources/subscribe")
		p.reply(m.ID, `{}`)
	}()
	if err := c.Subscribe(context.Background(), "test://r"); err != nil {
		t.Fatal(err)
	}
	p.expire()
	p.mu.Lock()
	p.expireOn = "notifications/initialized" // the new session is gone before the subscription is restored
	p.mu.Unlock()
	res := make(chan error, 1)
	go func() { res <- c.Ping(context.Background()) }()
	m := p.expect("initialize")
	p.reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)
	p.expect("notifications/initialized")
	m = p.expect("initialize")
	p.reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"2"}}`)
	p.expect("notifications/initialized")
	m = p.expect("resources/subscribe")
	p.reply(m.ID, `{}`)
	m = p.expect("ping")
	p.reply(m.ID, `{}`)
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the recovery waited on itself")
	}
	if i := <-reinits; i.ServerInfo.Version != "2" {
		t.Errorf("info %+v", i.ServerInfo)
	}
}

// TestListChangedForgetsSafety: after notifications/tools/list_changed a
// tool the old listing called read-only is no longer replayed when its
// answer is lost (it may have changed), until a new listing says it is
// safe again.
func TestListChangedForgetsSafety(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := openScripted(t, WithReplay())
		ctx := context.Background()
		list := func() {
			t.Helper()
			go func() {
				m := p.expect("tools/list")
				p.reply(m.ID, `{"tools":[{"name":"look","inputSchema":{},"annotations":{"readOnlyHint":true}}]}`)
			}()
			if _, err := c.AllTools(ctx); err != nil {
				t.Fatal(err)
			}
		}
		safe := func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.tools.safe("look")
		}
		reinit := func() {
			t.Helper()
			m := p.expect("initialize")
			p.reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)
			p.expect("notifications/initialized")
		}
		list()
		if !safe() {
			t.Fatal("the listed read-only tool is not noted as safe")
		}
		p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		waitFor(t, "the list change to be taken in", func() bool { return !safe() })

		res := make(chan error, 1)
		go func() { _, err := c.CallTool(ctx, "look", nil); res <- err }()
		p.expect("tools/call")
		p.loseSession()
		if err := <-res; !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Fatalf("after list_changed, a lost call to the tool was not failed as outcome unknown: %v", err)
		}
		reinit()

		list() // the new listing says it is read-only again: replayed
		go func() { _, err := c.CallTool(ctx, "look", nil); res <- err }()
		p.expect("tools/call")
		p.loseSession()
		reinit()
		again := p.expect("tools/call")
		p.reply(again.ID, `{"content":[]}`)
		if err := <-res; err != nil {
			t.Fatalf("after a new listing, the read-only call was not replayed: %v", err)
		}
	})
}

// TestListChangedDuringListing: a tools/list answered after a
// notifications/tools/list_changed that came while it was on its way may be
// stale: it is not cached, and its tools are not noted as safe to repeat.
func TestListChangedDuringListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := openScripted(t, WithReplay())
		ctx := context.Background()
		gen := c.toolGen()
		res := make(chan error, 1)
		go func() { _, err := c.ListTools(ctx, ""); res <- err }()
		m := p.expect("tools/list")
		p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		waitFor(t, "the list change to be taken in", func() bool { return c.toolGen() != gen })
		p.reply(m.ID, `{"tools":[{"name":"look","inputSchema":{},"annotations":{"readOnlyHint":true}}],"ttlMs":3600000}`)
		if err := <-res; err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		safe := c.tools.safe("look")
		c.mu.Unlock()
		if safe {
			t.Error("a listing answered after list_changed noted its tool as safe to repeat")
		}
		// Not cached: the next listing is asked for, and noted this time.
		go func() { _, err := c.ListTools(ctx, ""); res <- err }()
		m = p.expect("tools/list")
		p.reply(m.ID, `{"tools":[{"name":"look","inputSchema":{},"annotations":{"readOnlyHint":true}}],"ttlMs":3600000}`)
		if err := <-res; err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		safe = c.tools.safe("look")
		c.mu.Unlock()
		if !safe {
			t.Error("a fresh listing did not note its read-only tool as safe")
		}
	})
}

// TestBarrenSessionsBackOff: a server that loses each session right after
// its re-initialization, before any request was answered on it, is
// re-initialized after the policy's growing waits, not in a hot loop
// (115,506 rounds in 2 s before); a session that answers a request starts
// the count over.
func TestBarrenSessionsBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		policy := reconnect.Policy{InitialDelay: 20 * time.Millisecond, Multiplier: 2, MaxDelay: time.Second, Jitter: -1}
		c, p := openScripted(t, WithReconnectPolicy(policy))
		recovered := func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.recovery == nil
		}
		lose := func(round int, barren int) {
			t.Helper()
			lost := time.Now()
			p.loseSession()
			m := p.expect("initialize")
			if want := barrenWait(policy, barren); barren > 0 && time.Since(lost) < want {
				t.Errorf("round %d: re-initialized after %v, want at least %v", round, time.Since(lost), want)
			}
			p.reply(m.ID, `{"protocolVersion":"`+p.version+`","capabilities":{},"serverInfo":{"name":"flap","version":"1"}}`)
			p.expect("notifications/initialized")
			waitFor(t, "the recovery to finish", recovered)
		}
		for round := range 4 {
			lose(round, round) // 0, then 20, 40 and 80 ms
		}
		if want := barrenWait(policy, 3); want != 80*time.Millisecond {
			t.Fatalf("barrenWait(3) = %v, want 80ms", want)
		}
		go func() { p.reply(p.expect("ping").ID, `{}`) }()
		if err := c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := c.barren.Load(); n != 0 {
			t.Fatalf("barren %d after an answered request, want 0", n)
		}
	})
}

// TestIdleSessionsAreNotBarren: a session that lasted usefulSession is no
// barren one though it answered no request (a Conn that only listens, to a
// server that loses a session now and then): the next loss re-initializes
// at once, where each such session made the wait before the next longer,
// up to the policy's MaxDelay.
func TestIdleSessionsAreNotBarren(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		policy := reconnect.Policy{InitialDelay: 20 * time.Millisecond, Multiplier: 2, MaxDelay: 3 * time.Second, Jitter: -1}
		c, p := openScripted(t, WithReconnectPolicy(policy))
		c.usefulSession = 50 * time.Millisecond
		recovered := func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.recovery == nil
		}
		for round := range 4 {
			time.Sleep(2 * c.usefulSession) // the session lasts
			p.loseSession()
			m := p.expect("initialize")
			p.reply(m.ID, `{"protocolVersion":"`+p.version+`","capabilities":{},"serverInfo":{"name":"idle","version":"1"}}`)
			p.expect("notifications/initialized")
			waitFor(t, "the recovery to finish", recovered)
			if n := c.barren.Load(); n != 1 {
				t.Errorf("round %d: %d barren sessions, want 1 (the new one): the ones before lasted", round, n)
			}
		}
	})
}
