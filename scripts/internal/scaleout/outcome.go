package scaleout

import (
	"errors"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
)

// Outcome is what became of one call, as its caller can tell.
type Outcome int

const (
	// Succeeded: a result.
	Succeeded Outcome = iota
	// MayHaveRun: a typed failure after which the call may have run
	// (jsonrpc.ErrOutcomeUnknown): the request went out, its answer was
	// lost.
	MayHaveRun
	// DidNotRun: a typed failure that says the call did not run: a
	// JSON-RPC error, a refused HTTP status, a closed Conn, a request
	// that never went out.
	DidNotRun
	// Untyped: a failure the caller cannot branch on. A violation.
	Untyped
)

func (o Outcome) String() string {
	return [...]string{"Succeeded", "may have run", "did not run", "Untyped failure"}[o]
}

// Classify tells the Outcome of a call from its error, by the typed errors
// of docs/outcomes.md alone.
func Classify(err error) Outcome {
	if err == nil {
		return Succeeded
	}
	if errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		return MayHaveRun
	}
	var (
		rpcErr     *jsonrpc.Error
		httpErr    *jsonrpc.HTTPError
		timeoutErr *client.TimeoutError
		lostErr    *client.LostError
		inputErr   *client.InputError
		dialErr    *negotiate.Error
	)
	switch {
	case errors.As(err, &timeoutErr):
		if timeoutErr.MayHaveRun {
			return MayHaveRun
		}
		return DidNotRun
	case errors.As(err, &lostErr):
		return MayHaveRun
	case errors.As(err, &rpcErr), errors.As(err, &httpErr), errors.As(err, &inputErr), errors.As(err, &dialErr),
		errors.Is(err, jsonrpc.ErrClosed), errors.Is(err, client.ErrClosed), errors.Is(err, jsonrpc.ErrSessionExpired):
		return DidNotRun
	}
	return Untyped
}
