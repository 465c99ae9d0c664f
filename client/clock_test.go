package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anymcp/anymcp/negotiate"
)

// testClock is a clock a test runs inside a synctest bubble: time moves
// when the test sleeps, and the clock's real timer fires on the bubble's
// fake time. ended records each call's cause under its key.
type testClock struct {
	clock
	busyNow atomic.Bool // the server waits on the host

	mu    sync.Mutex
	ended map[*timeouts]*TimeoutError
}

func newTestClock() *testClock {
	tc := &testClock{ended: map[*timeouts]*TimeoutError{}}
	tc.busy = tc.busyNow.Load
	return tc
}

// start registers a call whose cancel records its cause under its key.
func (tc *testClock) start(t *testing.T, method string, idle, total time.Duration) *timeouts {
	t.Helper()
	var key *timeouts
	key = tc.clock.start(method, idle, total, func(cause error) {
		var te *TimeoutError
		if !errors.As(cause, &te) {
			t.Errorf("%s ended by %v, not a *TimeoutError", method, cause)
		}
		tc.mu.Lock()
		tc.ended[key] = te
		tc.mu.Unlock()
	})
	return key
}

// at sleeps until base+d and waits until the timer, if it fired, is done.
func (tc *testClock) at(base time.Time, d time.Duration) {
	time.Sleep(time.Until(base.Add(d)))
	synctest.Wait()
}

// endedOf returns the cause that ended k's call, and how many calls ended.
func (tc *testClock) endedOf(k *timeouts) (*TimeoutError, int) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.ended[k], len(tc.ended)
}

// armed returns when the timer fires (zero: stopped) and the timer.
func (tc *testClock) armed() (time.Time, *time.Timer) {
	tc.clock.mu.Lock()
	defer tc.clock.mu.Unlock()
	return tc.clock.at, tc.timer
}

// The Conn's one timer ends each call when its own timeout runs out: the
// request timeout (restarted by touch, paused between requests, extended
// while the server waits on the host) and the total time (which nothing
// extends), always armed for the earliest moment any call is due.
func TestClockEndsCallsAtTheirTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClock()
		defer tc.close()
		base := time.Now()
		wantArmed := func(when string, d time.Duration) {
			t.Helper()
			if at, _ := tc.armed(); !at.Equal(base.Add(d)) {
				t.Fatalf("%s: armed for +%v, want +%v", when, at.Sub(base), d)
			}
		}
		a := tc.start(t, "a", 10*time.Second, 0)
		b := tc.start(t, "b", 20*time.Second, 0)
		c := tc.start(t, "c", 0, 15*time.Second)
		d := tc.start(t, "d", 5*time.Second, 0)
		if none := tc.clock.start("untimed", 0, 0, nil); none != nil {
			t.Errorf("a call without timeouts got %+v", none)
		}
		tc.waiting(a, true)
		tc.waiting(b, true)
		tc.waiting(d, true)
		tc.waiting(d, false) // d's request was answered: its timeout stops
		_, timer := tc.armed()
		wantArmed("at the start", 5*time.Second)
		tc.at(base, 5*time.Second) // d's, stopped since: nothing is due
		if _, n := tc.endedOf(a); n != 0 {
			t.Fatalf("at +5s: %d calls ended", n)
		}
		wantArmed("at +5s", 10*time.Second)

		tc.at(base, 10*time.Second-time.Nanosecond)
		if _, n := tc.endedOf(a); n != 0 {
			t.Fatalf("ended early: %d calls", n)
		}
		tc.at(base, 10*time.Second)
		if te, n := tc.endedOf(a); te == nil || te.Method != "a" || te.After != 10*time.Second || te.Total || n != 1 {
			t.Fatalf("a: %+v (%d calls ended)", te, n)
		}
		wantArmed("after a", 15*time.Second)

		tc.at(base, 12*time.Second)
		tc.touch(b) // a sign of life: b's timeout runs from +12s
		tc.at(base, 15*time.Second)
		if te, _ := tc.endedOf(c); te == nil || te.Method != "c" || te.After != 15*time.Second || !te.Total {
			t.Fatalf("c: %+v", te)
		}
		tc.at(base, 20*time.Second)
		if te, _ := tc.endedOf(b); te != nil {
			t.Fatal("b ended though touched at +12s")
		}
		wantArmed("at +20s", 32*time.Second)

		tc.busyNow.Store(true) // the server waits on the host
		tc.at(base, 32*time.Second)
		if te, _ := tc.endedOf(b); te != nil {
			t.Fatal("b ended while the host was answering the server")
		}
		wantArmed("at +32s, busy", 52*time.Second)
		tc.busyNow.Store(false)
		tc.at(base, 52*time.Second-time.Nanosecond)
		if te, _ := tc.endedOf(b); te != nil {
			t.Fatal("b ended before its restarted timeout ran out")
		}
		tc.at(base, 52*time.Second)
		if te, _ := tc.endedOf(b); te == nil || te.After != 20*time.Second || te.Total {
			t.Fatalf("b: %+v", te)
		}

		tc.stop(d)
		tc.at(base, time.Hour)
		if te, n := tc.endedOf(d); te != nil || n != 3 {
			t.Errorf("d: %+v, %d calls ended: d's request was answered and nothing else was left", te, n)
		}
		if _, now := tc.armed(); now != timer {
			t.Error("the clock made a second timer")
		}
		for _, k := range []*timeouts{a, b, c} { // their calls end too
			tc.stop(k)
		}
		tc.clock.mu.Lock()
		calls := tc.calls
		tc.clock.mu.Unlock()
		if calls != nil {
			t.Errorf("the clock holds %+v with every call over", calls)
		}
		if at, _ := tc.armed(); !at.IsZero() {
			t.Errorf("armed for +%v with no call left", at.Sub(base))
		}
	})
}

// A key that is stopped, or never was, is ignored; after close nothing is
// armed again.
func TestClockStopAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClock()
		base := time.Now()
		k := tc.start(t, "k", time.Second, 0)
		tc.waiting(k, true)
		tc.stop(k)
		tc.stop(k)
		tc.touch(k)
		tc.waiting(k, true)
		tc.waiting(nil, true)
		tc.touch(nil)
		tc.stop(nil)
		tc.at(base, time.Minute)
		if _, n := tc.endedOf(k); n != 0 {
			t.Fatalf("a stopped call ended: %d calls", n)
		}
		tc.close()
		k = tc.start(t, "late", time.Second, time.Second)
		tc.waiting(k, true)
		if at, _ := tc.armed(); !at.IsZero() {
			t.Error("armed after close")
		}
		tc.at(base, time.Hour)
		if _, n := tc.endedOf(k); n != 0 {
			t.Errorf("a call ended after close: %d calls", n)
		}
	})
}

// A real Conn: a call that gets no answer ends with its request timeout,
// through the clock's real timer, exactly when it runs out, and the Conn
// goes on.
func TestClockTimesOutACall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 30 * time.Second
		c, err := Open(context.Background(), newMuteTransport(), WithDefaultTimeout(timeout),
			WithEra(negotiate.InitializeOnly)) // no server/discover probe to wait out
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for range 3 {
			start := time.Now()
			err = c.Call(context.Background(), "tools/list", nil, nil)
			var te *TimeoutError
			if !errors.As(err, &te) || te.Method != "tools/list" || te.After != timeout || te.Total {
				t.Fatalf("want the call's *TimeoutError, got %v", err)
			}
			if took := time.Since(start); took != timeout {
				t.Errorf("the call ended after %v, want %v", took, timeout)
			}
		}
	})
}
