package client

import (
	"net/http"

	"github.com/anymcp/anymcp/auth"
)

// WithAuth authorizes the connection's HTTP requests with a (OAuth 2.1; see
// package auth). Every request to the server carries its bearer token: the
// Streamable HTTP POSTs, GET and DELETE, or the HTTP+SSE stream and POSTs.
// On a 401, or a 403 insufficient_scope, the token is renewed and the request
// sent again. A 401 is never a reason to try another transport. When
// authorization fails, Dial and the calls return the auth package's typed
// error (errors.As: *auth.InteractionRequiredError, *auth.MetadataError,
// *auth.GrantError, ...). Stdio servers are not affected. The RoundTripper
// of WithHTTPClient, if any, is kept under it.
func WithAuth(a *auth.Authorizer) Option { return func(o *options) { o.auth = a } }

// authorizedClient returns the HTTP client of the transports for rawURL:
// WithHTTPClient's (or the shared pool's), behind the Authorizer's
// RoundTripper when WithAuth was given.
func (o *options) authorizedClient(rawURL string) (*http.Client, error) {
	base := o.httpClient
	if base == nil {
		base = sharedHTTP
	}
	if o.auth == nil {
		return base, nil
	}
	c := *base
	t, err := o.auth.Transport(rawURL, c.Transport)
	if err != nil {
		return nil, err
	}
	c.Transport = t
	return &c, nil
}
