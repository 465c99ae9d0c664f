package testkit

import (
	"testing"
	"time"
)

// Eventually polls cond until it holds, failing t when it still does not
// after within. what names the condition in the failure.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
