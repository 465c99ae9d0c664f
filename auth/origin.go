package auth

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/anymcp/anymcp/internal/origin"
)

// isLoopback reports whether host (no port) names this machine. Only ASCII
// letters are folded (origin.LowerASCII): net/http looks up any other
// spelling in its IDNA form, which need not be localhost.
func isLoopback(host string) bool {
	if h := origin.LowerASCII(host); h == "localhost" || strings.HasSuffix(h, ".localhost") {
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
		return nil, fmt.Errorf("%s %q: %w", what, origin.RedactString(raw), origin.RedactError(err))
	}
	switch {
	case u.Host == "":
		return nil, fmt.Errorf("%s %q: not an absolute URL", what, origin.Redact(u))
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return nil, fmt.Errorf("%s %q: must be https (http only on a loopback host)", what, origin.Redact(u))
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("%s %q: has a fragment", what, origin.Redact(u))
	}
	return u, nil
}
