package auth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// Scopes come from the challenge; failing that, from the resource's
// scopes_supported; failing that, none is sent. offline_access is added
// when the authorization server supports it.
func TestScopeSelection(t *testing.T) {
	tests := []struct {
		name string
		as   oauthserver.AuthServerOptions
		ps   oauthserver.ProtectedOptions
		cfg  auth.Config
		want string // the scope parameter; "-" for none at all
	}{
		{"from the challenge", oauthserver.AuthServerOptions{},
			oauthserver.ProtectedOptions{Scopes: []string{"mcp:basic"}, ScopeInChallenge: true, ScopesSupported: []string{"x", "y"}}, auth.Config{}, "mcp:basic"},
		{"from scopes_supported", oauthserver.AuthServerOptions{},
			oauthserver.ProtectedOptions{ScopesSupported: []string{"mcp:basic", "mcp:read"}}, auth.Config{}, "mcp:basic mcp:read"},
		{"omitted", oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{}, auth.Config{}, "-"},
		{"configured ones too", oauthserver.AuthServerOptions{},
			oauthserver.ProtectedOptions{Scopes: []string{"mcp:basic"}, ScopeInChallenge: true}, auth.Config{Scopes: []string{"extra"}}, "mcp:basic extra"},
		{"offline_access when supported", oauthserver.AuthServerOptions{ScopesSupported: []string{"mcp:basic", "offline_access"}},
			oauthserver.ProtectedOptions{ScopesSupported: []string{"mcp:basic"}}, auth.Config{}, "mcp:basic offline_access"},
		{"no offline_access when not", oauthserver.AuthServerOptions{ScopesSupported: []string{"mcp:basic"}},
			oauthserver.ProtectedOptions{ScopesSupported: []string{"mcp:basic"}}, auth.Config{}, "mcp:basic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, tt.as, tt.ps)
			mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, tt.cfg))
			q := f.as.Stats().LastAuthorization
			got := "-"
			if _, ok := q["scope"]; ok {
				got = q.Get("scope")
			}
			if got != tt.want {
				t.Fatalf("scope %q, want %q", got, tt.want)
			}
		})
	}
}

// callTool dials, calls the tool and returns the call's error.
func callTool(t *testing.T, f *fixture, a *auth.Authorizer, tool string) error {
	t.Helper()
	ctx := testContext(t)
	c, err := client.Dial(ctx, client.URL(f.ps.URL), client.WithAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(ctx, tool, map[string]any{"text": "hi"})
	return err
}

// A 403 insufficient_scope is answered by authorizing again for the scopes
// asked before plus the challenged ones, and the call goes through.
func TestStepUp(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{
		Scopes: []string{"mcp:basic"}, ScopeInChallenge: true, ToolScopes: map[string][]string{"echo": {"mcp:write"}},
	})
	if err := callTool(t, f, f.authorizer(t, auth.Config{}), "echo"); err != nil {
		t.Fatal(err)
	}
	st := f.as.Stats()
	if st.Authorizations != 2 || st.LastAuthorization.Get("scope") != "mcp:basic mcp:write" {
		t.Fatalf("%d authorizations, the last for %q; want 2, the union", st.Authorizations, st.LastAuthorization.Get("scope"))
	}
}

// Step-ups are bounded: a server that keeps asking for one more scope
// gets Config.MaxStepUps of them per request, then its 403 stands.
func TestStepUpBounded(t *testing.T) {
	scopes := map[string][]string{"echo": {"s1", "s2", "s3", "s4"}}
	for _, tt := range []struct {
		max     int
		wantErr bool
		auths   int
	}{{0, true, 3}, {1, true, 2}, {4, false, 5}} {
		f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{ToolScopes: scopes, IncrementalScopes: true})
		err := callTool(t, f, f.authorizer(t, auth.Config{MaxStepUps: tt.max}), "echo")
		var he *jsonrpc.HTTPError
		if tt.wantErr != (err != nil) || (err != nil && (!errors.As(err, &he) || he.StatusCode != 403)) {
			t.Fatalf("MaxStepUps %d: err = %v", tt.max, err)
		}
		if got := f.as.Stats().Authorizations; got != tt.auths {
			t.Fatalf("MaxStepUps %d: %d authorizations, want %d", tt.max, got, tt.auths)
		}
	}
}

// A scope the server keeps refusing after it was granted for this very
// request is not asked for again.
func TestStepUpNotRepeated(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{WithholdScopes: []string{"admin"}},
		oauthserver.ProtectedOptions{ToolScopes: map[string][]string{"echo": {"admin"}}})
	err := callTool(t, f, f.authorizer(t, auth.Config{MaxStepUps: 5}), "echo")
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("err = %v, want the 403", err)
	}
	if got := f.as.Stats().Authorizations; got != 2 {
		t.Fatalf("%d authorizations, want 2 (the first, one step-up)", got)
	}
}
