package legacy

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
)

// TestCloseDuringSend: Close cancels a POST in flight, whose Send then
// reports ErrClosed; the stream is closed and Recv reports ErrClosed.
func TestCloseDuringSend(t *testing.T) {
	s := newSSEServer(t)
	s.post = s.stallOn("tools/call")
	tr, loop := dial(t, s.URL+"/sse", Options{})
	sent := make(chan error, 1)
	go func() { sent <- sendErr(tr, request(1, "tools/call")) }()
	testkit.Eventually(t, wait, "the POST", func() bool { return s.Count(http.MethodPost) == 1 })

	start := time.Now()
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	select {
	case err := <-sent:
		if !errors.Is(err, jsonrpc.ErrClosed) {
			t.Errorf("Send = %v, want ErrClosed", err)
		}
	case <-time.After(wait):
		t.Fatal("Send still waiting after Close")
	}
	if err := loop.ended(t); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Recv = %v, want ErrClosed", err)
	}
	closed(t, "the GET stream to close", s.gone)
	if err := tr.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestCloseConcurrent: Close may be called from many goroutines at once,
// while Recv and Send are under way; every call returns.
func TestCloseConcurrent(t *testing.T) {
	s := newSSEServer(t)
	tr, loop := dial(t, s.URL+"/sse", Options{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { sendErr(tr, request(int64(i), "ping")) })
		wg.Go(func() {
			if err := tr.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for {
		select {
		case <-loop.msgs: // an answer that came before Close
			continue
		case err := <-loop.end:
			if !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Recv = %v, want ErrClosed", err)
			}
		case <-time.After(wait):
			t.Fatal("Recv did not end")
		}
		break
	}
}

// TestSendAfterClose: nothing is sent once the transport is closed.
func TestSendAfterClose(t *testing.T) {
	s := newSSEServer(t)
	tr, _ := dial(t, s.URL+"/sse", Options{})
	tr.Close()
	if err := sendErr(tr, notification("notifications/initialized")); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Send = %v, want ErrClosed", err)
	}
	if n := s.Count(http.MethodPost); n != 0 {
		t.Errorf("%d POSTs after Close", n)
	}
}

// TestCloseDropsQueued: after Close, Recv reports ErrClosed at once, even
// with messages still queued.
func TestCloseDropsQueued(t *testing.T) {
	s := newSSEServer(t)
	s.onGET = func(send func(string)) { send(messageEvent(note("notifications/pending"))) }
	tr, err := Dial(t.Context(), s.URL+"/sse", Options{})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, wait, "the message to be queued", func() bool {
		return tr.queue.Len() == 1
	})
	tr.Close()
	if m, err := tr.Recv(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Recv = %v, %v; want ErrClosed", m, err)
	}
}
