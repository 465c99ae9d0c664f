package auth

import (
	"errors"
	"net"
	"net/http"
)

// pinLocalhost returns a copy of hc whose plain http requests to the name
// localhost go to 127.0.0.1, then to ::1 when nothing listens there,
// without a lookup: the name is loopback (isLoopback) only because no
// name server is asked what it means. The Host header still says
// localhost. https requests are left alone: TLS checks whom they reach.
func pinLocalhost(hc *http.Client) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &localhostTransport{base: base}
	return &c
}

type localhostTransport struct{ base http.RoundTripper }

func (t *localhostTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" || !isLocalhostName(req.URL.Hostname()) {
		return t.base.RoundTrip(req)
	}
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	resp, err := t.base.RoundTrip(toAddress(req, net.JoinHostPort("127.0.0.1", port)))
	var oe *net.OpError
	if err == nil || !errors.As(err, &oe) || oe.Op != "dial" || req.Context().Err() != nil {
		return answering(resp, req), err
	}
	// Nothing listens on 127.0.0.1 (a server on [::1] only): the request
	// was not sent, and goes again, to ::1, with its body anew.
	again := req
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return nil, err
		}
		body, gerr := req.GetBody()
		if gerr != nil {
			return nil, err
		}
		again = req.Clone(req.Context())
		again.Body = body
	}
	resp, err = t.base.RoundTrip(toAddress(again, net.JoinHostPort("::1", port)))
	return answering(resp, req), err
}

// answering makes resp the answer to req, the request as the caller made
// it: what reads resp.Request (the DPoP nonce kept per origin, a redirect)
// must see the localhost URL it sent, not the address it was dialled at.
func answering(resp *http.Response, req *http.Request) *http.Response {
	if resp != nil {
		resp.Request = req
	}
	return resp
}

// toAddress is req sent to hostport, its Host header unchanged.
func toAddress(req *http.Request, hostport string) *http.Request {
	r := req.Clone(req.Context())
	if r.Host == "" {
		r.Host = req.URL.Host
	}
	r.URL.Host = hostport
	return r
}
