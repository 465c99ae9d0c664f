// Package origin holds the library's one rule about where a request may go:
// credentials and bodies stay on the origin (scheme, host and port) of the
// URL the host gave. Of and Same compare origins; Guard gives an
// *http.Client the redirect policy that every HTTP request of the library
// goes through; Redirected tells a response that came after a redirect.
package origin

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/anymcp/anymcp/jsonrpc"
)

// MaxRedirects is how many same-origin redirects in a row Guard follows.
const MaxRedirects = 5

// Of returns the origin of u as "scheme://host:port": scheme and host with
// their ASCII letters in lower case, the port made explicit (80 for http,
// 443 for https), an IPv6 host in brackets. A URL with a scheme other than
// http and https and no port has none: "scheme://host". User information,
// path, query and fragment are not part of it.
//
// Only ASCII letters are folded. Net/http looks a host name with other
// characters up in its IDNA form, which maps them by rules of its own:
// it looks "İbm.test" up as "xn--ibm-8dc.test", though strings.ToLower
// turns it into "ibm.test". A host with such characters is therefore on the
// origin of that very spelling only (its ASCII letters aside); two
// spellings that IDNA would take to one host are two origins here, which
// refuses what could have been allowed, never the reverse.
func Of(u *url.URL) string {
	scheme := LowerASCII(u.Scheme)
	host := u.Hostname()
	if addr, zone, ok := strings.Cut(host, "%"); ok && strings.Contains(host, ":") {
		// An IPv6 zone is an interface name: its case is kept, and its
		// "%" escaped, as in a URL.
		host = "[" + LowerASCII(addr) + "%25" + zone + "]"
	} else if strings.Contains(host, ":") {
		host = "[" + LowerASCII(host) + "]"
	} else {
		host = LowerASCII(host)
	}
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	if port == "" {
		return scheme + "://" + host
	}
	return scheme + "://" + host + ":" + port
}

// LowerASCII returns s with its ASCII letters in lower case and every
// other byte as it is: how host names and schemes are compared, since DNS
// ignores the case of ASCII letters only.
func LowerASCII(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for j := i; j < len(b); j++ {
		if 'A' <= b[j] && b[j] <= 'Z' {
			b[j] += 'a' - 'A'
		}
	}
	return string(b)
}

// Same reports whether a and b are on the same origin. A URL without a
// scheme or a host (relative, or opaque like "mailto:x"), or whose host is
// malformed so that its origin does not read back as itself (an IPv6
// address without brackets), is on no origin: Same is then false.
func Same(a, b *url.URL) bool {
	return hasOrigin(a) && hasOrigin(b) && Of(a) == Of(b)
}

// hasOrigin reports whether u is on an origin that Of writes as a URL of
// its own.
func hasOrigin(u *url.URL) bool {
	if u == nil || u.Scheme == "" || u.Hostname() == "" || u.Opaque != "" {
		return false
	}
	o := Of(u)
	back, err := url.Parse(o)
	return err == nil && back.Hostname() != "" && Of(back) == o
}

// Guard returns a shallow copy of c (nil means http.DefaultClient) whose
// CheckRedirect enforces the library's redirect policy; c itself is not
// changed. Net/http calls CheckRedirect before it sends the redirected
// request, so a refused redirect sends nothing to its Location. The policy
// refuses, with a *jsonrpc.RedirectError (wrapped by net/http in a
// *url.Error):
//
//   - a redirect to another origin than the first request's (another
//     scheme, host name or port; https to http included);
//   - a 301, 302 or 303 that would turn a POST, or any method but GET and
//     HEAD, into a GET (net/http drops the body there, and would still
//     send the headers);
//   - a redirect after MaxRedirects in a row.
//
// A redirect the policy allows then goes through c's own CheckRedirect,
// when c has one; without one, the policy is all there is (net/http's
// default limit of 10 is never reached). Same-origin redirects keep the
// request's headers, which net/http copies; they never leave the origin.
func Guard(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	g := *c
	host := c.CheckRedirect
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := Check(req, via); err != nil {
			return err
		}
		if host != nil {
			return host(req, via)
		}
		return nil
	}
	return &g
}

// Check is the redirect policy of Guard, as a CheckRedirect function: req
// is the request net/http is about to send, via the requests already sent,
// oldest first. It returns nil or a *jsonrpc.RedirectError.
func Check(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	first, prev := via[0], via[len(via)-1]
	e := &jsonrpc.RedirectError{Method: prev.Method, From: Redact(prev.URL), To: Redact(req.URL), Limit: MaxRedirects}
	if req.Response != nil {
		e.Status = req.Response.StatusCode
	}
	switch {
	case !Same(first.URL, req.URL):
		e.Reason = jsonrpc.RedirectCrossOrigin
	case req.Method != prev.Method:
		e.Reason = jsonrpc.RedirectMethodChange
	case len(via) > MaxRedirects:
		e.Reason = jsonrpc.RedirectTooMany
	default:
		return nil
	}
	return e
}

// Redirected reports whether resp answers a request that net/http made
// while following a redirect, rather than the request the library sent.
func Redirected(resp *http.Response) bool {
	return resp != nil && resp.Request != nil && resp.Request.Response != nil
}

// Redact returns u for errors and logs: without user information, the
// values of its query replaced by "…" (HTTP+SSE servers put the session id
// there; a parameter without "=" is replaced whole), without fragment. A
// URL with a scheme but no authority ("http:user:pass@host", a "//"
// forgotten) shows nothing of its opaque part or path before their last
// "@", where such a URL holds the user information.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	c.Fragment, c.RawFragment = "", ""
	if c.Host == "" && c.Scheme != "" {
		// No authority ("http:user:pass@h", "http:/user:pass@h"): url.Parse
		// leaves user information in the opaque part or the path, so what
		// comes before their last "@" goes.
		if i := strings.LastIndexByte(c.Opaque, '@'); i >= 0 {
			c.Opaque = c.Opaque[i+1:]
		}
		if i := strings.LastIndexByte(c.Path, '@'); i >= 0 {
			slashes := len(c.Path) - len(strings.TrimLeft(c.Path, "/"))
			c.Path, c.RawPath = c.Path[:slashes]+c.Path[i+1:], ""
		}
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, kv := range parts {
			if k, _, ok := strings.Cut(kv, "="); ok {
				parts[i] = k + "=…"
			} else if kv != "" {
				parts[i] = "…"
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.String()
}
