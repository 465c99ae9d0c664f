package wire

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/jsonrpc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var bg = context.Background()

func msg(n int64) *jsonrpc.Message { return &jsonrpc.Message{ID: jsonrpc.Int(n), Method: "x"} }

// popID pops and returns the number msg gave the message.
func popID(t *testing.T, q *Queue) int64 {
	t.Helper()
	m, err := q.Pop()
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	n, _ := m.ID.Int64()
	return n
}

// waiters returns how many pushes wait for room.
func waiters(q *Queue) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// awaitWaiters waits until n pushes wait for room: the pushes run in
// goroutines, and the state they reach is what the test waits for.
func awaitWaiters(t *testing.T, q *Queue, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for waiters(q) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d pushes waiting, want %d", waiters(q), n)
		}
		runtime.Gosched()
	}
}

// pushAsync pushes in a goroutine; the channel gets Push's result.
func pushAsync(ctx context.Context, q *Queue, size int, msgs ...*jsonrpc.Message) <-chan error {
	done := make(chan error, 1)
	go func() { done <- q.Push(ctx, size, msgs...) }()
	return done
}

func TestQueueOrderEndAndClose(t *testing.T) {
	q := newQueue(1000, 1<<20) // room for all: this test is about order
	for i := range int64(1000) {
		if err := q.Push(bg, 10, msg(i)); err != nil {
			t.Fatal(err)
		}
		if i%3 != 2 { // consume while producing, so compaction runs
			if m, err := q.Pop(); err != nil || m == nil {
				t.Fatal(err)
			}
		}
	}
	var last int64 = -1
	errEnd := errors.New("end")
	q.End(errEnd)
	if err := q.Push(bg, 1, msg(1)); !errors.Is(err, ErrStopped) {
		t.Errorf("push after End: %v", err)
	}
	for {
		m, err := q.Pop()
		if err != nil {
			if !errors.Is(err, errEnd) {
				t.Fatalf("got %v", err)
			}
			break
		}
		n, _ := m.ID.Int64()
		if n <= last {
			t.Fatalf("out of order: %d after %d", n, last)
		}
		last = n
	}
	if last != 999 {
		t.Errorf("last %d", last)
	}

	q2 := NewQueue()
	_ = q2.Push(bg, 2, msg(1), msg(2))
	errClosed := errors.New("closed")
	q2.Close(errClosed)
	if _, err := q2.Pop(); !errors.Is(err, errClosed) || q2.Len() != 0 {
		t.Errorf("Close must drop what is pending: %v, %d left", err, q2.Len())
	}
}

func TestQueuePopWaits(t *testing.T) {
	q := NewQueue()
	got := make(chan *jsonrpc.Message)
	go func() { m, _ := q.Pop(); got <- m }()
	select {
	case <-got:
		t.Fatal("Pop returned from an empty queue")
	case <-time.After(20 * time.Millisecond):
	}
	_ = q.Push(bg, 1, msg(7))
	if m := <-got; m.ID.Raw() != "7" {
		t.Errorf("got %v", m.ID)
	}
}

func TestQueuePushErrInOrder(t *testing.T) {
	q := NewQueue()
	lost := errors.New("session lost")
	_ = q.Push(bg, 1, msg(1))
	q.PushErr(lost)
	_ = q.Push(bg, 1, msg(2))
	if m, err := q.Pop(); err != nil || m.ID.Raw() != "1" {
		t.Fatalf("first: %v %v", m, err)
	}
	if m, err := q.Pop(); m != nil || !errors.Is(err, lost) {
		t.Fatalf("second must be the error: %v %v", m, err)
	}
	if m, err := q.Pop(); err != nil || m.ID.Raw() != "2" {
		t.Fatalf("the queue must go on after the error: %v %v", m, err)
	}
}

