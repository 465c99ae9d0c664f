package fleet

import (
	"log/slog"
	"sync"
	"time"

	"github.com/anymcp/anymcp/client"
)

// State is where one server of the fleet stands.
type State int

const (
	// StateNotConnected: not dialled yet (a fleet dials on first use).
	StateNotConnected State = iota
	// StateConnecting: the dial (or spawn) and handshake are under way.
	StateConnecting
	// StateReady: connected; calls go out.
	StateReady
	// StateReconnecting: the Conn lost its session and is re-initializing.
	StateReconnecting
	// StateFailed: the last dial failed, or the connection ended (Err says
	// why); the next use after the retry backoff dials again.
	StateFailed
	// StateStopped: a stdio server stopped after it sat idle (WithIdleStop);
	// the next use starts it again.
	StateStopped
	// StateDisabled: configured off (Server.Disabled).
	StateDisabled
	// StateClosed: the fleet was closed. Final.
	StateClosed
)

var stateNames = [...]string{"not connected", "connecting", "ready", "reconnecting", "failed", "stopped", "disabled", "closed"}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "unknown"
	}
	return stateNames[s]
}

// Status is one server's state.
type Status struct {
	Server string
	State  State
	Err    *ServerError // why, when Failed
	Since  time.Time    // when it entered State
	Info   *client.Info // what was negotiated, when connected
}

// maxPendingEvents bounds the state changes waiting for the OnStateChange
// handler; past it the oldest are dropped (and logged).
const maxPendingEvents = 4096

// events delivers state changes to the host's handler, in order, on one
// goroutine, without ever making the code that changed a state wait.
type events struct {
	f       func(from, to Status)
	last    map[string]Status // per server, the Status last delivered: the next one's from
	log     *slog.Logger
	mu      sync.Mutex
	queue   []Status
	dropped int
	wake    chan struct{}
	done    chan struct{}
	closing bool
}

func newEvents(f func(from, to Status), log *slog.Logger, initial []Status) *events {
	e := &events{f: f, log: log, last: make(map[string]Status, len(initial)), wake: make(chan struct{}, 1), done: make(chan struct{})}
	for _, s := range initial {
		e.last[s.Server] = s
	}
	go e.run()
	return e
}

// push queues s; it is called with the server's lock held, so that the
// order of a server's changes is the order they happened in.
func (e *events) push(s Status) {
	e.mu.Lock()
	if len(e.queue) >= maxPendingEvents {
		e.queue = e.queue[1:]
		e.dropped++
	}
	e.queue = append(e.queue, s)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *events) run() {
	defer close(e.done)
	for {
		e.mu.Lock()
		q := e.queue
		e.queue = nil
		closing, dropped := e.closing, e.dropped
		e.dropped = 0
		e.mu.Unlock()
		if dropped > 0 {
			e.log.Warn("state changes dropped: the OnStateChange handler fell behind", "dropped", dropped)
		}
		for _, s := range q {
			from := e.last[s.Server] // only run touches last
			e.last[s.Server] = s
			e.f(from, s)
		}
		if len(q) > 0 {
			continue
		}
		if closing {
			return
		}
		<-e.wake
	}
}

// close delivers what is queued and ends the goroutine.
func (e *events) close() {
	e.mu.Lock()
	e.closing = true
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	<-e.done
}
