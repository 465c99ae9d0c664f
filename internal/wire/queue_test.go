package wire

import (
	"errors"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

func msg(n int64) *jsonrpc.Message { return &jsonrpc.Message{ID: jsonrpc.Int(n), Method: "x"} }

func TestQueueOrderEndAndClose(t *testing.T) {
	q := NewQueue()
	for i := range int64(1000) {
		if !q.Push(msg(i)) {
			t.Fatal("push refused")
		}
		if i%3 == 0 { // consume while producing, so compaction runs
			if m, err := q.Pop(); err != nil || m == nil {
				t.Fatal(err)
			}
		}
	}
	var last int64 = -1
	errEnd := errors.New("end")
	q.End(errEnd)
	if q.Push(msg(1)) {
		t.Error("push after End accepted")
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
	q2.Push(msg(1), msg(2))
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
	q.Push(msg(7))
	if m := <-got; m.ID.Raw() != "7" {
		t.Errorf("got %v", m.ID)
	}
}

func TestQueuePushErrInOrder(t *testing.T) {
	q := NewQueue()
	lost := errors.New("session lost")
	q.Push(msg(1))
	q.PushErr(lost)
	q.Push(msg(2))
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
