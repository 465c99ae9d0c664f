package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// TestIdleWatch checks the idle timeout on a fake clock: a request in
// flight holds it off however long it runs, each request's end restarts
// it, and the status page is not a request.
func TestIdleWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newIdleWatch(time.Second)
		defer w.stop()
		expired := func() bool {
			synctest.Wait()
			select {
			case <-w.expired:
				return true
			default:
				return false
			}
		}
		w.begin()
		time.Sleep(5 * time.Second)
		if expired() {
			t.Fatal("expired with a request in flight")
		}
		if st := w.status(); st.InFlight != 1 || st.IdleMs != 0 {
			t.Errorf("status in flight: %+v", st)
		}
		w.end()
		time.Sleep(900 * time.Millisecond)
		if expired() {
			t.Fatal("expired 0.9 s after a request ended, with a 1 s timeout")
		}
		// A request through the handler restarts the clock; the status
		// page does not.
		h := w.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
		time.Sleep(900 * time.Millisecond)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, sessionStatusPath, nil))
		if expired() {
			t.Fatal("expired 0.9 s after a request, with a 1 s timeout")
		}
		if st := w.status(); st.IdleMs != 900 {
			t.Errorf("idle %d ms, want 900 (the status page is no request)", st.IdleMs)
		}
		time.Sleep(100 * time.Millisecond)
		if !expired() {
			t.Fatal("not expired 1 s after the last request")
		}
	})
}
