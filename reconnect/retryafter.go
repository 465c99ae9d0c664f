package reconnect

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads a Retry-After header value: delta-seconds, or an
// HTTP date in any of the three forms HTTP allows (IMF-fixdate, RFC 850,
// asctime). A date in the past means zero. ok is false when v is neither.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseUint(v, 10, 63)
		if err != nil {
			// All digits but too big to count in seconds: a very long wait.
			if allDigits(v) {
				return time.Duration(1<<63 - 1), true
			}
			return 0, false
		}
		if n > uint64((1<<63-1)/int64(time.Second)) {
			return time.Duration(1<<63 - 1), true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v) // IMF-fixdate, RFC 850, asctime
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// RetryAfterError is a 429 or 503 whose wait was not (fully) waited: the
// server asked for longer than the cap, or longer than the caller's
// context allowed. The request was not run by the server.
type RetryAfterError struct {
	Status int           // 429 or 503
	Wait   time.Duration // what the server asked for (0 when it gave no Retry-After)
	Cap    time.Duration // the cap in force
	Reason string        // "over the cap" or the context's error
	Err    error         // the HTTP error
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("server answered %d and asked to retry after %v (%s, cap %v): %v", e.Status, e.Wait, e.Reason, e.Cap, e.Err)
}

func (e *RetryAfterError) Unwrap() error { return e.Err }

// Throttled decides what to do with a 429 or 503 answer: wait and return
// nil (the caller then sends again), or return a *RetryAfterError when the
// server's wait is over the cap or past ctx's deadline, or when the
// policy's attempts ran out. A 503 without Retry-After waits as b says.
func Throttled(ctx context.Context, b *Backoff, resp *http.Response, httpErr error) error {
	p := b.Policy()
	wait, has := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	if !has {
		var ok bool
		if wait, ok = b.Next(); !ok {
			return &RetryAfterError{Status: resp.StatusCode, Cap: p.MaxRetryAfter, Reason: "retries without progress used up", Err: httpErr}
		}
	} else if b.attempts++; p.MaxAttempts > 0 && b.attempts > p.MaxAttempts {
		return &RetryAfterError{Status: resp.StatusCode, Wait: wait, Cap: p.MaxRetryAfter, Reason: "retries without progress used up", Err: httpErr}
	}
	if wait > p.MaxRetryAfter {
		return &RetryAfterError{Status: resp.StatusCode, Wait: wait, Cap: p.MaxRetryAfter, Reason: "over the cap", Err: httpErr}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return &RetryAfterError{Status: resp.StatusCode, Wait: wait, Cap: p.MaxRetryAfter, Reason: "past the caller's deadline", Err: httpErr}
	}
	if err := Sleep(ctx, wait); err != nil {
		return &RetryAfterError{Status: resp.StatusCode, Wait: wait, Cap: p.MaxRetryAfter, Reason: err.Error(), Err: httpErr}
	}
	return nil
}

// IsThrottle reports whether status asks the client to come back later
// without having run the request: 429 Too Many Requests, 503 Service
// Unavailable.
func IsThrottle(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// Sleep waits d, or until ctx is done (returning its error).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
