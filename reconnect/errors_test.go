package reconnect

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

func TestRetryAfterError(t *testing.T) {
	httpErr := errors.New("POST http://x → 429")
	e := &RetryAfterError{Status: 429, Wait: time.Hour, Cap: time.Minute, Reason: "over the cap", Err: httpErr}
	for _, part := range []string{"429", "1h0m0s", "over the cap", "cap 1m0s", httpErr.Error()} {
		if !strings.Contains(e.Error(), part) {
			t.Errorf("Error() = %q, lacks %q", e.Error(), part)
		}
	}
	if !errors.Is(e, httpErr) || errors.Is(e, context.Canceled) {
		t.Error("wraps the HTTP error and nothing else")
	}
	e.CtxErr = context.Canceled
	if !errors.Is(e, httpErr) || !errors.Is(e, context.Canceled) {
		t.Error("does not wrap both the HTTP error and the context's")
	}
}

// MayHaveRun, exported as TimeoutError's is, is what errors.Is reads to
// match jsonrpc.ErrOutcomeUnknown, on both errors.
func TestMayHaveRun(t *testing.T) {
	for _, may := range []bool{false, true} {
		ra := &RetryAfterError{Status: 503, Err: errors.New("503"), MayHaveRun: may}
		rr := &ResendRefusedError{Err: errors.New("session gone"), MayHaveRun: may}
		if errors.Is(ra, jsonrpc.ErrOutcomeUnknown) != may || errors.Is(rr, jsonrpc.ErrOutcomeUnknown) != may {
			t.Errorf("MayHaveRun %v: RetryAfterError matches %v, ResendRefusedError %v", may,
				errors.Is(ra, jsonrpc.ErrOutcomeUnknown), errors.Is(rr, jsonrpc.ErrOutcomeUnknown))
		}
	}
}
