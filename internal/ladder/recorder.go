package ladder

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
)

// recorder is the RoundTripper of one attempt's HTTP client: while the
// negotiation runs it notes the status of the attempt's first exchange, for
// the report; afterwards it only passes requests through.
type recorder struct {
	base   http.RoundTripper
	active atomic.Bool
	mu     sync.Mutex
	status int
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if r.active.Load() {
		status := 0
		var answered statusError
		switch {
		case err == nil:
			status = resp.StatusCode
		case errors.As(err, &answered):
			// The server answered, and a layer under this one (an
			// authorizer that could not get credentials for a 401)
			// turned the answer into an error: the answer was still
			// the server's.
			status = answered.HTTPStatus()
		}
		r.mu.Lock()
		if r.status == 0 {
			r.status = status
		}
		r.mu.Unlock()
	}
	return resp, err
}

// statusError is an error that says what status the server answered the
// request with (auth.RefusedError).
type statusError interface {
	error
	HTTPStatus() int
}

func (r *recorder) firstStatus() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// recordingClient returns a shallow copy of c whose transport records. The
// transports it is given to (modern.New, legacy.Dial) put the library's
// redirect policy on their own copies of it (origin.Guard), so every rung's
// requests, redirects included, go through that policy; the recorder sees
// the first answer, a refused redirect's status included.
func recordingClient(c *http.Client) (*http.Client, *recorder) {
	if c == nil {
		c = http.DefaultClient
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	rec := &recorder{base: base}
	rec.active.Store(true)
	cc := *c
	cc.Transport = rec
	return &cc, rec
}
