package client

import "sync"

// eventQueue runs functions one at a time, in the order they were queued,
// on one goroutine: notification handlers and progress callbacks go through
// it so that they see messages in order without ever blocking the read loop.
type eventQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	fns    []func()
	closed bool
	done   chan struct{}
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

func (q *eventQueue) run() {
	defer close(q.done)
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
