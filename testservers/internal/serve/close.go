package serve

import "time"

// CloseGrace is how long a test server's Close lets sessions and handlers
// end by themselves before cutting the client connections.
const CloseGrace = 500 * time.Millisecond

// Within runs f; if it takes longer than d, it calls unstick and keeps
// waiting for f.
func Within(f func(), d time.Duration, unstick func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		unstick()
		<-done
	}
}
