package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Open, like Dial, bounds a handshake its caller did not bound by the
// request timeout: a server that never answers fails Open instead of
// hanging it, and its transport is closed.
func TestOpenBoundedByRequestTimeout(t *testing.T) {
	st := newSilentTransport()
	res := make(chan error, 1)
	go func() {
		c, err := Open(context.Background(), st, WithDefaultTimeout(50*time.Millisecond))
		if err == nil {
			c.Close()
		}
		res <- err
	}()
	select {
	case err := <-res:
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want the handshake's deadline, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open waits on a silent server without end")
	}
	select {
	case <-st.closed:
	default:
		t.Error("the transport of a failed Open is left open")
	}
}
