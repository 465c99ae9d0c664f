package wire

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
)

const (
	// MaxQueued bounds how many messages wait in a Queue for Recv. The
	// consumer (the client's read loop) only routes messages and never
	// waits for the host's handlers, so the queue only has to smooth the
	// bursts between a stream reader and a consumer that is running: a few
	// hundred messages do that, and cost little even when each is tiny and
	// the per-message overhead dominates.
	MaxQueued = 256
	// MaxQueuedBytes bounds the server input, in bytes, that the messages
	// waiting in a Queue hold. Typical messages are far smaller, so it is
	// MaxQueued that usually applies; it is the bound for big ones. A unit
	// bigger than MaxQueuedBytes is still taken, alone, into an empty
	// queue: a big result is never refused, and the event or line size
	// limit of the transport bounds it.
	MaxQueuedBytes = 4 << 20
)

// ErrStopped is returned by Push once the queue has ended or been closed.
var ErrStopped = errors.New("the transport's message queue stopped")

// Queue is the bounded FIFO between the stream readers of a transport and
// its Recv. It holds at most MaxQueued messages and MaxQueuedBytes bytes of
// server input (but always takes one unit into an empty queue). When it is
// full, Push waits: the stream reader stops reading its connection, and
// TCP flow control pushes back on the server. Nothing is ever dropped.
// Pushes that wait are served in the order they came, so that a stream
// that floods the queue cannot keep another stream's response out.
//
// A drained queue reuses its backing array, so a consumer that keeps up
// allocates nothing per message.
//
// A Queue ends in one of two ways: End(err) lets the consumer take what is
// pending and then reports err; Close(err) drops what is pending and
// reports err at once. Pushes waiting then return ErrStopped.
type Queue struct {
	mu       sync.Mutex
	cond     sync.Cond // signalled when items are added, broadcast on end and close
	items    []item
	head     int       // items[head:] are pending
	bytes    int       // bytes of server input the pending items hold
	waiting  []*pusher // pushes waiting for room, in order
	err      error     // set by end or close: what pop reports once items are drained
	woken    bool      // Interrupt: the next pop that would wait returns jsonrpc.ErrInterrupted
	popping  int       // pops waiting for an item
	maxItems int
	maxBytes int
}

// item is a message, or a non-terminal error for Pop to return in its place.
type item struct {
	m    *jsonrpc.Message
	err  error
	size int // the bytes of the unit this item ends; 0 for the others
}

// pusher is a push waiting for room: messages, or an error.
type pusher struct {
	msgs     []*jsonrpc.Message
	err      error
	size     int
	ready    chan struct{} // closed once admitted or refused; nil for a PushErr
	admitted bool
}

// NewQueue returns an empty queue bounded by MaxQueued and MaxQueuedBytes.
func NewQueue() *Queue { return newQueue(MaxQueued, MaxQueuedBytes) }

func newQueue(maxItems, maxBytes int) *Queue {
	q := &Queue{maxItems: maxItems, maxBytes: maxBytes}
	q.cond.L = &q.mu
	return q
}

// Push appends msgs, in order and as one unit, decoded from size bytes of
// server input (the event, line or body they came in; the messages pin it).
// While the queue is full, Push waits for room: it returns nil once msgs
// are queued, ErrStopped when the queue ends or closes first, or ctx.Err()
// when ctx is done first (msgs are then not queued).
func (q *Queue) Push(ctx context.Context, size int, msgs ...*jsonrpc.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	q.mu.Lock()
	if q.err != nil {
		q.mu.Unlock()
		return ErrStopped
	}
	if len(q.waiting) == 0 && q.fits(len(msgs), size) {
		q.add(msgs, nil, size)
		q.mu.Unlock()
		return nil
	}
	p := &pusher{msgs: msgs, size: size, ready: make(chan struct{})}
	q.waiting = append(q.waiting, p)
	q.mu.Unlock()

	select {
	case <-p.ready:
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case p.admitted:
		return nil
	case q.err != nil:
		return ErrStopped
	}
	if i := slices.Index(q.waiting, p); i >= 0 {
		q.waiting = slices.Delete(q.waiting, i, i+1)
	}
	q.admit() // those behind p may fit now
	return ctx.Err()
}

