package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/anymcp/anymcp/internal/origin"
)

// serverMetadata is what a client needs of an authorization server's
// metadata (RFC 8414, or OpenID Connect Discovery 1.0).
type serverMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                              string   `json:"token_endpoint,omitempty"`
	RegistrationEndpoint                       string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                            []string `json:"scopes_supported,omitempty"`
	GrantTypesSupported                        []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported,omitempty"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported,omitempty"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported,omitempty"`
	DPoPSigningAlgValuesSupported              []string `json:"dpop_signing_alg_values_supported,omitempty"`
	// URL is where the document was found, as errors and logs show it
	// (origin.RedactString); "" when the endpoints are the defaults of
	// 2025-03-26 (no metadata published).
	URL string `json:"-"`
}

const (
	wellKnownOAuth = "/.well-known/oauth-authorization-server"
	wellKnownOIDC  = "/.well-known/openid-configuration"
)

// serverMetadataURLs lists where to look for an issuer's metadata, in the
// specification's order: for an issuer with a path, RFC 8414 with path
// insertion, OpenID Connect with path insertion, then OpenID Connect with
// the path appended; for one without, RFC 8414 then OpenID Connect.
func serverMetadataURLs(issuer *url.URL) []string {
	base := url.URL{Scheme: issuer.Scheme, Host: issuer.Host}
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	at := func(p string) string {
		u := base
		if unescaped, err := url.PathUnescape(p); err == nil {
			u.Path, u.RawPath = unescaped, p
		} else {
			u.Path = p
		}
		return u.String()
	}
	if path == "" {
		return []string{at(wellKnownOAuth), at(wellKnownOIDC)}
	}
	return []string{at(wellKnownOAuth + path), at(wellKnownOIDC + path), at(path + wellKnownOIDC)}
}

// discoverServer fetches the metadata of issuer and checks that it is the
// metadata of that issuer. Locations that do not have it are skipped; a
// document for another issuer stops the search with a *MetadataError.
// It returns (nil, errNotFound-wrapping error) when no location has one.
func discoverServer(ctx context.Context, hc *http.Client, issuer string, header http.Header) (*serverMetadata, error) {
	iu, err := checkSecure("issuer", issuer)
	if err != nil {
		return nil, &MetadataError{URL: origin.RedactString(issuer), Reason: "the issuer cannot be used", Err: err}
	}
	if iu.RawQuery != "" {
		return nil, &MetadataError{URL: origin.Redact(iu), Reason: "an issuer has no query"}
	}
	var tried []error
	for _, loc := range serverMetadataURLs(iu) {
		var m serverMetadata
		if err := getJSON(ctx, hc, loc, header, &m); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			tried = append(tried, errors.New(origin.RedactString(loc)+": "+err.Error()))
			continue
		}
		m.URL = origin.RedactString(loc)
		if m.Issuer != issuer {
			// RFC 8414 section 3.3: identical, no normalisation.
			return nil, &MetadataError{URL: m.URL, Reason: "its issuer " + quote(m.Issuer) + " is not " + quote(issuer) + ", the issuer it was fetched for"}
		}
		if err := m.check(); err != nil {
			return nil, err
		}
		return &m, nil
	}
	return nil, &MetadataError{URL: origin.RedactString(issuer), Reason: "no authorization server metadata at any well-known location", Err: errors.Join(append(tried, errNotFound)...)}
}

// check refuses endpoints that tokens and secrets must not go to.
func (m *serverMetadata) check() error {
	for _, e := range []struct{ name, url string }{
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint},
	} {
		if e.url == "" {
			continue
		}
		if _, err := checkSecure(e.name, e.url); err != nil {
			return &MetadataError{URL: m.URL, Reason: "an endpoint cannot be used", Err: err}
		}
	}
	if m.TokenEndpoint == "" {
		return &MetadataError{URL: m.URL, Reason: "no token_endpoint"}
	}
	return nil
}

// legacyServer is the authorization server of a 2025-03-26 server, which
// publishes no resource metadata: the server's own origin is the issuer.
// Its RFC 8414 metadata is used when it has some; otherwise the default
// endpoints /authorize, /token and /register at that origin.
func legacyServer(ctx context.Context, hc *http.Client, server *url.URL, header http.Header) (*serverMetadata, error) {
	home := (&url.URL{Scheme: server.Scheme, Host: server.Host}).String()
	m, err := discoverServer(ctx, hc, home, header)
	if err == nil {
		return m, nil
	}
	if !errors.Is(err, errNotFound) {
		return nil, err
	}
	return &serverMetadata{
		Issuer:                        home,
		AuthorizationEndpoint:         home + "/authorize",
		TokenEndpoint:                 home + "/token",
		RegistrationEndpoint:          home + "/register",
		CodeChallengeMethodsSupported: []string{"S256"}, // PKCE is required of every 2025-03-26 server
	}, nil
}

// supportsS256 reports whether PKCE with S256 may be used.
func (m *serverMetadata) supportsS256() bool {
	return slices.Contains(m.CodeChallengeMethodsSupported, "S256")
}

// supportsScope reports whether the server lists scope in scopes_supported.
func (m *serverMetadata) supportsScope(scope string) bool {
	return slices.Contains(m.ScopesSupported, scope)
}

// authMethods returns token_endpoint_auth_methods_supported, or its
// default (RFC 8414 section 2).
func (m *serverMetadata) authMethods() []string {
	if len(m.TokenEndpointAuthMethodsSupported) == 0 {
		return []string{authBasic}
	}
	return m.TokenEndpointAuthMethodsSupported
}

func quote(s string) string { return `"` + s + `"` }
