package client

import (
	"context"
	"sync"
	"time"
)

// clock keeps the timeouts of every call of a Conn with one timer: a call
// records when it times out, and the timer, armed for the earliest of those
// moments, checks them all when it fires. A call then costs no timer of its
// own — nothing added to or removed from the runtime's timer heap — and
// most calls end long before the timer fires: a call that finishes leaves
// the list, and the timer at most one needless check. The calls are linked
// through their own timeouts, so an idle Conn holds nothing for them.
type clock struct {
	busy func() bool // the server waits on the host: request timeouts start over

	mu    sync.Mutex
	timer *time.Timer // created with the first timed call
	at    time.Time   // when timer fires; zero while it is stopped
	calls *timeouts   // the calls' timeouts, linked
	done  bool        // closed: no timer is armed again
}

// timeouts are one call's: the request timeout, which runs while a request
// of the call waits for its answer and starts over at every sign of life,
// and the call's total time, which runs from the start to the end. The
// fields below cancel are guarded by the clock's mu.
type timeouts struct {
	method  string
	cancel  context.CancelCauseFunc
	idle    time.Duration // the request timeout; 0: none
	total   time.Duration // the total time; 0: none
	idleAt  time.Time     // when the request timeout runs out; zero while no request waits
	totalAt time.Time     // when the total time runs out; zero for none
	ended   bool          // a timeout ran out, or the call is over: off the list
	prev    *timeouts
	next    *timeouts
}

// due returns when the next of t's timeouts runs out, or zero.
func (t *timeouts) due() time.Time {
	switch {
	case t.idleAt.IsZero():
		return t.totalAt
	case t.totalAt.IsZero() || t.idleAt.Before(t.totalAt):
		return t.idleAt
	}
	return t.totalAt
}

// start registers a call's timeouts — cancel ends the call with a
// *TimeoutError as its cause — and returns them, nil when the call has
// none. The total time starts now; the request timeout with waiting.
func (k *clock) start(method string, idle, total time.Duration, cancel context.CancelCauseFunc) *timeouts {
	if idle <= 0 && total <= 0 {
		return nil
	}
	t := &timeouts{method: method, cancel: cancel, idle: max(idle, 0), total: max(total, 0)}
	k.mu.Lock()
	defer k.mu.Unlock()
	if total > 0 {
		t.totalAt = time.Now().Add(total)
		k.armLocked(t.totalAt)
	}
	t.next = k.calls
	if k.calls != nil {
		k.calls.prev = t
	}
	k.calls = t
	return t
}

// stop forgets the call's timeouts: the call is over.
func (k *clock) stop(t *timeouts) {
	if t == nil {
		return
	}
	k.mu.Lock()
	k.unlinkLocked(t)
	k.mu.Unlock()
}

func (k *clock) unlinkLocked(t *timeouts) {
	if t.ended {
		return
	}
	t.ended = true
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		k.calls = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	}
	t.prev, t.next = nil, nil
}

// waiting starts (on) or stops the call's request timeout: a request of
// the call waits for its answer, or no longer does.
func (k *clock) waiting(t *timeouts, on bool) {
	if t == nil || t.idle == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if t.ended {
		return
	}
	t.idleAt = time.Time{}
	if on {
		t.idleAt = time.Now().Add(t.idle)
		k.armLocked(t.idleAt)
	}
}

// touch starts the call's request timeout over, if it runs: the server
// showed a sign of life (progress), or the host answered its request.
func (k *clock) touch(t *timeouts) {
	if t == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !t.ended && !t.idleAt.IsZero() {
		t.idleAt = time.Now().Add(t.idle) // later than before: the timer stays
	}
}

// armLocked makes the timer fire at at, unless it fires earlier already.
func (k *clock) armLocked(at time.Time) {
	if k.done || !k.at.IsZero() && !at.Before(k.at) {
		return
	}
	k.at = at
	if k.timer == nil {
		k.timer = time.AfterFunc(time.Until(at), k.fire)
		return
	}
	k.timer.Reset(time.Until(at))
}

// expiry is a timeout that ran out: the call it ends, and why.
type expiry struct {
	cancel context.CancelCauseFunc
	err    *TimeoutError
}

// fire checks every call's timeouts, ends the calls whose time ran out,
// and arms the timer for the next. A request timeout that runs out while
// the server waits on the host starts over instead.
func (k *clock) fire() {
	var ended []expiry
	busy := k.busy != nil && k.busy()
	now := time.Now()
	k.mu.Lock()
	k.at = time.Time{}
	var next time.Time
	for t := k.calls; t != nil; {
		following := t.next
		switch {
		case !t.totalAt.IsZero() && !now.Before(t.totalAt):
			ended = append(ended, expiry{t.cancel, &TimeoutError{Method: t.method, After: t.total, Total: true}})
			k.unlinkLocked(t)
		case !t.idleAt.IsZero() && !now.Before(t.idleAt) && busy:
			t.idleAt = now.Add(t.idle)
		case !t.idleAt.IsZero() && !now.Before(t.idleAt):
			ended = append(ended, expiry{t.cancel, &TimeoutError{Method: t.method, After: t.idle}})
			t.idleAt = time.Time{} // this request is over; the total time, if any, runs on
		}
		if d := t.due(); !t.ended && !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
		t = following
	}
	if !next.IsZero() {
		k.armLocked(next)
	}
	k.mu.Unlock()
	for _, e := range ended {
		e.cancel(e.err)
	}
}

// close stops the timer for good; the Conn is closed.
func (k *clock) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.done = true
	if k.timer != nil {
		k.timer.Stop()
	}
}
