package legacy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/sse"
)

// endpointWait bounds one reconnection attempt, from the GET to the
// endpoint event: a server that accepts the GET but never names an
// endpoint costs an attempt, not the life of the transport.
const endpointWait = 30 * time.Second

var errEndpointWait = fmt.Errorf("no endpoint event within %v", endpointWait)

// drop ends session s after its stream was lost (lost wraps
// ErrConnectionLost and cause): from now on Send refuses everything but an
// initialize request, which waits for the next session; a POST in flight
// on s is cancelled (its Send reports ErrOutcomeUnknown); Recv gets a
// *jsonrpc.SessionLostError after the messages already queued. It reports
// false when the transport was closed meanwhile.
func (t *Transport) drop(s *session, cause, lost error) bool {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false
	}
	t.sess = nil
	t.ready = make(chan struct{})
	t.mu.Unlock()
	s.cancel(lost)
	t.log.Warn("legacy: the SSE stream was lost; reconnecting", "url", t.sseURL, "err", cause)
	t.queue.PushErr(&jsonrpc.SessionLostError{Cause: fmt.Errorf("HTTP+SSE: %w", lost)})
	return true
}

// redial opens the stream again, waiting before each attempt as the
// backoff says, until a new stream announces a usable endpoint. The backoff
// starts over only after a useful session (one that delivered a message,
// or lasted usefulSession), and the server's retry: field sets the first
// wait only then: a server that gives an endpoint and closes at once, with
// retry: 0, gets a growing wait and the policy's limits, not a hot loop. It returns the error that ends
// the transport when the policy gives up, when the server refuses in a way
// that will not change (see terminal), or when Close ends the wait.
func (t *Transport) redial(lost error, useful bool) (*sse.Reader, io.ReadCloser, *session, error) {
	t.mu.Lock()
	cur := t.cursor
	t.mu.Unlock()
	if useful {
		t.backoff.Progress()
	}
	if cur.hasRetry && t.backoff.Attempts() == 0 {
		t.backoff.ServerRetry(cur.retry)
	}
	last := lost // what the last attempt failed with
	var asked time.Duration
	for n := 1; ; n++ {
		wait, ok := t.backoff.Next()
		if !ok {
			p := t.backoff.Policy()
			return nil, nil, nil, fmt.Errorf("GET %s: reconnection exhausted after %d attempts without progress (policy: %s attempts, %s budget): %w (last: %w)",
				t.sseURL, t.backoff.Attempts()-1, limit(p.MaxAttempts), limit(p.Budget), ErrConnectionLost, last)
		}
		if asked > 0 {
			// The last attempt was a 429 or 503 with Retry-After: the
			// server's wait replaces the backoff's, within the cap.
			if max := t.backoff.Policy().MaxRetryAfter; asked > max {
				return nil, nil, nil, fmt.Errorf("GET %s: reconnection given up after %d attempts: the server asked to wait %v, more than the cap of %v: %w (last: %w)",
					t.sseURL, n-1, asked, max, ErrConnectionLost, last)
			}
			wait, asked = asked, 0
		}
		t.log.Info("legacy: reconnecting", "url", t.sseURL, "attempt", n, "wait", wait)
		if retry.Sleep(t.ctx, wait) != nil {
			return nil, nil, nil, context.Cause(t.ctx)
		}
		rd, body, s, err := t.attempt()
		if err == nil {
			t.mu.Lock()
			if t.closed {
				t.mu.Unlock()
				body.Close()
				s.cancel(jsonrpc.ErrClosed)
				return nil, nil, nil, jsonrpc.ErrClosed
			}
			t.sess, t.endpoint = s, s.endpoint
			close(t.ready)
			t.mu.Unlock()
			u, _ := url.Parse(s.endpoint)
			t.log.Info("legacy: reconnected", "url", t.sseURL, "endpoint", origin.Redact(u), "attempts", n)
			return rd, body, s, nil
		}
		if t.ctx.Err() != nil {
			return nil, nil, nil, context.Cause(t.ctx)
		}
		if terminal(err) {
			return nil, nil, nil, fmt.Errorf("GET %s: reconnection refused: %w: %w", t.sseURL, ErrConnectionLost, err)
		}
		var te *throttledError
		if errors.As(err, &te) {
			asked = max(te.wait, 1) // Retry-After: 0 still means "now"
		}
		if rd != nil {
			if d, ok := rd.Retry(); ok {
				t.backoff.ServerRetry(d)
			}
		}
		t.log.Debug("legacy: reconnection attempt failed", "url", t.sseURL, "attempt", n, "err", err)
		last = err
	}
}

// limit shows a policy limit, negative meaning none.
func limit[T int | time.Duration](v T) string {
	if v < 0 {
		return "unlimited"
	}
	return fmt.Sprint(v)
}

// attempt is one reconnection: a GET of the SSE URL and its endpoint event,
// within endpointWait. The new session needs initialize before anything
// else is sent on it.
func (t *Transport) attempt() (*sse.Reader, io.ReadCloser, *session, error) {
	sctx, scancel := context.WithCancelCause(t.ctx)
	timer := time.AfterFunc(endpointWait, func() { scancel(errEndpointWait) })
	rd, body, u, err := t.open(sctx, sctx)
	if !timer.Stop() && err == nil {
		err = errEndpointWait // it fired just as the endpoint arrived
	}
	if err != nil {
		if errors.Is(context.Cause(sctx), errEndpointWait) {
			err = fmt.Errorf("HTTP+SSE: GET %s: %w", t.sseURL, errEndpointWait)
		}
		if body != nil {
			body.Close()
		}
		scancel(err)
		return rd, nil, nil, err
	}
	return rd, body, &session{endpoint: u.String(), redacted: origin.Redact(u), ctx: sctx, cancel: scancel, needInit: true}, nil
}

// terminal reports whether a failed reconnection attempt ends the
// transport instead of being tried again. These are answers that the same
// GET, sent again unchanged with the same headers, would get again:
//
//   - a 4xx status other than 408 (Request Timeout), 425 (Too Early) and
//     429 (Too Many Requests), which ask the client to come back: 401 and
//     403 (the static credentials are refused; a retry cannot refresh
//     them), 404 and 410 (the SSE URL is gone), 405 (the server no longer
//     offers the stream there, e.g. it was upgraded to Streamable HTTP),
//     400 and the rest (the request itself is unacceptable);
//   - a *CrossOriginError: the server now names an endpoint on another
//     origin, which is refused for the host's headers' sake;
//   - a *jsonrpc.RedirectError: the server redirects the GET where the
//     redirect policy does not follow.
//
// Everything else — network errors, 5xx, a 2xx that is not an event stream
// (a proxy's error page during a restart), a stream without an endpoint
// event — may pass, and counts as a failed attempt.
func terminal(err error) bool {
	var he *jsonrpc.HTTPError
	if errors.As(err, &he) {
		switch he.StatusCode {
		case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
			return false
		}
		return he.StatusCode >= 400 && he.StatusCode <= 499
	}
	var ce *CrossOriginError
	var re *jsonrpc.RedirectError
	return errors.As(err, &ce) || errors.As(err, &re)
}

// throttledError is a 429 or 503 answer to a reconnection GET with a
// Retry-After: the wait the server asked for, and the *jsonrpc.HTTPError.
type throttledError struct {
	wait time.Duration
	err  error
}

func (e *throttledError) Error() string { return e.err.Error() }
func (e *throttledError) Unwrap() error { return e.err }
