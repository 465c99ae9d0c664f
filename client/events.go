package client

import (
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
)

// eventQueue runs functions one at a time, in the order they were queued,
// on one goroutine: notification handlers and the host's callbacks go
// through it so that they see messages in order without ever blocking the
// read loop. The goroutine starts with the first function queued and ends
// when none is left, so an idle Conn keeps none.
type eventQueue struct {
	mu      sync.Mutex
	fns     []event
	bytes   int  // bytes of server input the queued notifications hold
	closed  bool // no more functions are taken
	working bool // a goroutine runs the queue

	maxLen, maxBytes int // maxPendingNotifications, maxPendingNotificationBytes
	log              *slog.Logger
	wg               sync.WaitGroup
	// gid is the goroutine that runs the functions, read each time one
	// starts (a stack trace: once per burst of events, and never for a
	// Conn that gets none); running is set while a function runs.
	gid     atomic.Uint64
	running atomic.Bool
}

// event is a queued function and the bytes of server input it holds.
type event struct {
	fn   func()
	size int
}

func newEventQueue(log *slog.Logger) *eventQueue {
	return &eventQueue{maxLen: maxPendingNotifications, maxBytes: maxPendingNotificationBytes, log: log}
}

// push queues fn, something the Conn itself produces (state changes,
// re-initializations, coalesced change notifications), unless
// maxPendingEvents wait already: then it is dropped, and logged, as a
// notification past the bounds is. Coalesced list changes are at most one
// per kind; the others come with changes of the session, which a server
// that loses every session at once could otherwise queue without end
// behind a handler that blocks. It reports whether fn was queued (or the
// queue is closed, when nothing runs any more).
func (q *eventQueue) push(fn func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return true
	}
	if len(q.fns) >= maxPendingEvents {
		q.log.Warn("anymcp: dropped an event for the host's handlers: too many wait for a handler that does not return")
		return false
	}
	q.add(event{fn: fn})
	return true
}

const (
	// maxPendingNotifications bounds the server notifications waiting for
	// slow handlers. The read loop must never wait for a handler (a
	// handler may call the Conn, whose answer the read loop must read), so
	// past the bounds new notifications are dropped, counted and logged.
	// 4,096 rides out a burst of log records while a handler is busy.
	maxPendingNotifications = 4096
	// maxPendingNotificationBytes bounds the bytes of server input (params)
	// those notifications hold: 4,096 log records of a few hundred bytes fit
	// easily, 4,096 of 64 KiB (256 MiB) do not. One bigger notification is
	// still queued when none waits.
	maxPendingNotificationBytes = 16 << 20
	// maxPendingEvents bounds the queue for what the Conn itself pushes:
	// past the notifications' bound, so that a flood of log records never
	// hides a change of state.
	maxPendingEvents = 2 * maxPendingNotifications
)

// offer queues fn, a handler for a notification holding size bytes,
// unless the queue is past maxPendingNotifications or
// maxPendingNotificationBytes; it reports whether fn was queued.
func (q *eventQueue) offer(fn func(), size int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return true
	}
	if n := len(q.fns); n >= q.maxLen || (n > 0 && q.bytes+size > q.maxBytes) {
		return false
	}
	q.add(event{fn: fn, size: size})
	return true
}

// add queues ev and starts the goroutine when none runs; q.mu is held.
func (q *eventQueue) add(ev event) {
	q.fns = append(q.fns, ev)
	q.bytes += ev.size
	if !q.working {
		q.working = true
		q.wg.Add(1)
		go q.run()
	}
}

// run runs the queued functions until none is left.
func (q *eventQueue) run() {
	defer q.wg.Done()
	q.gid.Store(goid())
	for {
		q.mu.Lock()
		if len(q.fns) == 0 {
			q.working = false
			q.fns = nil // a burst's backing array goes with it
			q.mu.Unlock()
			return
		}
		ev := q.fns[0]
		q.fns[0] = event{}
		q.fns = q.fns[1:]
		q.bytes -= ev.size
		q.mu.Unlock()
		q.running.Store(true)
		q.runOne(ev.fn)
		q.running.Store(false)
	}
}

// runOne runs fn, a handler of the host's. One that panics is logged with
// its stack, and the queue goes on: a server's notification must not end
// the host's process, nor the handlers after it.
func (q *eventQueue) runOne(fn func()) {
	defer func() {
		if p := recover(); p != nil {
			q.log.Error("anymcp: a handler of the host panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	fn()
}

// close runs what is queued, then waits for the goroutine to end.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wg.Wait()
}

// goid returns the id of the calling goroutine, read from the first line
// of its stack trace ("goroutine 42 [running]:"). Close uses it to tell a
// call from one of the Conn's own goroutines, which it must not wait for.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) <= len(prefix) {
		return 0
	}
	b = b[len(prefix):]
	end := 0
	for end < len(b) && b[end] >= '0' && b[end] <= '9' {
		end++
	}
	id, _ := strconv.ParseUint(string(b[:end]), 10, 64)
	return id
}

// len returns how many functions wait to run.
func (q *eventQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.fns)
}
