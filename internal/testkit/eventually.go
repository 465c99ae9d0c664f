package testkit

import (
	"testing"
	"time"
)

// Eventually polls cond until it holds, failing t when it still does not
// after within. what names the condition in the failure.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(within, cond) {
		t.Fatal("timed out waiting for", what)
	}
}

// Poll calls cond every 2ms until it holds or within has passed, and
// reports whether it held. It is the tests' one poll, for what no event
// tells: another process's files, a count that only changes. Unlike
// Eventually it needs no t, so a handler or a goroutine may call it.
func Poll(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		// The poll's interval, not an ordering sleep: the deadline
		// bounds the wait, and cond is checked again after each pause.
		time.Sleep(2 * time.Millisecond)
	}
	return true
}