// TestQueueBounds: a push that would pass either bound waits until pops
// make room, and a unit bigger than the byte bound enters an empty queue
// alone.
func TestQueueBounds(t *testing.T) {
	tests := []struct {
		name     string
		maxItems int
		maxBytes int
		fill     []int // sizes of the units that fill the queue, one message each
		next     int   // size of the push that must wait
		pops     int   // pops after which it is queued
	}{
		{name: "count", maxItems: 3, maxBytes: 1 << 20, fill: []int{1, 1, 1}, next: 1, pops: 1},
		{name: "bytes", maxItems: 100, maxBytes: 10, fill: []int{4, 4}, next: 4, pops: 1},
		{name: "bytes, two pops", maxItems: 100, maxBytes: 10, fill: []int{4, 4}, next: 9, pops: 2},
		{name: "oversize waits for an empty queue", maxItems: 100, maxBytes: 10, fill: []int{1}, next: 50, pops: 1},
		{name: "after an oversize unit", maxItems: 100, maxBytes: 10, fill: []int{50}, next: 1, pops: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQueue(tt.maxItems, tt.maxBytes)
			for i, size := range tt.fill {
				if err := q.Push(bg, size, msg(int64(i))); err != nil {
					t.Fatal(err)
				}
			}
			done := pushAsync(bg, q, tt.next, msg(99))
			awaitWaiters(t, q, 1)
			for i := range tt.pops {
				if i > 0 && waiters(q) != 1 {
					t.Fatalf("queued after %d pops, want %d", i, tt.pops)
				}
				if n := popID(t, q); n != int64(i) {
					t.Fatalf("popped %d, want %d", n, i)
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for i := tt.pops; i < len(tt.fill); i++ {
				if n := popID(t, q); n != int64(i) {
					t.Fatalf("popped %d, want %d", n, i)
				}
			}
			if n := popID(t, q); n != 99 {
				t.Fatalf("popped %d, want the waiting push", n)
			}
		})
	}
}

// TestQueueUnitOversizeAlone: a unit over both bounds enters an empty
// queue whole.
func TestQueueUnitOversizeAlone(t *testing.T) {
	q := newQueue(2, 10)
	if err := q.Push(bg, 100, msg(1), msg(2), msg(3)); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 3 {
		t.Fatalf("%d queued, want the whole unit", q.Len())
	}
}

// TestQueueWaitersInOrder: a push never overtakes one that waits, even
// when it would fit, so a flooding stream cannot keep another out.
func TestQueueWaitersInOrder(t *testing.T) {
	q := newQueue(100, 10)
	_ = q.Push(bg, 8, msg(1))
	a := pushAsync(bg, q, 5, msg(2)) // 8+5 > 10: waits
	awaitWaiters(t, q, 1)
	c := pushAsync(bg, q, 1, msg(3)) // 8+1 fits, but a waits
	awaitWaiters(t, q, 2)
	for _, want := range []int64{1, 2, 3} {
		if n := popID(t, q); n != want {
			t.Fatalf("popped %d, want %d", n, want)
		}
	}
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	if err := <-c; err != nil {
		t.Fatal(err)
	}
}

// TestQueuePushErrAfterWaiters: an error pushed while messages wait for
// room comes after them.
func TestQueuePushErrAfterWaiters(t *testing.T) {
	q := newQueue(1, 1<<20)
	_ = q.Push(bg, 1, msg(1))
	a := pushAsync(bg, q, 1, msg(2))
	awaitWaiters(t, q, 1)
	lost := errors.New("lost")
	if !q.PushErr(lost) {
		t.Fatal("PushErr refused")
	}
	for _, want := range []int64{1, 2} {
		if n := popID(t, q); n != want {
			t.Fatalf("popped %d, want %d", n, want)
		}
	}
	if _, err := q.Pop(); !errors.Is(err, lost) {
		t.Fatalf("got %v, want the error last", err)
	}
	if err := <-a; err != nil {
		t.Fatal(err)
	}
}

// TestQueueWaitingPushEnds: a waiting push returns when its context ends
// (not queued; those behind it move up) or when the queue stops.
func TestQueueWaitingPushEnds(t *testing.T) {
	t.Run("context", func(t *testing.T) {
		q := newQueue(100, 10)
		_ = q.Push(bg, 8, msg(1))
		ctx, cancel := context.WithCancel(bg)
		a := pushAsync(ctx, q, 5, msg(2))
		awaitWaiters(t, q, 1)
		b := pushAsync(bg, q, 2, msg(3)) // fits once a is gone
		awaitWaiters(t, q, 2)
		cancel()
		if err := <-a; !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
		if err := <-b; err != nil {
			t.Fatalf("the push behind: %v", err)
		}
		for _, want := range []int64{1, 3} {
			if n := popID(t, q); n != want {
				t.Fatalf("popped %d, want %d", n, want)
			}
		}
	})
	for _, stop := range []struct {
		name string
		f    func(*Queue)
	}{
		{"end", func(q *Queue) { q.End(errors.New("end")) }},
		{"close", func(q *Queue) { q.Close(errors.New("close")) }},
	} {
		t.Run(stop.name, func(t *testing.T) {
			q := newQueue(1, 10)
			_ = q.Push(bg, 1, msg(1))
			a := pushAsync(bg, q, 1, msg(2))
			awaitWaiters(t, q, 1)
			stop.f(q)
			if err := <-a; !errors.Is(err, ErrStopped) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// BenchmarkQueueNotifications measures notification throughput through a
// bounded queue with one stream reader and one consumer, the queue full
// most of the time (the reader is faster).
func BenchmarkQueueNotifications(b *testing.B) {
	q := NewQueue()
	m := &jsonrpc.Message{Method: "notifications/message", Params: []byte(`{"level":"info","data":"x"}`)}
	msgs := []*jsonrpc.Message{m} // as a transport has them, from the decoder
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, err := q.Pop(); err != nil {
				return
			}
		}
	}()
	b.ReportAllocs()
	b.SetBytes(int64(len(m.Params)))
	for b.Loop() {
		if err := q.Push(bg, len(m.Params), msgs...); err != nil {
			b.Fatal(err)
		}
	}
	q.End(errors.New("end"))
	<-done
}

// TestQueueInterrupt: Interrupt wakes a waiting Pop with ErrInterrupted
// once, and the queue goes on; a wake-up that finds a message is used up
// by it; an ended queue reports its end, not the wake-up.
func TestQueueInterrupt(t *testing.T) {
	q := NewQueue()
	got := make(chan error, 1)
	go func() { _, err := q.Pop(); got <- err }()
	q.Interrupt()
	select {
	case err := <-got:
		if !errors.Is(err, jsonrpc.ErrInterrupted) {
			t.Fatalf("woken Pop: %v, want ErrInterrupted", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Interrupt did not wake the waiting Pop")
	}
	_ = q.Push(bg, 1, msg(1))
	if n := popID(t, q); n != 1 {
		t.Errorf("after the wake-up: message %d, want 1", n)
	}

	// Before the Pop, with a message pending: the message, and the
	// wake-up is gone with it.
	q.Interrupt()
	_ = q.Push(bg, 1, msg(2))
	if n := popID(t, q); n != 2 {
		t.Errorf("message %d, want 2", n)
	}
	q.Interrupt()
	if _, err := q.Pop(); !errors.Is(err, jsonrpc.ErrInterrupted) {
		t.Fatalf("Pop on an empty queue after Interrupt: %v, want ErrInterrupted", err)
	}
	// Once: the next Pop waits for a message again.
	go func() { _ = q.Push(bg, 1, msg(3)) }()
	if n := popID(t, q); n != 3 {
		t.Errorf("message %d, want 3", n)
	}

	end := errors.New("the end")
	q.Interrupt()
	q.End(end)
	if _, err := q.Pop(); err != end {
		t.Errorf("ended queue: %v, want its end", err)
	}
}

// TestQueueDrained: Drained holds only while a Pop waits with nothing
// pending: not before any Pop, not with a message pushed and not yet
// taken, not while the consumer is away from Pop.
func TestQueueDrained(t *testing.T) {
	q := NewQueue()
	if q.Drained() {
		t.Fatal("drained with no Pop waiting")
	}
	got := make(chan int64)
	pop := func() { m, _ := q.Pop(); n, _ := m.ID.Int64(); got <- n }
	go pop()
	awaitDrained(t, q)
	q.mu.Lock() // hold the Pop off its message, as a busy scheduler might
	q.add([]*jsonrpc.Message{msg(1)}, nil, 1)
	q.cond.Signal()
	q.mu.Unlock()
	if q.Drained() && q.Len() > 0 {
		t.Fatal("drained with a message pending")
	}
	if n := <-got; n != 1 {
		t.Fatalf("popped %d", n)
	}
	if q.Drained() {
		t.Fatal("drained with the consumer away from Pop")
	}
	go pop()
	awaitDrained(t, q)
	_ = q.Push(bg, 1, msg(2))
	if n := <-got; n != 2 {
		t.Fatalf("popped %d", n)
	}

	// A Pop that Interrupt woke is leaving, not waiting.
	woken := make(chan error, 1)
	go func() { _, err := q.Pop(); woken <- err }()
	awaitDrained(t, q)
	q.Interrupt()
	if q.Drained() {
		t.Fatal("drained with the waiting Pop woken")
	}
	if err := <-woken; !errors.Is(err, jsonrpc.ErrInterrupted) {
		t.Fatalf("woken Pop: %v", err)
	}
}

func awaitDrained(t *testing.T, q *Queue) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !q.Drained() {
		if time.Now().After(deadline) {
			t.Fatal("the waiting Pop does not show as drained")
		}
		runtime.Gosched()
	}
}
