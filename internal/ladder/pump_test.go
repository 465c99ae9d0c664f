package ladder

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
)

// queueTransport is a transport whose Recv pops a wire.Queue the test
// fills; wakeableTransport is one that is a jsonrpc.RecvInterrupter too.
type queueTransport struct {
	q     *wire.Queue
	woken atomic.Int32 // Recvs that returned ErrInterrupted
}

func (t *queueTransport) Send(context.Context, *jsonrpc.Message) error { return nil }

func (t *queueTransport) Recv() (*jsonrpc.Message, error) {
	m, err := t.q.Pop()
	if errors.Is(err, jsonrpc.ErrInterrupted) {
		t.woken.Add(1)
	}
	return m, err
}
func (t *queueTransport) Close() error {
	t.q.Close(jsonrpc.ErrClosed)
	return nil
}

type wakeableTransport struct{ queueTransport }

func (t *wakeableTransport) InterruptRecv() { t.q.Interrupt() }

// TestHandOffEndsThePump: handing a transport that can be woken to the
// protocol layer ends the ladder's reading goroutine at once, though the
// server says nothing; what comes next is read by the new owner, and what
// the pump kept comes first. A transport that cannot be woken keeps the
// goroutine until its next message, which the new owner still gets.
func TestHandOffEndsThePump(t *testing.T) {
	t.Run("wakeable", func(t *testing.T) {
		tr := &wakeableTransport{queueTransport{q: wire.NewQueue()}}
		defer tr.Close()
		p := newPump(tr, slog.New(slog.DiscardHandler))
		_ = tr.q.Push(context.Background(), 1, ping(7)) // a server request before the hand-off: kept
		waitForEarly(t, p, 1)
		h := p.handOff()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the pump's goroutine still waits in Recv after the hand-off")
		}
		if m, err := h.Recv(); err != nil || m.ID.Raw() != "7" {
			t.Fatalf("first message after the hand-off: %v, %v; want the kept ping 7", m, err)
		}
		_ = tr.q.Push(context.Background(), 1, ping(8))
		if m, err := h.Recv(); err != nil || m.ID.Raw() != "8" {
			t.Fatalf("next message: %v, %v; want ping 8", m, err)
		}
	})
	t.Run("not wakeable", func(t *testing.T) {
		tr := &queueTransport{q: wire.NewQueue()}
		defer tr.Close()
		p := newPump(tr, slog.New(slog.DiscardHandler))
		h := p.handOff()
		select {
		case <-p.done:
			t.Fatal("the pump ended without a message or a wake-up")
		default:
		}
		_ = tr.q.Push(context.Background(), 1, ping(9))
		if m, err := h.Recv(); err != nil || m.ID.Raw() != "9" {
			t.Fatalf("message after the hand-off: %v, %v; want ping 9", m, err)
		}
		<-p.done // it ended with that message
	})
	t.Run("wake-up after the pump's last message", func(t *testing.T) {
		// The pump took a message just as it was handed off, so the
		// wake-up is left for the new owner's first own Recv: it must
		// read on, not stop.
		tr := &wakeableTransport{queueTransport{q: wire.NewQueue()}}
		defer tr.Close()
		p := newPump(tr, slog.New(slog.DiscardHandler))
		h := p.handOff()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the pump's goroutine still waits in Recv after the hand-off")
		}
		tr.q.Interrupt() // as if it came after the pump's Recv returned
		done := make(chan *jsonrpc.Message, 1)
		go func() {
			m, err := h.Recv()
			if err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Recv: %v", err)
			}
			done <- m
		}()
		// The pump's wake-up and this one, both returned by Recv before
		// the message comes.
		deadline := time.Now().Add(5 * time.Second)
		for tr.woken.Load() < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("Recv returned ErrInterrupted %d times, want 2", tr.woken.Load())
			}
			time.Sleep(time.Millisecond)
		}
		_ = tr.q.Push(context.Background(), 1, ping(10))
		if m := <-done; m == nil || m.ID.Raw() != "10" {
			t.Fatalf("Recv after a stray wake-up: %v, want ping 10", m)
		}
	})
}

// waitForEarly waits until the pump keeps n messages for the protocol
// layer.
func waitForEarly(t *testing.T, p *pump, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		got := len(p.early.msgs)
		p.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pump keeps %d messages, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// takingTransport is a wakeable transport that is a jsonrpc.AnswerTaker:
// it records when it is given the take function.
type takingTransport struct {
	wakeableTransport
	given atomic.Bool
}

func (t *takingTransport) TakeAnswers(func(*jsonrpc.Message) bool) { t.given.Store(true) }

// TestHandOffHoldsTakeBack: the protocol layer's take function reaches the
// transport only once Recv reads the transport itself, after the messages
// the ladder kept: a response handed over earlier could overtake them.
func TestHandOffHoldsTakeBack(t *testing.T) {
	tr := &takingTransport{wakeableTransport: wakeableTransport{queueTransport{q: wire.NewQueue()}}}
	defer tr.Close()
	p := newPump(tr, slog.New(slog.DiscardHandler))
	_ = tr.q.Push(context.Background(), 1, note(`{"n":1}`)) // kept by the ladder
	waitForEarly(t, p, 1)
	h := p.handOff()
	jsonrpc.TakeAnswers(h, func(*jsonrpc.Message) bool { return true })
	if tr.given.Load() {
		t.Fatal("take reached the transport before the kept message was received")
	}
	if m, err := h.Recv(); err != nil || m.Method != "notifications/message" {
		t.Fatalf("first message: %v, %v; want the kept notification", m, err)
	}
	if tr.given.Load() {
		t.Fatal("take reached the transport before the kept message was handled")
	}
	got := make(chan *jsonrpc.Message, 1)
	go func() { m, _ := h.Recv(); got <- m }() // reads the transport itself now
	deadline := time.Now().Add(5 * time.Second)
	for !tr.given.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !tr.given.Load() {
		t.Fatal("take never reached the transport")
	}
	_ = tr.q.Push(context.Background(), 1, ping(3))
	if m := <-got; m == nil || m.ID.Raw() != "3" {
		t.Fatalf("next message: %v, want ping 3", m)
	}
}
