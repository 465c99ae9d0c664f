package retry

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/reconnect"
)

// Sender sends requests that may be sent again only when the server
// provably did not run them (see Retrying), at the cost of plain
// net/http when nothing goes wrong: the first attempt is one Do of the
// guarded base client, with no copy of the request and no hooks. Only when
// its answer is one the retrying client sends again after (a 429, a 503
// with Retry-After, a 503 without one to a request marked WithResendable),
// or the connection was refused, does the retrying client take over — its first attempt is that very answer, so
// the wait the server asked for, the caps, BeforeResend and the typed
// errors are the same as if it had sent the request itself.
type Sender struct {
	base *http.Client // guarded
	p    reconnect.Policy
	log  *slog.Logger
}

// NewSender returns a Sender over base (nil means http.DefaultClient), with
// the library's redirect policy, retrying as p says and logging its
// retries on logger.
func NewSender(p reconnect.Policy, base *http.Client, logger *slog.Logger) *Sender {
	return &Sender{base: origin.Guard(base), p: p, log: logger}
}

// Do sends req. It returns what Retrying's Do would; its errors
// name req's URL as origin.RedactError writes it, whichever attempt
// failed. Only a request whose body can be read again (GetBody set, as
// http.NewRequest does for a bytes.Reader) is ever sent again: for one
// without, the first answer or error comes back as is.
func (s *Sender) Do(req *http.Request) (*http.Response, error) {
	resp, err := s.do(req)
	return resp, origin.RedactError(err)
}

// do is Do, its error not yet redacted.
func (s *Sender) do(req *http.Request) (*http.Response, error) {
	resp, err := s.base.Do(req)
	switch {
	case err == nil && !mayResend(req.Context(), resp):
		return resp, nil // also a 503 without Retry-After to a request not marked WithResendable
	case err != nil && !refused(err):
		return nil, err
	case req.GetBody == nil && req.Body != nil && req.Body != http.NoBody:
		// The attempt read the body, and nothing can read it again: a
		// resend would carry other bytes.
		return resp, err
	}
	// The server did not run it: hand over to the retrying client, whose
	// first attempt gets this answer again instead of sending.
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // the client wraps it again, as it did the first time
	}
	// The first attempt consumed the body: every resend takes one anew
	// from req.GetBody.
	var rreq *retryablehttp.Request
	var ferr error
	if getBody := req.GetBody; getBody != nil {
		r := *req
		r.Body = nil
		if rreq, ferr = retryablehttp.FromRequest(&r); ferr == nil {
			ferr = rreq.SetBody(retryablehttp.ReaderFunc(func() (io.Reader, error) { return getBody() }))
			rreq.ContentLength = req.ContentLength
		}
	} else {
		rreq, ferr = retryablehttp.FromRequest(req)
	}
	if ferr != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, ferr
	}
	hc := *s.base
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &primed{resp: resp, err: err, base: base}
	return Retrying(s.p, &hc, s.log).Do(rreq)
}

// primed is a RoundTripper whose first round trip is an answer already
// received; the rest go to base.
type primed struct {
	resp *http.Response
	err  error
	used bool
	base http.RoundTripper
}

func (p *primed) RoundTrip(req *http.Request) (*http.Response, error) {
	if !p.used {
		p.used = true
		if p.resp != nil {
			p.resp.Request = req
		}
		return p.resp, p.err
	}
	return p.base.RoundTrip(req)
}
