package testkit

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// BlockedIn waits until, for each of funcs, a goroutine is blocked (on
// a channel receive, a select, or the network) with that function on its
// stack, and fails t when one is not after within. Each of funcs is a
// name as in a stack trace, its package's last element first:
// "legacy.(*Transport).session", "net.(*conn).Write". A test calls it to
// know that the calls it started wait where it means to end them, which
// no event tells.
func BlockedIn(t testing.TB, within time.Duration, funcs ...string) {
	t.Helper()
	Eventually(t, within, "goroutines blocked in "+strings.Join(funcs, ", "), func() bool {
		buf := make([]byte, 1<<20)
		for {
			n := runtime.Stack(buf, true)
			if n < len(buf) {
				buf = buf[:n]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		stacks := strings.Split(string(buf), "\n\n")
		for _, f := range funcs {
			if !slices.ContainsFunc(stacks, func(g string) bool {
				head, _, _ := strings.Cut(g, "\n")
				blocked := strings.Contains(head, "[select") || strings.Contains(head, "[chan receive") ||
					strings.Contains(head, "[IO wait")
				return blocked && (strings.Contains(g, "/"+f+"(") || strings.Contains(g, "\n"+f+"("))
			}) {
				return false
			}
		}
		return true
	})
}
