package retry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anymcp/anymcp/reconnect"
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

// Reasons a *reconnect.RetryAfterError gives besides the policy's own.
const (
	reasonOverCap  = "over the cap"
	reasonDeadline = "would end past the caller's deadline"
)

// Throttled decides what to do with a 429 or 503 answer: wait and return
// nil (the caller then sends again), or return a *reconnect.RetryAfterError when the
// server's wait is over the cap or past ctx's deadline, when ctx ends
// during the wait, or when the policy's attempts or budget ran out. A
// Retry-After counts as one of b's attempts; without one, b says how long
// to wait. httpErr becomes the error's Err. For a single request, Retrying
// does all of this.
func Throttled(ctx context.Context, b *Backoff, resp *http.Response, httpErr error) error {
	wait, e := b.throttle(ctx, resp)
	if e != nil {
		e.Err = httpErr
		return e
	}
	if e := b.await(ctx, resp.StatusCode, wait, httpErr); e != nil {
		return e
	}
	return nil
}

// throttle decides how long to wait after a 429 or 503, or why not to.
func (b *Backoff) throttle(ctx context.Context, resp *http.Response) (time.Duration, *reconnect.RetryAfterError) {
	now := b.now()
	given, has := ParseRetryAfter(resp.Header.Get("Retry-After"), now)
	e := &reconnect.RetryAfterError{Status: resp.StatusCode, Wait: given, Cap: b.p.MaxRetryAfter}
	if has && given > b.p.MaxRetryAfter {
		e.Reason = reasonOverCap
		return 0, e
	}
	if !has {
		given = -1
	}
	wait, why := b.step(now, given)
	if !has {
		e.Wait = wait // the server's wait stands, even when the policy gives up first
	}
	if why != "" {
		e.Reason = why
		return 0, e
	}
	if dl, ok := ctx.Deadline(); ok && dl.Sub(now) < wait {
		e.Reason = reasonDeadline
		return 0, e
	}
	return wait, nil
}

// await sleeps wait, or reports the context's end as a
// *reconnect.RetryAfterError.
func (b *Backoff) await(ctx context.Context, status int, wait time.Duration, httpErr error) *reconnect.RetryAfterError {
	if err := Sleep(ctx, wait); err != nil {
		return &reconnect.RetryAfterError{Status: status, Wait: wait, Cap: b.p.MaxRetryAfter, Reason: err.Error(), Err: httpErr, CtxErr: err}
	}
	return nil
}

// IsThrottle reports whether status asks the client to come back later:
// 429 Too Many Requests, 503 Service Unavailable. A 429 says the server did
// not run the request; a 503 says so only with Retry-After (one without it
// may be a gateway's, after the server ran the request).
func IsThrottle(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// Sleep waits d, or until ctx is done (returning its error). A ctx done
// already returns its error at once, however short d.
func Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
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
