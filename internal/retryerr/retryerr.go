// Package retryerr lets internal/retry build the typed errors of package
// reconnect (*reconnect.RetryAfterError, *reconnect.ResendRefusedError),
// whose outcome state a host reads only through errors.Is. Package
// reconnect sets the constructors when it is initialised; internal/retry
// imports reconnect, so they are set before it runs.
package retryerr

import "time"

// RetryAfter is what a *reconnect.RetryAfterError holds.
type RetryAfter struct {
	Status int
	Wait   time.Duration
	Cap    time.Duration
	Reason string
	Err    error // the HTTP error of the last answer
	Ctx    error // the context's error, when it ended the wait
	// MayHaveRun: an answer was a 503 without Retry-After, which a
	// gateway may give after the server ran the request.
	MayHaveRun bool
}

// The constructors package reconnect sets.
var (
	NewRetryAfter    func(RetryAfter) error
	NewResendRefused func(err error, mayHaveRun bool) error
)
