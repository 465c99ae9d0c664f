package wire

import (
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
)

// Queue is the unbounded FIFO between the stream reader and Recv. The
// reader never waits for the host: a push always succeeds at once, and the
// queue grows for as long as nobody calls Recv. A drained queue reuses its
// backing array, so a host that keeps up allocates nothing per message.
//
// A Queue ends in one of two ways: End(err) lets the consumer take what is
// pending and then reports err; Close(err) drops what is pending and
// reports err at once.
type Queue struct {
	mu    sync.Mutex
	cond  sync.Cond // signalled on push, broadcast on end and close
	items []item
	head  int   // items[head:] are pending
	err   error // set by end or close: what pop reports once items are drained
}

// item is a message, or a non-terminal error for Pop to return in its place.
type item struct {
	m   *jsonrpc.Message
	err error
}

func NewQueue() *Queue {
	q := &Queue{}
	q.cond.L = &q.mu
	return q
}

// Push appends msgs in order. It reports false once the queue has ended
// or been closed.
func (q *Queue) Push(msgs ...*jsonrpc.Message) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return false
	}
	switch {
	case q.head == len(q.items):
		clear(q.items[:q.head])
		q.items, q.head = q.items[:0], 0
	case q.head > 64 && q.head > len(q.items)/2:
		// Never empty but mostly consumed: move the pending tail to the
		// front so the array does not grow without end.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	for _, m := range msgs {
		q.items = append(q.items, item{m: m})
	}
	q.cond.Signal()
	return true
}

// PushErr queues err in order among the messages: Pop returns it once, in
// its turn, and the queue goes on (for example a jsonrpc.SessionLostError).
// It reports false once the queue has ended or been closed.
func (q *Queue) PushErr(err error) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return false
	}
	q.items = append(q.items, item{err: err})
	q.cond.Signal()
	return true
}

// Pop waits for the next message; once there is none left and the queue
// has ended or been closed, it returns the error it ended with.
func (q *Queue) Pop() (*jsonrpc.Message, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && q.err == nil {
		q.cond.Wait()
	}
	if q.head == len(q.items) {
		return nil, q.err
	}
	it := q.items[q.head]
	q.items[q.head] = item{}
	q.head++
	return it.m, it.err
}

// End stops the queue after what is pending: pops return err once the
// pending messages are taken. Only the first End or Close counts.
func (q *Queue) End(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = err
	}
	q.cond.Broadcast()
}

// Close drops what is pending and makes every pop, waiting or to come,
// return err.
func (q *Queue) Close(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.err = err
	q.items, q.head = nil, 0
	q.cond.Broadcast()
}

// Len returns how many messages are pending.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}
