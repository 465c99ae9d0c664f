package modern

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestShutdownBoundsTheDELETE: a server whose DELETE blocks (as one that
// ends the session only after its running tools) holds Shutdown only
// until the context is done, however long CloseTimeout is; with a context
// done from the start, no DELETE is sent at all.
func TestShutdownBoundsTheDELETE(t *testing.T) {
	deleted := make(chan struct{}, 2)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodDelete {
			deleted <- struct{}{}
			<-r.Context().Done()
			return
		}
		mcp("s-slow")(w, r, body)
	})

	tr, ch := dial(t, s, Options{CloseTimeout: time.Minute})
	handshake(t, tr, ch)
	const bound = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	start := time.Now()
	err := tr.Shutdown(ctx)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want a deadline error", err)
	}
	if took < bound || took > bound+2*time.Second {
		t.Errorf("Shutdown took %v, want about %v", took, bound)
	}
	select {
	case <-deleted:
	default:
		t.Error("no DELETE was sent")
	}
	if err2 := tr.Close(); err2 != err {
		t.Errorf("Close after Shutdown = %v, want %v", err2, err)
	}

	tr, ch = dial(t, s, Options{CloseTimeout: time.Minute})
	handshake(t, tr, ch)
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if err := tr.Shutdown(done); err != nil {
		t.Errorf("Shutdown with a done context = %v, want nil (nothing was tried)", err)
	}
	if n := s.Count(http.MethodDelete); n != 1 {
		t.Errorf("%d DELETE requests in all, want 1: none for a done context", n)
	}
}
