package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/anymcp/anymcp/jsonrpc"
)

// SentBody is the body of a POST that tells, once the exchange is over,
// whether the request may have reached the server: whether net/http took
// every byte of it for the connection. Until then the server cannot have
// run it, since a JSON-RPC request does not run without its last byte; from
// then on it may have, whatever the exchange does next.
//
// Every attempt of the request (a resend after a 429 or 503, a redirect
// followed, net/http's own retry on a connection that died before anything
// was written) reads a body of its own from GetBody; Sent speaks of the
// latest, the earlier ones having been answered by a status that says the
// server did not run them, or not written at all.
type SentBody struct {
	b      []byte
	off    int         // read by one goroutine at a time, net/http's
	done   atomic.Bool // every byte handed out
	latest atomic.Pointer[SentBody]
	first  *SentBody // the body of the request, for the bodies of its later attempts
}

// NewPost returns a request of method to url with body b, as
// http.NewRequestWithContext would build it with a bytes.Reader
// (ContentLength and GetBody set), and its body, which reports whether b
// was sent in full.
func NewPost(ctx context.Context, method, url string, b []byte) (*http.Request, *SentBody, error) {
	body := &SentBody{b: b}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, nil, err
	}
	req.ContentLength = int64(len(b))
	req.GetBody = body.reopen
	return req, body, nil
}

// Read hands out the bytes of the body; the call that hands out the last
// one marks the body sent.
func (s *SentBody) Read(p []byte) (int, error) {
	if s.off >= len(s.b) {
		s.done.Store(true)
		return 0, io.EOF
	}
	n := copy(p, s.b[s.off:])
	s.off += n
	if s.off == len(s.b) {
		s.done.Store(true)
	}
	return n, nil
}

// Len is how many bytes are left to read.
func (s *SentBody) Len() int { return len(s.b) - s.off }

// Close does nothing: the bytes stay, for Sent and later attempts.
func (s *SentBody) Close() error { return nil }

// reopen is the request's GetBody: a body of its own for the next attempt,
// which Sent speaks of from now on.
func (s *SentBody) reopen() (io.ReadCloser, error) {
	first := s.first
	if first == nil {
		first = s
	}
	next := &SentBody{b: s.b, first: first}
	first.latest.Store(next)
	return next, nil
}

// Sent reports whether the latest attempt of the request handed its body
// to the connection in full: the server may have the request. Call it on
// the body NewPost returned, once Do has returned.
func (s *SentBody) Sent() bool {
	if l := s.latest.Load(); l != nil {
		return l.done.Load()
	}
	return s.done.Load()
}

// MayHaveRun returns err, from an exchange whose request body was sent in
// full (SentBody.Sent), wrapped so that it also matches
// jsonrpc.ErrOutcomeUnknown; errors.Is and errors.As find in it what they
// found in err. A nil err, or one that already matches, is returned as is.
func MayHaveRun(err error) error {
	if err == nil || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		return err
	}
	return fmt.Errorf("%w (%w: the request was sent)", err, jsonrpc.ErrOutcomeUnknown)
}

// PostError is the error for a POST answered with a status other than 2xx
// (a *jsonrpc.HTTPError, see NewHTTPError). sent says whether the POST
// carried a request and went out in full (SentBody.Sent). A 4xx refused
// the request; so does a 501, and a 503 with Retry-After (the server asks
// to come back later). A 5xx whose body holds a JSON-RPC error is the
// server's answer. Any other 5xx — 500, 502, 504, a 503 without
// Retry-After, with no JSON-RPC error — may come from a gateway after the
// server ran the request, or from the server failing once it had: for a
// request that was sent, the error also matches jsonrpc.ErrOutcomeUnknown,
// the *jsonrpc.HTTPError still found by errors.As. The caller closes the
// body.
func PostError(resp *http.Response, url string, sent bool) error {
	herr := NewHTTPError(resp, http.MethodPost, url)
	if sent && statusMayHaveRun(resp, herr) {
		return MayHaveRun(herr)
	}
	return herr
}

// statusMayHaveRun reports whether a non-2xx answer leaves open that the
// server ran the request (see PostError).
func statusMayHaveRun(resp *http.Response, herr *jsonrpc.HTTPError) bool {
	switch {
	case resp.StatusCode < 500, herr.RPCError != nil, resp.StatusCode == http.StatusNotImplemented:
		return false
	case resp.StatusCode == http.StatusServiceUnavailable:
		return resp.Header.Get("Retry-After") == ""
	}
	return true
}
