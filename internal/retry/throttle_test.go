package retry

import (
	"github.com/anymcp/anymcp/reconnect"

	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(1994, time.November, 6, 8, 49, 0, 0, time.UTC)
	const forever = time.Duration(1<<63 - 1)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 120 * time.Second, true},
		{"0", 0, true},
		{"1", time.Second, true},
		{"007", 7 * time.Second, true},
		{" 5 ", 5 * time.Second, true},
		{"\t30\r\n", 30 * time.Second, true},
		{"9223372036", 9223372036 * time.Second, true},
		{"9223372037", forever, true},
		{"99999999999999999999999999", forever, true},
		{"Sun, 06 Nov 1994 08:49:37 GMT", 37 * time.Second, true},     // IMF-fixdate
		{"Sunday, 06-Nov-94 08:49:37 GMT", 37 * time.Second, true},    // RFC 850
		{"Sun Nov  6 08:49:37 1994", 37 * time.Second, true},          // asctime
		{"  Sun, 06 Nov 1994 08:50:00 GMT\t", 60 * time.Second, true}, // white space around
		{"Sun, 06 Nov 1994 08:49:00 GMT", 0, true},                    // now
		{"Sun, 06 Nov 1994 08:00:00 GMT", 0, true},                    // past
		{"Sunday, 06-Nov-94 07:49:37 GMT", 0, true},                   // past, RFC 850
		{"Thu Jan  1 00:00:00 1970", 0, true},                         // past, asctime
		{"Mon, 07 Nov 1994 08:49:00 GMT", 24 * time.Hour, true},       // a day ahead
		{"", 0, false},
		{"   ", 0, false},
		{"soon", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"12abc", 0, false},
		{"5 s", 0, false},
		{"0x10", 0, false},
		{"Sun, 06 Nov 1994 08:49:37", 0, false},     // no zone
		{"2026-01-02T03:04:05Z", 0, false},          // RFC 3339 is not an HTTP date
		{"Sun, 32 Nov 1994 08:49:37 GMT", 0, false}, // no such day
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseRetryAfter(tt.in, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseRetryAfter(%q) = (%v, %v), want (%v, %v)", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestIsThrottle(t *testing.T) {
	for code := 100; code < 600; code++ {
		if want := code == 429 || code == 503; IsThrottle(code) != want {
			t.Errorf("IsThrottle(%d) = %v", code, !want)
		}
	}
}

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if err := Sleep(context.Background(), time.Millisecond); err != nil {
			t.Errorf("Sleep = %v", err)
		}
		if err := Sleep(context.Background(), 0); err != nil {
			t.Errorf("Sleep(0) = %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep(0) on a done context = %v", err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		began := time.Now()
		if err := Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Sleep past the deadline = %v", err)
		}
		if d := time.Since(began); d != 10*time.Millisecond {
			t.Errorf("Sleep took %v, want the context's 10ms", d)
		}
		began = time.Now()
		if err := Sleep(context.Background(), time.Minute); err != nil || time.Since(began) != time.Minute {
			t.Errorf("Sleep(1m) = %v after %v, want nil after 1m", err, time.Since(began))
		}
	})
}

// TestSleepDoneContext: a context already done ends a wait at once,
// however short the wait: a timer that has fired by then does not win.
// (A server's "retry: 0" is a wait of 1ns; Throttled after it must not
// say "send again" to a caller that has given up.)
func TestSleepDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 1000 {
		if err := Sleep(ctx, time.Nanosecond); !errors.Is(err, context.Canceled) {
			t.Fatalf("try %d: Sleep(1ns) on a done context = %v", i, err)
		}
	}
	throttled := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
	for i := range 1000 {
		b := Start(reconnect.Policy{MaxAttempts: -1, Budget: -1})
		b.ServerRetry(0)
		if err := Throttled(ctx, b, throttled, errors.New("429")); !errors.Is(err, context.Canceled) {
			t.Fatalf("try %d: Throttled on a done context = %v, want a *reconnect.RetryAfterError matching context.Canceled", i, err)
		}
	}
}

func TestThrottled(t *testing.T) {
	const ms = time.Millisecond
	fast := reconnect.Policy{InitialDelay: 5 * ms, MaxDelay: 20 * ms, Jitter: -1, MaxAttempts: 3, MaxRetryAfter: time.Second}
	answer := func(status int, retryAfter string) *http.Response {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		return &http.Response{StatusCode: status, Header: h}
	}
	tests := []struct {
		name     string
		resp     *http.Response
		before   int // failures already recorded
		timeout  time.Duration
		cancel   bool
		wantWait time.Duration
		wantTook time.Duration // how long Throttled waited
		reason   string        // "" = waited, nil error
		ctxErr   error
	}{
		{name: "Retry-After 0", resp: answer(429, "0")},
		{name: "503 without Retry-After waits the backoff", resp: answer(503, ""), wantTook: 5 * ms},
		{name: "over the cap", resp: answer(429, "3600"), wantWait: time.Hour, reason: reasonOverCap},
		{name: "past the deadline", resp: answer(503, "1"), timeout: 500 * ms, wantWait: time.Second, reason: reasonDeadline},
		{name: "backoff past the deadline", resp: answer(503, ""), timeout: ms, wantWait: 5 * ms, reason: reasonDeadline},
		{name: "attempts used up", resp: answer(429, "0"), before: 3, reason: reasonAttempts},
		{name: "attempts used up, the server asking for a wait", resp: answer(429, "1"), before: 3, wantWait: time.Second, reason: reasonAttempts},
		{name: "attempts used up without Retry-After", resp: answer(503, ""), before: 3, reason: reasonAttempts},
		{name: "cancelled during the wait", resp: answer(429, "1"), cancel: true, wantWait: time.Second, wantTook: 20 * ms, reason: context.Canceled.Error(), ctxErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.timeout > 0 {
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				if tt.cancel {
					time.AfterFunc(20*ms, cancel)
				}
				b := Start(fast)
				for range tt.before {
					b.Next()
				}
				httpErr := fmt.Errorf("HTTP %d", tt.resp.StatusCode)
				began := time.Now()
				err := Throttled(ctx, b, tt.resp, httpErr)
				if took := time.Since(began); took != tt.wantTook {
					t.Errorf("took %v, want %v", took, tt.wantTook)
				}
				if tt.reason == "" {
					if err != nil {
						t.Fatalf("Throttled = %v, want a wait then nil", err)
					}
					return
				}
				var rae *reconnect.RetryAfterError
				if !errors.As(err, &rae) {
					t.Fatalf("Throttled = %v, want a *reconnect.RetryAfterError", err)
				}
				got := reconnect.RetryAfterError{Status: rae.Status, Wait: rae.Wait, Cap: rae.Cap, Reason: rae.Reason, Err: rae.Err}
				want := reconnect.RetryAfterError{Status: tt.resp.StatusCode, Wait: tt.wantWait, Cap: time.Second, Reason: tt.reason, Err: httpErr}
				if got != want {
					t.Errorf("got  %+v\nwant %+v", got, want)
				}
				if (tt.ctxErr != nil) != errors.Is(err, context.Canceled) {
					t.Errorf("errors.Is(err, context.Canceled) = %v, want %v", !(tt.ctxErr != nil), tt.ctxErr != nil)
				}
			})
		})
	}
}
