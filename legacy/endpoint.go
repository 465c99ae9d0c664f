package legacy

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/anymcp/anymcp/internal/wire"
)

// resolveEndpoint turns the data of an endpoint event into the URL to POST
// to: surrounding white space is trimmed and the URI resolved against base,
// the URL the stream came from. The result must be on origin's origin.
func resolveEndpoint(data []byte, base, origin *url.URL) (*url.URL, error) {
	raw := strings.TrimSpace(string(data))
	if raw == "" {
		return nil, fmt.Errorf("the endpoint event is empty: %w", ErrNoEndpoint)
	}
	ref, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the endpoint event holds no URI (%q): %w", wire.Excerpt([]byte(raw)), ErrNoEndpoint)
	}
	u := base.ResolveReference(ref)
	u.Fragment, u.RawFragment = "", ""
	if !sameOrigin(u, origin) {
		return nil, &CrossOriginError{SSEURL: origin.Redacted(), Endpoint: u.Redacted()}
	}
	return u, nil
}

// sameOrigin reports whether a and b have the same scheme, host and port,
// a missing port standing for the scheme's default one.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b)
}

// port returns u's port, or the default port of its scheme.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}
