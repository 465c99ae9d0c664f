package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/anymcp/anymcp/negotiate"
)

// testClock is a clock on a time the test moves by hand; its real timer is
// armed an hour or more ahead, so only the test's own fire calls count.
type testClock struct {
	clock
	t     time.Time
	ended map[*timeouts]*TimeoutError
}

func newTestClock() *testClock {
	tc := &testClock{t: time.Now().Add(time.Hour), ended: map[*timeouts]*TimeoutError{}}
	tc.now = func() time.Time { return tc.t }
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
		tc.ended[key] = te
	})
	return key
}

// at moves the time to base+d and lets the timer fire.
func (tc *testClock) at(base time.Time, d time.Duration) {
	tc.t = base.Add(d)
	tc.fire()
}

// The Conn's one timer ends each call when its own timeout runs out: the
// request timeout (restarted by touch, paused between requests, extended
// while the server waits on the host) and the total time (which nothing
// extends), always armed for the earliest moment any call is due.
func TestClockEndsCallsAtTheirTimeouts(t *testing.T) {
	tc := newTestClock()
	defer tc.close()
	base := tc.t
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
	timer := tc.timer
	if !tc.clock.at.Equal(base.Add(5 * time.Second)) {
		t.Fatalf("armed for +%v, want +5s", tc.clock.at.Sub(base))
	}
	tc.at(base, 5*time.Second) // d's, stopped since: nothing is due
	if len(tc.ended) != 0 || !tc.clock.at.Equal(base.Add(10*time.Second)) {
		t.Fatalf("at +5s: ended %v, armed for +%v (want +10s)", tc.ended, tc.clock.at.Sub(base))
	}

	tc.at(base, 9*time.Second)
	if len(tc.ended) != 0 {
		t.Fatalf("ended early: %v", tc.ended)
	}
	tc.at(base, 10*time.Second)
	if te := tc.ended[a]; te == nil || te.Method != "a" || te.After != 10*time.Second || te.Total {
		t.Fatalf("a: %+v", te)
	}
	if len(tc.ended) != 1 || !tc.clock.at.Equal(base.Add(15*time.Second)) {
		t.Fatalf("after a: ended %v, armed for +%v (want +15s)", tc.ended, tc.clock.at.Sub(base))
	}

	tc.t = base.Add(12 * time.Second)
	tc.touch(b) // a sign of life: b's timeout runs from +12s
	tc.at(base, 15*time.Second)
	if te := tc.ended[c]; te == nil || te.Method != "c" || te.After != 15*time.Second || !te.Total {
		t.Fatalf("c: %+v", te)
	}
	tc.at(base, 20*time.Second)
	if tc.ended[b] != nil {
		t.Fatal("b ended though touched at +12s")
	}
	if !tc.clock.at.Equal(base.Add(32 * time.Second)) {
		t.Fatalf("armed for +%v, want +32s", tc.clock.at.Sub(base))
	}

	tc.busy = func() bool { return true } // the server waits on the host
	tc.at(base, 32*time.Second)
	if tc.ended[b] != nil {
		t.Fatal("b ended while the host was answering the server")
	}
	tc.busy = nil
	tc.at(base, 51*time.Second)
	if tc.ended[b] != nil {
		t.Fatal("b ended before its restarted timeout ran out")
	}
	tc.at(base, 52*time.Second)
	if te := tc.ended[b]; te == nil || te.After != 20*time.Second || te.Total {
		t.Fatalf("b: %+v", te)
	}

	tc.stop(d)
	tc.at(base, time.Hour)
	if tc.ended[d] != nil || len(tc.ended) != 3 {
		t.Errorf("ended %v: d's request was answered and nothing else was left", tc.ended)
	}
	if tc.timer != timer {
		t.Error("the clock made a second timer")
	}
	for _, k := range []*timeouts{a, b, c} { // their calls end too
		tc.stop(k)
	}
	if tc.calls != nil {
		t.Errorf("the clock holds %+v with every call over", tc.calls)
	}
	if !tc.clock.at.IsZero() {
		t.Errorf("armed for +%v with no call left", tc.clock.at.Sub(base))
	}
}

// A key that is stopped, or never was, is ignored; after close nothing is
// armed again.
func TestClockStopAndClose(t *testing.T) {
	tc := newTestClock()
	base := tc.t
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
	if len(tc.ended) != 0 {
		t.Fatalf("a stopped call ended: %v", tc.ended)
	}
	tc.close()
	k = tc.start(t, "late", time.Second, time.Second)
	tc.waiting(k, true)
	if !tc.clock.at.IsZero() {
		t.Error("armed after close")
	}
}

// A real Conn: a call that gets no answer ends with its request timeout,
// through the clock's real timer, and the Conn goes on.
func TestClockTimesOutACall(t *testing.T) {
	c, err := Open(context.Background(), newMuteTransport(), WithDefaultTimeout(20*time.Millisecond),
		WithEra(negotiate.InitializeOnly)) // no server/discover probe to wait out

	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		err = c.Call(context.Background(), "tools/list", nil, nil)
		var te *TimeoutError
		if !errors.As(err, &te) || te.Method != "tools/list" || te.After != 20*time.Millisecond || te.Total {
			t.Fatalf("want the call's *TimeoutError, got %v", err)
		}
	}
}
