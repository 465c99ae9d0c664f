package auth

import (
	"fmt"
	"net"
	"net/url"
	"unicode"
	"unicode/utf8"

	"github.com/anymcp/anymcp/internal/origin"
)

// isLoopback reports whether host (no port) is this machine by a rule no
// name server can bend: a literal loopback address (127.0.0.0/8, ::1) or
// the name localhost itself, which this package's requests never look up
// (pinLocalhost dials 127.0.0.1, then ::1). Subdomains of localhost are
// not loopback here: net/http would resolve them through DNS. Only ASCII
// letters are folded (origin.LowerASCII): net/http looks up any other
// spelling in its IDNA form, which need not be localhost.
func isLoopback(host string) bool {
	return isLocalhostName(host) || isLoopbackIP(host)
}

// isLocalhostName reports whether host is the name localhost.
func isLocalhostName(host string) bool { return origin.LowerASCII(host) == "localhost" }

// isLoopbackIP reports whether host is a literal loopback address.
func isLoopbackIP(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkSecure refuses URLs that authorization may not use: anything but
// https, except http on a loopback host (tests, local development); a URL
// with user information (http://shown.example%2F@sent.example/ shows one
// host and sends to another); a URL with control or invisible formatting
// characters (Unicode Cc and Cf: terminal escapes, right-to-left
// overrides), which would reach whoever is shown it.
func checkSecure(what, raw string) (*url.URL, error) {
	if r, bad := unprintable(raw); bad {
		return nil, fmt.Errorf("%s %q: holds the character %U, which a URL shown to a person may not hold", what, origin.RedactString(raw), r)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", what, origin.RedactString(raw), origin.RedactError(err))
	}
	switch {
	case u.Host == "":
		return nil, fmt.Errorf("%s %q: not an absolute URL", what, origin.Redact(u))
	case u.User != nil:
		return nil, fmt.Errorf("%s %q: has user information before its host (user@host), which shows one host and sends to another", what, origin.Redact(u))
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return nil, fmt.Errorf("%s %q: must be https (http only on 127.0.0.1, ::1 or localhost)", what, origin.Redact(u))
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("%s %q: has a fragment", what, origin.Redact(u))
	}
	return u, nil
}

// unprintable returns the first control or formatting character of s
// (Unicode Cc or Cf), or utf8.RuneError for bytes that are not UTF-8.
func unprintable(s string) (rune, bool) {
	if !utf8.ValidString(s) {
		return utf8.RuneError, true
	}
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
			return r, true
		}
	}
	return 0, false
}
