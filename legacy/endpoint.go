package legacy

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/anymcp/anymcp/internal/origin"
)

// resolveEndpoint turns the data of an endpoint event into the URL to POST
// to: surrounding white space is trimmed and the URI resolved against base,
// the URL the stream came from. The result must be on home's origin (home
// is the SSE URL the host gave), or it is a *CrossOriginError.
func resolveEndpoint(data []byte, base, home *url.URL) (*url.URL, error) {
	raw := strings.TrimSpace(string(data))
	if raw == "" {
		return nil, fmt.Errorf("the endpoint event is empty: %w", ErrNoEndpoint)
	}
	ref, err := url.Parse(raw)
	if err != nil {
		// Nothing of it is shown: it may still hold the session id.
		return nil, fmt.Errorf("the endpoint event holds no URI (%d bytes that do not parse as one): %w", len(raw), ErrNoEndpoint)
	}
	u := base.ResolveReference(ref)
	u.Fragment, u.RawFragment = "", ""
	if !origin.Same(u, home) {
		return nil, &CrossOriginError{SSEURL: origin.Redact(home), Endpoint: origin.Redact(u)}
	}
	return u, nil
}
