package access

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/anymcp/anymcp/internal/origin"
)

// WellKnownPath is the RFC 9728 well-known path of protected-resource
// metadata.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// ResourceMetadata is an OAuth 2.0 Protected Resource Metadata document
// (RFC 9728): what a client reads to learn which authorization server
// issues tokens for this server. The MCP authorization specification
// requires it, with at least one authorization server.
type ResourceMetadata struct {
	// Resource is this server's resource identifier: the URL clients
	// connect to (an MCP endpoint, or the origin for all of them), and
	// the audience its tokens carry.
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
	ResourceName         string   `json:"resource_name,omitempty"`
	// ResourceDocumentation is a URL people read about the server.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
}

// URL returns where the document is served: the well-known path inserted
// between the resource's host and its path (RFC 9728 section 3.1), so
// https://gw.example/mcp/team has its document at
// https://gw.example/.well-known/oauth-protected-resource/mcp/team. MCP
// clients without a challenge look there, then at the root.
func (m ResourceMetadata) URL() (string, error) {
	u, err := m.resourceURL()
	if err != nil {
		return "", err
	}
	w := url.URL{Scheme: u.Scheme, Host: u.Host, Path: WellKnownPath + strings.TrimSuffix(u.Path, "/"), RawQuery: u.RawQuery}
	if u.RawPath != "" {
		w.RawPath = WellKnownPath + strings.TrimSuffix(u.RawPath, "/")
	}
	return w.String(), nil
}

func (m ResourceMetadata) resourceURL() (*url.URL, error) {
	u, err := url.Parse(m.Resource)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return nil, fmt.Errorf("protected-resource metadata: the resource %q is not an absolute http(s) URL", origin.RedactString(m.Resource))
	case u.User != nil || u.Fragment != "":
		return nil, fmt.Errorf("protected-resource metadata: the resource %q may have neither user information nor a fragment (RFC 9728 section 1.2)", origin.Redact(u))
	}
	return u, nil
}

// Handler returns an http.Handler that serves the document, to be mounted
// at the path of URL (and at WellKnownPath too, when the resource is the
// only one of its origin). It answers GET and HEAD with JSON, readable
// by any web origin (the document is public); other methods get 405. The
// error says what is missing: a resource, an authorization server.
func (m ResourceMetadata) Handler() (http.Handler, error) {
	if _, err := m.resourceURL(); err != nil {
		return nil, err
	}
	if len(m.AuthorizationServers) == 0 {
		return nil, errors.New("protected-resource metadata: name at least one authorization server (the MCP authorization specification requires one)")
	}
	for _, as := range m.AuthorizationServers {
		if _, err := checkIssuerURL("protected-resource metadata: the authorization server", as); err != nil {
			return nil, err
		}
	}
	doc := struct {
		ResourceMetadata
		BearerMethods []string `json:"bearer_methods_supported"`
	}{m, []string{"header"}}
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "max-age=3600")
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	}), nil
}
