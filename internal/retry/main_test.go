package retry

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: a
// wait that outlived its request, a connection nobody closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
