package retry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/reconnect"
)

// Retrying returns a go-retryablehttp client, retrying as p says, over base (nil means
// http.DefaultClient) that sends a request again only when the server
// provably did not run it: after a 429 or a 503 with Retry-After (the wait
// honoured within the policy's caps), a connection refused before anything
// was sent, or a 503 without Retry-After to a request marked
// WithResendable. Anything else comes back as is, so a tools/call is never
// run twice by a retry. A wait not taken is a *reconnect.RetryAfterError. The client
// has the library's redirect policy and logs each retry on logger (nil
// means none); build requests with retryablehttp.NewRequestWithContext and
// a []byte body, and replace none of its hooks. The rules in full:
// docs/transports.md.
func Retrying(p reconnect.Policy, base *http.Client, logger *slog.Logger) *retryablehttp.Client {
	p = Fill(p)
	base = origin.Guard(base)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &retrier{p: p, log: logger}
	retryMax := p.MaxAttempts
	if retryMax < 0 {
		retryMax = math.MaxInt
	}
	return &retryablehttp.Client{
		HTTPClient:     base,
		Logger:         nil, // the retries are logged here, at Info
		RetryWaitMin:   p.InitialDelay,
		RetryWaitMax:   p.MaxDelay,
		RetryMax:       retryMax,
		RequestLogHook: r.begin,
		CheckRetry:     r.check,
		Backoff:        waited,
		ErrorHandler:   giveUp,
		PrepareRetry:   beforeResend,
	}
}

// beforeResend is the PrepareRetry: it runs the request's BeforeResend
// function on headers of the attempt's own (go-retryablehttp makes a
// shallow copy of the request, whose header map the attempt before
// shares). A refusal comes back as a *reconnect.ResendRefusedError that tells
// whether an earlier answer left open that the server ran the request.
func beforeResend(req *http.Request) error {
	f, _ := req.Context().Value(resendKey{}).(func(*http.Request) error)
	if f == nil {
		return nil
	}
	req.Header = req.Header.Clone()
	if err := f(req); err != nil {
		st, _ := req.Context().Value(runKey{}).(*run)
		return &reconnect.ResendRefusedError{Err: err, MayHaveRun: st == nil || st.mayHaveRun}
	}
	return nil
}

// retrier holds what every Do of one Retrying client shares.
type retrier struct {
	p   reconnect.Policy
	log *slog.Logger
}

// run is one Do: its request and, from its first failure on, its run of
// the policy. It travels in the request's context, from begin to check.
type run struct {
	req *http.Request
	b   *Backoff
	// mayHaveRun: an answer so far was a 503 without Retry-After (sent
	// again only for a request marked WithResendable), which a gateway
	// may give after the server ran the request.
	mayHaveRun bool
}

type runKey struct{}

// begin is the RequestLogHook: before the first attempt it puts a new
// run in the request's context, where CheckRetry finds it. The request
// has not been sent yet, and every retry copies it, context and all.
func (r *retrier) begin(_ retryablehttp.Logger, req *http.Request, attempt int) {
	if attempt == 0 {
		*req = *req.WithContext(context.WithValue(req.Context(), runKey{}, &run{req: req}))
	}
}

// check is the CheckRetry. It returns true only for a 429, a 503 or a
// refused connection, after waiting; the wait is here rather than in
// go-retryablehttp, so that a context ending during it still yields a
// typed error.
func (r *retrier) check(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st, _ := ctx.Value(runKey{}).(*run)
	if st == nil { // no run: the hook was replaced; retry nothing
		return false, nil
	}
	if err != nil {
		if !refused(err) || ctx.Value(firstContactKey{}) != nil {
			return false, nil
		}
		return r.retryRefused(ctx, st, err)
	}
	if !mayResend(ctx, resp) {
		return false, nil
	}
	herr := wire.NewHTTPError(resp, st.req.Method, origin.Redact(st.req.URL))
	wire.Drain(resp.Body)
	resp.Body.Close()
	st.mayHaveRun = st.mayHaveRun || !saysNotRun(resp)
	b := st.backoff(r.p)
	wait, rerr := b.throttle(ctx, resp)
	if rerr != nil {
		rerr.Err, rerr.MayHaveRun = herr, st.mayHaveRun
		return false, rerr
	}
	reason := "server busy, backing off"
	if resp.Header.Get("Retry-After") != "" {
		reason = "server asked to retry after"
	}
	r.logRetry(ctx, st, reason, resp.StatusCode, wait, b.Attempts())
	if rerr := b.await(ctx, resp.StatusCode, wait, herr); rerr != nil {
		rerr.MayHaveRun = st.mayHaveRun
		return false, rerr
	}
	return true, nil
}

