package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/anymcp/anymcp/jsonrpc"
)

// Delivery tells, once the exchange of a POST is over, whether the
// request may have reached the server: whether net/http wrote all of it
// (httptrace's WroteRequest, without error) in its latest attempt. Until
// then the server cannot have run it, since a JSON-RPC request does not run
// without its last byte; from then on it may have, whatever the exchange
// does next.
//
// Every attempt of the request (a resend after a 429 or 503, a redirect
// followed, a resend after a 401 with a renewed token, net/http's own
// retry on a connection that died before anything was written) takes a
// body anew from GetBody, or at least asks for a connection (httptrace's
// GetConn): either sets Delivery back to not sent, the earlier attempts
// having been answered by a status that says the server did not run them,
// or not written at all. (A resend whose preparation fails — a token
// renewal, say — is then not sent, and the refusal before it stands.)
// net/http may report the write of an attempt late, after its answer and
// after the next attempt began (over HTTP/2 a body goes out on a goroutine
// of its own): a report that comes before the latest attempt has written
// its headers (httptrace's WroteHeaders) is an earlier attempt's, and does
// not count — unless the transport never reports headers at all.
//
// It watches net/http rather than the body: a body of another type than
// *bytes.Reader makes net/http flush the headers apart from the body, a
// second write that cost each call about 6 µs on loopback.
//
// A request written in full that got no answer at all is never given a
// body again (ErrUnansweredResend): net/http's HTTP/2 transport sends a
// request again by itself, taking its body from GetBody, after a stream
// reset or a GOAWAY that came before the answer — after RST_STREAM with
// PROTOCOL_ERROR too, which does not say the server did not process it.
// Every other resend follows an answer: a redirect, a 429 or 503, a 401.
//
// An answer can reach the caller before net/http reports the write: over
// HTTP/2 the body goes out on a goroutine of its own, which may report it
// only after the server has read it, run the request and answered. An
// attempt answered while its write, begun (its headers went out), was not
// reported failed is taken as sent.
type Delivery struct {
	trace      httptrace.ClientTrace
	write      atomic.Int32 // how the latest attempt's write went: writeNone...
	answered   atomic.Bool  // the latest attempt got an answer (a first byte of it)
	sawHeaders atomic.Bool  // the transport reports headers written (WroteHeaders)
}

// The states of an attempt's write.
const (
	writeNone   int32 = iota // nothing written yet
	writeBegun               // the headers went out; the body's fate not reported yet
	writeDone                // written in full
	writeFailed              // net/http reported a failed write
)

// ErrUnansweredResend is the error of a request that went out in full and
// got no answer, which net/http's HTTP/2 transport would have sent again
// by itself (see Delivery): the server may have run it, and it is not sent
// again.
var ErrUnansweredResend = errors.New("not sending again a request that went out in full and got no answer (an HTTP/2 stream reset or GOAWAY before the answer)")

// NewPost returns a request of method to url with body b, as
// http.NewRequestWithContext builds it with a bytes.Reader (ContentLength
// and GetBody set), and its Delivery.
func NewPost(ctx context.Context, method, url string, b []byte) (*http.Request, *Delivery, error) {
	d := &Delivery{}
	d.trace.GetConn = d.attempt
	d.trace.WroteHeaders = d.wroteHeaders
	d.trace.WroteRequest = d.wrote
	d.trace.GotFirstResponseByte = d.gotAnswer
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, &d.trace), method, url, bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	req.GetBody = func() (io.ReadCloser, error) {
		if d.write.Load() == writeDone && !d.answered.Load() {
			return nil, ErrUnansweredResend
		}
		d.attempt("")
		return io.NopCloser(bytes.NewReader(b)), nil // as net/http's own: known to be in memory
	}
	return req, d, nil
}

func (d *Delivery) attempt(string) {
	d.write.Store(writeNone)
	d.answered.Store(false)
}

func (d *Delivery) gotAnswer() { d.answered.Store(true) }

func (d *Delivery) wroteHeaders() {
	d.sawHeaders.Store(true)
	d.write.Store(writeBegun)
}

func (d *Delivery) wrote(info httptrace.WroteRequestInfo) {
	v := writeDone
	if info.Err != nil {
		v = writeFailed
	}
	if !d.write.CompareAndSwap(writeBegun, v) && !d.sawHeaders.Load() {
		d.write.CompareAndSwap(writeNone, v)
	}
}

// Sent reports whether the latest attempt of the request was written in
// full, or may have been: answered while its write was under way. The
// server may have it. Call it once Do has returned.
func (d *Delivery) Sent() bool {
	switch d.write.Load() {
	case writeDone:
		return true
	case writeBegun:
		return d.answered.Load()
	}
	return false
}

// MayHaveRun returns err, from an exchange whose request body was sent in
// full (Delivery.Sent), wrapped so that it also matches
// jsonrpc.ErrOutcomeUnknown; errors.Is and errors.As find in it what they
// found in err. A nil err, or one that already matches, is returned as is.
func MayHaveRun(err error) error {
	if err == nil || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		return err
	}
	return fmt.Errorf("%w (%w)", err, jsonrpc.ErrOutcomeUnknown)
}

// PostError is the error for a POST answered with a status other than 2xx
// (a *jsonrpc.HTTPError, see NewHTTPError). sent says whether the POST
// carried a request and went out in full (Delivery.Sent). A 4xx refused
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
