package auth

import (
	"net/url"
	"reflect"
	"testing"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// The specification's order: the challenge's URL, then the well-known URL
// at the endpoint's path, then at the root.
func TestResourceMetadataURLs(t *testing.T) {
	tests := []struct {
		server, fromChallenge string
		want                  []string
	}{
		{"https://ex.com/public/mcp", "https://ex.com/custom.json", []string{
			"https://ex.com/custom.json",
			"https://ex.com/.well-known/oauth-protected-resource/public/mcp",
			"https://ex.com/.well-known/oauth-protected-resource",
		}},
		{"https://ex.com/mcp/", "", []string{
			"https://ex.com/.well-known/oauth-protected-resource/mcp",
			"https://ex.com/.well-known/oauth-protected-resource",
		}},
		{"https://ex.com", "", []string{"https://ex.com/.well-known/oauth-protected-resource"}},
		{"https://ex.com/", "", []string{"https://ex.com/.well-known/oauth-protected-resource"}},
		{"http://127.0.0.1:8080/a%2Fb/mcp?x=1", "", []string{
			"http://127.0.0.1:8080/.well-known/oauth-protected-resource/a%2Fb/mcp",
			"http://127.0.0.1:8080/.well-known/oauth-protected-resource",
		}},
	}
	for _, tt := range tests {
		got := resourceMetadataURLs(mustURL(t, tt.server), tt.fromChallenge)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.server, got, tt.want)
		}
	}
}

// RFC 8414 with path insertion, OpenID Connect with path insertion, then
// appended; without a path, RFC 8414 then OpenID Connect.
func TestServerMetadataURLs(t *testing.T) {
	tests := []struct {
		issuer string
		want   []string
	}{
		{"https://auth.example.com/tenant1", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
			"https://auth.example.com/.well-known/openid-configuration/tenant1",
			"https://auth.example.com/tenant1/.well-known/openid-configuration",
		}},
		{"https://auth.example.com/tenant1/", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
			"https://auth.example.com/.well-known/openid-configuration/tenant1",
			"https://auth.example.com/tenant1/.well-known/openid-configuration",
		}},
		{"https://auth.example.com", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server",
			"https://auth.example.com/.well-known/openid-configuration",
		}},
	}
	for _, tt := range tests {
		if got := serverMetadataURLs(mustURL(t, tt.issuer)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.issuer, got, tt.want)
		}
	}
}

func TestResourceCovers(t *testing.T) {
	server := mustURL(t, "https://mcp.example.com/server/mcp")
	tests := []struct {
		resource string
		want     bool
	}{
		{"https://mcp.example.com/server/mcp", true},
		{"https://mcp.example.com/server/mcp/", true},
		{"HTTPS://MCP.EXAMPLE.COM/server/mcp", true},
		{"https://mcp.example.com:443/server/mcp", true},
		{"https://mcp.example.com/server", true},
		{"https://mcp.example.com", true},
		{"https://mcp.example.com/", true},
		{"https://mcp.example.com/serv", false},         // not a segment
		{"https://mcp.example.com/server/mcp/x", false}, // a child
		{"https://mcp.example.com/other/mcp", false},
		{"https://evil.example.com/server/mcp", false},
		{"http://mcp.example.com/server/mcp", false},
		{"https://mcp.example.com:8443/server/mcp", false},
		{"https://mcp.example.com/server/mcp#frag", false},
		{"mcp.example.com/server/mcp", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := resourceCovers(tt.resource, server); got != tt.want {
			t.Errorf("resourceCovers(%q) = %v, want %v", tt.resource, got, tt.want)
		}
	}
}

func TestCanonicalResource(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://MCP.Example.COM/mcp":      "https://mcp.example.com/mcp",
		"https://mcp.example.com/":         "https://mcp.example.com",
		"https://mcp.example.com/mcp#x":    "https://mcp.example.com/mcp",
		"https://u:p@mcp.example.com:8443": "https://mcp.example.com:8443",
		// No query: it is where API keys go, and the indicator is sent to
		// the authorization server and shown in the authorization URL.
		"https://mcp.example.com/mcp?api_key=s3cret":  "https://mcp.example.com/mcp",
		"https://mcp.example.com/mcp/?api_key=s3cret": "https://mcp.example.com/mcp",
		"https://mcp.example.com/?token=s3cret#x":     "https://mcp.example.com",
		"https://mcp.example.com/a%2Fb?x":             "https://mcp.example.com/a%2Fb",
		// Host names fold ASCII letters only, as origins do.
		"https://\u0130BM.test/mcp": "https://%C4%B0bm.test/mcp",
	} {
		if got := canonicalResource(mustURL(t, in)); got != want {
			t.Errorf("canonicalResource(%q) = %q, want %q", in, got, want)
		}
	}
}
