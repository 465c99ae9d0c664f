package auth_test

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// Resource metadata comes from the challenge's URL when there is one, else
// from the path-based well-known URL, else the root one, in that order.
func TestResourceMetadataDiscoveryOrder(t *testing.T) {
	tests := []struct {
		name string
		mode oauthserver.PRMMode
		want []string
	}{
		{"challenge names a custom URL", oauthserver.PRMCustom, []string{"GET /custom/resource-metadata.json"}},
		{"challenge names the path-based URL", oauthserver.PRMInChallenge, []string{"GET /.well-known/oauth-protected-resource/mcp"}},
		{"path-based, not named", oauthserver.PRMPathBased, []string{"GET /.well-known/oauth-protected-resource/mcp"}},
		{"root, not named", oauthserver.PRMRoot, []string{"GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/oauth-protected-resource"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{PRM: tt.mode, OnRequest: rec.note})
			mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
			var got []string
			for _, r := range rec.requests() {
				if strings.Contains(r, "resource") {
					got = append(got, r)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("metadata requests %q, want %q", got, tt.want)
			}
			if res := f.as.Stats().LastToken.Get("resource"); res == "" {
				t.Fatal("no resource in the token request")
			}
		})
	}
}

// Metadata whose resource is another server is refused before anything
// is sent to its authorization server.
func TestResourceMismatchRefused(t *testing.T) {
	for _, mode := range []oauthserver.PRMMode{oauthserver.PRMInChallenge, oauthserver.PRMPathBased} {
		f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{PRM: mode, Resource: "https://evil.example.com/mcp"})
		err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
		var me *auth.MetadataError
		if !errors.As(err, &me) || !strings.Contains(me.Reason, "evil.example.com") {
			t.Fatalf("err = %v, want a *auth.MetadataError about the resource", err)
		}
		if st := f.as.Stats(); st.Registrations+st.Authorizations+len(st.Tokens) != 0 || len(st.Metadata) != 0 {
			t.Fatalf("the authorization server was contacted: %+v", st)
		}
	}
}

// Authorization server metadata: RFC 8414 and OpenID Connect, with the path
// inserted or appended, in the specification's order.
func TestServerMetadataDiscoveryOrder(t *testing.T) {
	tests := []struct {
		name string
		opts oauthserver.AuthServerOptions
		want []string
	}{
		{"oauth, no path", oauthserver.AuthServerOptions{}, []string{
			"/.well-known/oauth-authorization-server"}},
		{"openid, no path", oauthserver.AuthServerOptions{Discovery: oauthserver.DiscoveryOIDC}, []string{
			"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}},
		{"oauth, path inserted", oauthserver.AuthServerOptions{IssuerPath: "/tenant1"}, []string{
			"/.well-known/oauth-authorization-server/tenant1"}},
		{"openid, path appended", oauthserver.AuthServerOptions{IssuerPath: "/tenant1", Discovery: oauthserver.DiscoveryOIDC}, []string{
			"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1", "/tenant1/.well-known/openid-configuration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			tt.opts.OnRequest = rec.note
			f := setup(t, tt.opts, oauthserver.ProtectedOptions{})
			mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
			var got []string
			for _, r := range rec.requests() {
				if strings.Contains(r, "/.well-known/") {
					got = append(got, strings.TrimPrefix(r, "GET "))
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("metadata requests %q, want %q", got, tt.want)
			}
		})
	}
}

// Metadata claiming another issuer than the one it was fetched for is
// not used: no registration, authorization or token request follows.
func TestServerMetadataIssuerMismatchRefused(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{MetadataIssuer: "https://attacker.example.com"}, oauthserver.ProtectedOptions{})
	err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
	var me *auth.MetadataError
	if !errors.As(err, &me) || !strings.Contains(me.Reason, "attacker.example.com") {
		t.Fatalf("err = %v, want a *auth.MetadataError about the issuer", err)
	}
	if st := f.as.Stats(); st.Registrations+st.Authorizations+len(st.Tokens) != 0 {
		t.Fatalf("the poisoned metadata was used: %+v", st)
	}
}

// A 2025-03-26 server publishes no resource metadata: its origin is the
// authorization server, with metadata there or, without, the default
// /authorize, /token and /register endpoints. The resource indicator is
// the server's URL without its query (where an API key may be).
func TestBackCompat20250326(t *testing.T) {
	for _, tt := range []struct {
		name      string
		discovery oauthserver.Discovery
	}{
		{"metadata at the server's origin", oauthserver.DiscoveryOAuth},
		{"default endpoints", oauthserver.DiscoveryNone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{
				PRM:            oauthserver.PRMNone,
				SameOriginAuth: &oauthserver.AuthServerOptions{Discovery: tt.discovery, NoIssAdvertised: true, Iss: oauthserver.IssOmit},
				OnRequest:      rec.note,
			})
			mustConnect(t, testContext(t), f.ps.URL+"?api_key=k3y-in-query", f.authorizer(t, auth.Config{}))
			st := f.as.Stats()
			if st.Metadata["/.well-known/oauth-authorization-server"] != 1 {
				t.Fatalf("metadata requests %v: want the origin's RFC 8414 location", st.Metadata)
			}
			found := 0
			for _, r := range rec.requests() {
				if r == "POST /register" || r == "POST /token" {
					found++
				}
			}
			if st.Registrations != 1 || st.Tokens["authorization_code"] != 1 || found != 2 {
				t.Fatalf("registration and token at the origin: %+v, requests %q", st, rec.requests())
			}
			if got := st.LastToken.Get("resource"); got != f.ps.URL {
				t.Fatalf("token request's resource %q, want the server's URL without its query %q", got, f.ps.URL)
			}
			if got := st.LastAuthorization.Get("resource"); got != f.ps.URL {
				t.Fatalf("authorization request's resource %q, want the server's URL without its query %q", got, f.ps.URL)
			}
		})
	}
}

// A 401 that asks for no Bearer token, from a server without OAuth
// metadata (an API key server), is not taken for OAuth: it reaches the
// caller as the server's 401, and later 401s are not looked into again.
func TestNotOAuth401(t *testing.T) {
	var rec recorder
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusUnauthorized, OnRequest: rec.note})
	defer srv.Close()
	a, err := auth.New(auth.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	for range 2 {
		err := connect(ctx, srv.URL, a)
		var he *jsonrpc.HTTPError
		if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized {
			t.Fatalf("err = %v, want the server's 401", err)
		}
	}
	wellKnown := 0
	for _, r := range rec.requests() {
		if strings.Contains(r, "/.well-known/") {
			wellKnown++
		}
	}
	if wellKnown != 4 { // resource metadata at the path and the root; RFC 8414 and OpenID at the origin; once
		t.Fatalf("%d metadata requests, want 4: %q", wellKnown, rec.requests())
	}
}
