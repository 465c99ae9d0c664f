package interop_test

import (
	"context"
	"fmt"
	"time"
)

// What the Go peer servers offer, the same tools under both SDKs:
//
//   - echo {text}: answers text.
//   - progress {steps}: sends one notifications/progress a step (1..steps of
//     total steps), then answers "done".
//   - slow {}: sends one notifications/progress ("started"), then waits for
//     its cancellation, records it in cancels and returns the context's
//     error; after slowLimit it answers "finished" instead.
const (
	echoTool     = "echo"
	progressTool = "progress"
	slowTool     = "slow"
	slowLimit    = time.Minute
)

// cancelProbe is how a Go peer server tells the test that a slow call's
// handler saw its context cancelled.
type cancelProbe chan struct{}

func newCancelProbe() cancelProbe { return make(cancelProbe, 8) }

// cancelled records one cancellation without ever blocking the handler.
func (p cancelProbe) cancelled() {
	select {
	case p <- struct{}{}:
	default:
	}
}

// runSlow is the body of the slow tool under either SDK: notify says it
// started (as a progress notification); then it waits.
func runSlow(ctx context.Context, probe cancelProbe, notify func() error) error {
	if err := notify(); err != nil {
		return fmt.Errorf("slow: progress: %w", err)
	}
	select {
	case <-ctx.Done():
		probe.cancelled()
		return ctx.Err()
	case <-time.After(slowLimit):
		return nil
	}
}
