package auth

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// TODO(internal/origin): this file is a stand-in for package internal/origin
// (origin.Of, origin.Same, origin.Guard), which is being written on another
// branch; replace originOf, sameOrigin and guard by it when it lands.

// originOf returns u's origin, scheme://host:port, lower case, with the
// scheme's default port made explicit.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// sameOrigin reports whether a and b have the same origin.
func sameOrigin(a, b *url.URL) bool { return originOf(a) == originOf(b) }

// redirectError is why guard refused a redirect.
type redirectError struct {
	from, to string
	why      string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("redirect from %s to %s refused: %s", e.from, e.to, e.why)
}

// guard returns a copy of c that refuses redirects to another origin and
// redirects that turn a POST into a GET.
func guard(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	g := *c
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		prev := via[len(via)-1]
		if !sameOrigin(prev.URL, req.URL) {
			return &redirectError{from: prev.URL.Redacted(), to: req.URL.Redacted(), why: "another origin"}
		}
		if prev.Method == http.MethodPost && req.Method != http.MethodPost {
			return &redirectError{from: prev.URL.Redacted(), to: req.URL.Redacted(), why: "a POST would become a " + req.Method}
		}
		if c.CheckRedirect != nil {
			return c.CheckRedirect(req, via)
		}
		return nil
	}
	return &g
}

// isLoopback reports whether host (no port) names this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkSecure refuses URLs that authorization may not use: anything but
// https, except http on a loopback host (tests, local development).
func checkSecure(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", what, raw, err)
	}
	switch {
	case u.Host == "":
		return nil, fmt.Errorf("%s %q: not an absolute URL", what, raw)
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return nil, fmt.Errorf("%s %q: must be https (http only on a loopback host)", what, u.Redacted())
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("%s %q: has a fragment", what, u.Redacted())
	}
	return u, nil
}
