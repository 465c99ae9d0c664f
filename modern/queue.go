package modern

import (
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
)

// queue is the unbounded FIFO between the stream readers and Recv. A push
// never waits for the consumer, so a reader that has a message in hand can
// always hand it over and keep reading; the price is that the queue grows
// without limit if nobody calls Recv. The slice is reused once drained, so a
// consumer that keeps up costs no allocation per message.
type queue struct {
	mu     sync.Mutex
	ready  sync.Cond // signalled on push and on close
	items  []*jsonrpc.Message
	head   int // items[head:] are pending
	closed bool
}

func newQueue() *queue {
	q := &queue{}
	q.ready.L = &q.mu
	return q
}

// push appends msgs in order; it reports false once the queue is closed.
func (q *queue) push(msgs ...*jsonrpc.Message) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	if q.head > 0 && q.head == len(q.items) {
		clear(q.items)
		q.items, q.head = q.items[:0], 0
	} else if q.head > 64 && q.head > len(q.items)/2 {
		// Mostly consumed but never empty: slide the tail down so the
		// backing array does not grow forever.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, msgs...)
	q.ready.Signal()
	return true
}

// pop waits for the next message; it reports false once the queue is closed.
func (q *queue) pop() (*jsonrpc.Message, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && !q.closed {
		q.ready.Wait()
	}
	if q.closed {
		return nil, false
	}
	m := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	return m, true
}

// close drops whatever is pending and wakes every waiter.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.items, q.head = nil, 0
	q.ready.Broadcast()
}
