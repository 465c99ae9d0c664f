package reconnect

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
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
	e.ctxErr = context.Canceled
	if !errors.Is(e, httpErr) || !errors.Is(e, context.Canceled) {
		t.Error("does not wrap both the HTTP error and the context's")
	}
}
