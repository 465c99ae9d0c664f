package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/anymcp/anymcp/internal/origin"
)

// resourceMetadata is an OAuth 2.0 Protected Resource Metadata document
// (RFC 9728), as an MCP server publishes it.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
	ResourceName         string   `json:"resource_name,omitempty"`
	// DPoPBoundAccessTokensRequired: the server takes DPoP-bound tokens
	// only (RFC 9728 section 2).
	DPoPBoundAccessTokensRequired bool `json:"dpop_bound_access_tokens_required,omitempty"`
	// URL is where the document was found, as errors and logs show it
	// (origin.RedactString); not part of the document.
	URL string `json:"-"`
}

const wellKnownResource = "/.well-known/oauth-protected-resource"

// resourceMetadataURLs lists where to look for the server's metadata, in
// the specification's order: the challenge's resource_metadata URL when
// there is one, then the well-known URL at the path of the MCP endpoint,
// then at the root.
func resourceMetadataURLs(server *url.URL, fromChallenge string) []string {
	var urls []string
	if fromChallenge != "" {
		urls = append(urls, fromChallenge)
	}
	base := url.URL{Scheme: server.Scheme, Host: server.Host}
	if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
		pathBased := base
		pathBased.Path = wellKnownResource + server.Path
		pathBased.RawPath = wellKnownResource + p
		urls = append(urls, strings.TrimSuffix(pathBased.String(), "/"))
	}
	root := base
	root.Path = wellKnownResource
	urls = append(urls, root.String())
	return urls
}

// discoverResource finds the server's Protected Resource Metadata. It
// returns (nil, nil) when no location has one (a server of 2025-03-26).
// A document that is found but wrong — its resource is not this server,
// it names no authorization server — is a *MetadataError: discovery stops
// there rather than trying locations the attacker did not control.
func discoverResource(ctx context.Context, hc *http.Client, server *url.URL, fromChallenge string, header http.Header) (*resourceMetadata, error) {
	if fromChallenge != "" {
		u, err := checkSecure("resource_metadata", fromChallenge)
		if err != nil {
			return nil, &MetadataError{URL: origin.Redact(server), Reason: "the challenge's resource_metadata URL cannot be used", Err: err}
		}
		fromChallenge = u.String()
	}
	var tried []error
	for _, loc := range resourceMetadataURLs(server, fromChallenge) {
		var m resourceMetadata
		err := getJSON(ctx, hc, loc, header, &m)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			tried = append(tried, errors.New(origin.RedactString(loc)+": "+err.Error()))
			continue
		}
		m.URL = origin.RedactString(loc)
		if err := m.check(server); err != nil {
			return nil, err
		}
		return &m, nil
	}
	// None found: a server of 2025-03-26, or an error worth reporting
	// if the fallback finds nothing either.
	return nil, errors.Join(tried...)
}

// check validates the document for the server it was fetched for.
func (m *resourceMetadata) check(server *url.URL) error {
	if m.Resource == "" {
		return &MetadataError{URL: m.URL, Reason: "no resource field"}
	}
	if !resourceCovers(m.Resource, server) {
		return &MetadataError{URL: m.URL, Reason: "its resource " + origin.RedactString(m.Resource) + " is not the server " + origin.Redact(server)}
	}
	if len(m.AuthorizationServers) == 0 {
		return &MetadataError{URL: m.URL, Reason: "it names no authorization server"}
	}
	for _, as := range m.AuthorizationServers {
		if _, err := checkSecure("authorization server", as); err != nil {
			return &MetadataError{URL: m.URL, Reason: "an authorization server cannot be used", Err: err}
		}
	}
	return nil
}

// resourceCovers reports whether the resource identifier names server: the
// same origin, and a path that is the server's or one of its parents
// (segment-wise). Scheme and host compare without case.
func resourceCovers(resource string, server *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Host == "" || r.Fragment != "" || !origin.Same(r, server) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(server.EscapedPath(), "/")
	return rp == "" || rp == sp || strings.HasPrefix(sp, rp+"/")
}

// canonicalResource is the resource indicator for a server that publishes
// no metadata: its URL without user information, query or fragment, and
// without a trailing slash. RFC 8707 says a resource indicator SHOULD NOT
// carry a query; a server URL's query is where API keys and tokens are
// often put, and the indicator goes to the authorization server and into
// the authorization URL a browser opens (and keeps in its history). A
// server that wants its query in the indicator says so in its Protected
// Resource Metadata, whose resource is then used as it is.
func canonicalResource(server *url.URL) string {
	u := url.URL{
		Scheme:  strings.ToLower(server.Scheme),
		Host:    origin.LowerASCII(server.Host),
		Path:    server.Path,
		RawPath: server.RawPath,
	}
	return strings.TrimSuffix(u.String(), "/")
}
