package client

import (
	"context"
	"sync"
)

// State is where a Conn stands, as gRPC's connectivity states are.
type State int

const (
	// StateConnecting: the handshake has not finished.
	StateConnecting State = iota
	// StateReady: calls go straight out.
	StateReady
	// StateReconnecting: the session was lost and the Conn is
	// re-initializing; calls wait for it (bounded by their context).
	StateReconnecting
	// StateClosed: closed by the host, or the transport gave up for good
	// (Err says why). Final.
	StateClosed
)

var stateNames = [...]string{"connecting", "ready", "reconnecting", "closed"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(?)"
}

// stateWatch holds the state and wakes whoever waits for it to change.
type stateWatch struct {
	mu      sync.Mutex
	state   State
	changed chan struct{} // closed and replaced at every change
}

// State returns the Conn's current state.
func (c *Conn) State() State {
	c.states.mu.Lock()
	defer c.states.mu.Unlock()
	return c.states.state
}

// WaitForStateChange waits until the state is no longer from, and reports
// true; or until ctx is done, and reports false.
func (c *Conn) WaitForStateChange(ctx context.Context, from State) bool {
	c.states.mu.Lock()
	if c.states.state != from {
		c.states.mu.Unlock()
		return true
	}
	ch := c.states.wait()
	c.states.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// wait returns the channel closed at the next change; mu must be held.
func (w *stateWatch) wait() chan struct{} {
	if w.changed == nil {
		w.changed = make(chan struct{})
	}
	return w.changed
}

// setState moves to s (never out of StateClosed) and tells the watchers
// and the OnStateChange handler.
func (c *Conn) setState(s State) {
	w := &c.states
	w.mu.Lock()
	from := w.state
	if from == s || from == StateClosed {
		w.mu.Unlock()
		return
	}
	w.state = s
	if w.changed != nil {
		close(w.changed)
		w.changed = nil
	}
	if f := c.opts.onState; f != nil {
		c.events.push(func() { f(from, s) }) // under w.mu: queued in the order of the changes
	}
	w.mu.Unlock()
	c.opts.logger.Debug("anymcp: state", "from", from.String(), "to", s.String())
}
