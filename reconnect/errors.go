package reconnect

import (
	"fmt"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// RetryAfterError is a 429 or 503 that was not sent again: the server
// asked for a wait over the cap, or one that would end past the caller's
// deadline, or the caller's context ended during the wait, or the policy's
// attempts (or budget) ran out. The server did not run the request —
// unless an answer was a 503 without Retry-After (sent again only for a
// request the Conn would repeat itself), which a gateway may give after
// the server ran it: MayHaveRun is set, and the error matches
// jsonrpc.ErrOutcomeUnknown.
type RetryAfterError struct {
	Status int           // 429 or 503
	Wait   time.Duration // the wait not waited: the server's Retry-After, else the backoff's (0 when none was reached)
	Cap    time.Duration // MaxRetryAfter, the cap in force
	Reason string        // why the request was not sent again
	Err    error         // the HTTP error of the last answer (a *jsonrpc.HTTPError)
	CtxErr error         // the context's error, when it ended the wait

	// MayHaveRun: an answer was a 503 without Retry-After, which a
	// gateway may give after the server ran the request.
	MayHaveRun bool
}

// Is matches jsonrpc.ErrOutcomeUnknown when MayHaveRun.
func (e *RetryAfterError) Is(target error) bool {
	return e.MayHaveRun && target == jsonrpc.ErrOutcomeUnknown
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("server answered %d, retry after %v not waited (%s; cap %v): %v", e.Status, e.Wait, e.Reason, e.Cap, e.Err)
}

// Unwrap returns the HTTP error and, when the caller's context ended the
// wait, the context's error: errors.Is(err, context.Canceled) holds then.
func (e *RetryAfterError) Unwrap() []error {
	if e.CtxErr != nil {
		return []error{e.Err, e.CtxErr}
	}
	return []error{e.Err}
}

// ResendRefusedError is a request a transport did not send again after a
// 429 or 503 because what it belonged to was gone by then (Err says what:
// the session, say). The server did not run the request — unless one of
// those answers was a 503 without Retry-After (sent again only for a
// request the Conn would repeat itself), which a gateway may give after
// the server ran it: MayHaveRun is set, and the error matches
// jsonrpc.ErrOutcomeUnknown.
type ResendRefusedError struct {
	Err        error
	MayHaveRun bool // an earlier answer left open that the server ran the request
}

func (e *ResendRefusedError) Error() string { return e.Err.Error() }
func (e *ResendRefusedError) Unwrap() error { return e.Err }

// Is matches jsonrpc.ErrOutcomeUnknown when MayHaveRun.
func (e *ResendRefusedError) Is(target error) bool {
	return e.MayHaveRun && target == jsonrpc.ErrOutcomeUnknown
}
