package interop_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/anymcp/anymcp/client"
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
// handler saw its context cancelled; stop ends the slow calls still
// running (a failed cancellation) when the test ends, so that the server
// can close.
type cancelProbe struct {
	seen chan struct{}
	quit chan struct{}
	once sync.Once
}

func newCancelProbe() *cancelProbe {
	return &cancelProbe{seen: make(chan struct{}, 8), quit: make(chan struct{})}
}

// cancelled records one cancellation without ever blocking the handler.
func (p *cancelProbe) cancelled() {
	select {
	case p.seen <- struct{}{}:
	default:
	}
}

func (p *cancelProbe) stop() { p.once.Do(func() { close(p.quit) }) }

// wait waits until a slow call saw its cancellation, or ctx ends.
func (p *cancelProbe) wait(ctx context.Context, _ *client.Conn) error {
	select {
	case <-p.seen:
		return nil
	case <-ctx.Done():
		return errors.New("the server's handler never saw the cancellation")
	}
}

// runSlow is the body of the slow tool under either SDK: notify says it
// started (as a progress notification); then it waits.
func runSlow(ctx context.Context, probe *cancelProbe, notify func() error) error {
	if err := notify(); err != nil {
		return fmt.Errorf("slow: progress: %w", err)
	}
	select {
	case <-ctx.Done():
		probe.cancelled()
		return ctx.Err()
	case <-probe.quit:
		return errors.New("slow: the test ended")
	case <-time.After(slowLimit):
		return nil
	}
}