// saysNotRun reports whether a 429 or 503 says the server did not run the
// request: a 429 always does; a 503 when it carries Retry-After. A 503
// without one may be a gateway's answer after the server ran it (an
// upstream that reset the connection before its answer).
func saysNotRun(resp *http.Response) bool {
	return resp.StatusCode == http.StatusTooManyRequests || resp.Header.Get("Retry-After") != ""
}

// mayResend reports whether a Retrying client sends again the request of
// ctx after resp: a 429 or a 503 with Retry-After; a 503 without one only
// when ctx is marked WithResendable and its function says yes. A first
// contact (FirstContact) waits only when the server says how long.
func mayResend(ctx context.Context, resp *http.Response) bool {
	switch {
	case !IsThrottle(resp.StatusCode):
		return false
	case resp.Header.Get("Retry-After") != "":
		return true
	case ctx.Value(firstContactKey{}) != nil:
		return false
	case resp.StatusCode == http.StatusTooManyRequests:
		return true
	}
	r, _ := ctx.Value(resendableKey{}).(*resendable)
	if r == nil {
		return false
	}
	r.once.Do(func() { r.yes = r.ok() })
	return r.yes
}

// retryRefused waits the backoff after a refused connection, or returns
// false (the dial error then goes to the caller as is) when the policy
// gives up or the wait would end past the deadline.
func (r *retrier) retryRefused(ctx context.Context, st *run, dialErr error) (bool, error) {
	b := st.backoff(r.p)
	wait, ok := b.Next()
	if !ok {
		return false, nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return false, nil
	}
	r.logRetry(ctx, st, "connection refused", 0, wait, b.Attempts())
	if err := Sleep(ctx, wait); err != nil {
		return false, fmt.Errorf("%w (the wait to retry ended: %w)", origin.RedactError(dialErr), err)
	}
	return true, nil
}

func (st *run) backoff(p reconnect.Policy) *Backoff {
	if st.b == nil {
		st.b = Start(p)
	}
	return st.b
}

func (r *retrier) logRetry(ctx context.Context, st *run, reason string, status int, wait time.Duration, attempt int) {
	notifyRetry(ctx, status, wait)
	r.log.LogAttrs(ctx, slog.LevelInfo, "reconnect: retrying request",
		slog.String("method", st.req.Method),
		slog.String("url", origin.Redact(st.req.URL)),
		slog.String("reason", reason),
		slog.Int("status", status),
		slog.Duration("wait", wait),
		slog.Int("attempt", attempt))
}

// waited is the Backoff: check has already waited.
func waited(_, _ time.Duration, _ int, _ *http.Response) time.Duration { return 0 }

// giveUp is the ErrorHandler: the error as check or the transport gave
// it, its URL redacted (origin.RedactError), no response.
// (go-retryablehttp's default one drops the status.)
func giveUp(resp *http.Response, err error, attempts int) (*http.Response, error) {
	if resp != nil {
		resp.Body.Close()
	}
	if err == nil { // RetryMax reached while check still asked to retry
		err = fmt.Errorf("gave up resending after %d attempts", attempts)
	}
	return nil, origin.RedactError(err)
}

// refused reports whether err is a connection refused while dialing: the
// request was never sent.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && errors.Is(op.Err, syscall.ECONNREFUSED)
}