// PushErr queues err in order, after the messages pushed or waiting to be
// pushed before it, without waiting: Pop returns it once, in its turn, and
// the queue goes on (for example a jsonrpc.SessionLostError). It reports
// false once the queue has ended or been closed.
func (q *Queue) PushErr(err error) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return false
	}
	if len(q.waiting) > 0 {
		q.waiting = append(q.waiting, &pusher{err: err})
		return true
	}
	q.add(nil, err, 0)
	return true
}

// fits reports whether a unit of n items and size bytes may be added now:
// into an empty queue always, else within both bounds.
func (q *Queue) fits(n, size int) bool {
	pending := len(q.items) - q.head
	return pending == 0 || (pending+n <= q.maxItems && q.bytes+size <= q.maxBytes)
}

// add appends msgs holding size bytes, or err; q.mu is held.
func (q *Queue) add(msgs []*jsonrpc.Message, err error, size int) {
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
	if err != nil {
		q.items = append(q.items, item{err: err})
	}
	for _, m := range msgs {
		q.items = append(q.items, item{m: m})
	}
	if len(msgs) > 0 {
		q.items[len(q.items)-1].size = size // the unit's bytes are freed with its last message
	}
	q.bytes += size
	q.cond.Signal()
}

// admit moves the waiting pushes that fit now into the queue, in order;
// q.mu is held. An error item never waits for room.
func (q *Queue) admit() {
	n := 0
	for _, p := range q.waiting {
		if p.ready != nil && !q.fits(len(p.msgs), p.size) {
			break
		}
		q.add(p.msgs, p.err, p.size)
		if p.ready != nil {
			p.admitted = true
			close(p.ready)
		}
		n++
	}
	if n > 0 {
		rest := copy(q.waiting, q.waiting[n:])
		clear(q.waiting[rest:])
		q.waiting = q.waiting[:rest]
	}
}

// refuse ends every waiting push; q.mu is held.
func (q *Queue) refuse() {
	for _, p := range q.waiting {
		if p.ready != nil {
			close(p.ready)
		}
	}
	q.waiting = nil
}

// Pop waits for the next message; once there is none left and the queue
// has ended or been closed, it returns the error it ended with.
func (q *Queue) Pop() (*jsonrpc.Message, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && q.err == nil && !q.woken {
		q.popping++
		q.cond.Wait()
		q.popping--
	}
	q.woken = false
	if q.head == len(q.items) {
		if q.err != nil {
			return nil, q.err
		}
		return nil, jsonrpc.ErrInterrupted // woken, with nothing to take
	}
	it := q.items[q.head]
	q.items[q.head] = item{}
	q.head++
	q.bytes -= it.size
	if len(q.waiting) > 0 {
		q.admit()
	}
	return it.m, it.err
}

// Drained reports whether the consumer has taken everything pushed so far
// and waits in Pop for more: a stream reader that is the queue's only
// producer may then hand its next message to the consumer's side some
// other way (a response straight to its call, jsonrpc.AnswerTaker)
// without overtaking anything; the Pop keeps waiting until it pushes. A
// Pop that Interrupt woke is on its way out, not waiting.
func (q *Queue) Drained() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.head == len(q.items) && len(q.waiting) == 0 && q.popping > 0 && !q.woken
}

// Interrupt makes the Pop waiting now, or the next Pop that would wait,
// return jsonrpc.ErrInterrupted instead, once; a Pop that returns a
// message or the queue's error first clears it. The queue goes on.
func (q *Queue) Interrupt() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.woken = true
	q.cond.Broadcast()
}

// End stops the queue after what is pending: pops return err once the
// pending messages are taken; waiting pushes return ErrStopped. Only the
// first End or Close counts.
func (q *Queue) End(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = err
	}
	q.refuse()
	q.cond.Broadcast()
}

// Close drops what is pending and makes every pop, waiting or to come,
// return err, and every push ErrStopped.
func (q *Queue) Close(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.err = err
	q.items, q.head, q.bytes = nil, 0, 0
	q.refuse()
	q.cond.Broadcast()
}

// Len returns how many messages are pending.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}
