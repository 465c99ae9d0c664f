package client

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// eventQueue runs functions one at a time, in the order they were queued,
// on one goroutine: notification handlers and progress callbacks go through
// it so that they see messages in order without ever blocking the read loop.
type eventQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	fns    []func()
	closed bool
	done   chan struct{}
	gid    atomic.Uint64 // the goroutine that runs the functions
}

func newEventQueue() *eventQueue {
	q := &eventQueue{done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

func (q *eventQueue) push(fn func()) {
	q.mu.Lock()
	if !q.closed {
		q.fns = append(q.fns, fn)
		q.cond.Signal()
	}
	q.mu.Unlock()
}

// maxPendingNotifications bounds the server notifications waiting for slow
// handlers: past it, new ones are dropped (and logged), so that a chatty
// server cannot grow the client's memory without end.
const maxPendingNotifications = 4096

// offer queues fn unless maxPendingNotifications are already waiting; it
// reports whether fn was queued.
func (q *eventQueue) offer(fn func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return true
	}
	if len(q.fns) >= maxPendingNotifications {
		return false
	}
	q.fns = append(q.fns, fn)
	q.cond.Signal()
	return true
}

func (q *eventQueue) run() {
	defer close(q.done)
	q.gid.Store(goid())
	for {
		q.mu.Lock()
		for len(q.fns) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.fns) == 0 {
			q.mu.Unlock()
			return
		}
		fn := q.fns[0]
		q.fns[0] = nil
		q.fns = q.fns[1:]
		q.mu.Unlock()
		fn()
	}
}

// close runs what is queued, then stops the goroutine and waits for it.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Signal()
	q.mu.Unlock()
	<-q.done
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
