package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

const cimdURL = "https://client.example.com/anymcp.json"

// Registration follows the specification's order: pre-registered
// credentials, a Client ID Metadata Document when the server supports
// them, then Dynamic Client Registration with application_type.
func TestRegistrationOrder(t *testing.T) {
	pre := oauthserver.RegisteredClient{ID: "pre-id", Secret: "pre-secret"}
	tests := []struct {
		name       string
		as         oauthserver.AuthServerOptions
		cfg        auth.Config
		wantClient string // "" for a dynamically registered one
		wantAuth   string // how the token request authenticated
		wantDCR    int
	}{
		{"pre-registered, though the server also registers", oauthserver.AuthServerOptions{Clients: []oauthserver.RegisteredClient{pre}, CIMD: true},
			auth.Config{ClientID: "pre-id", ClientSecret: "pre-secret", ClientMetadataURL: cimdURL}, "pre-id", "basic", 0},
		{"metadata document, supported", oauthserver.AuthServerOptions{CIMD: true},
			auth.Config{ClientMetadataURL: cimdURL}, cimdURL, "none", 0},
		{"metadata document, not supported: registration", oauthserver.AuthServerOptions{},
			auth.Config{ClientMetadataURL: cimdURL}, "", "none", 1},
		{"registration", oauthserver.AuthServerOptions{}, auth.Config{}, "", "none", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, tt.as, oauthserver.ProtectedOptions{})
			mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, tt.cfg))
			st := f.as.Stats()
			id := st.LastAuthorization.Get("client_id")
			if st.Registrations != tt.wantDCR || (tt.wantClient != "" && id != tt.wantClient) || (tt.wantClient == "" && (id == "" || id == cimdURL)) {
				t.Fatalf("registrations %d, client_id %q; want %d, %q", st.Registrations, id, tt.wantDCR, tt.wantClient)
			}
			if st.LastTokenAuth != tt.wantAuth {
				t.Fatalf("token request authenticated with %q, want %q", st.LastTokenAuth, tt.wantAuth)
			}
			if tt.wantDCR > 0 {
				reg := st.LastRegistration
				if reg["application_type"] != "native" || reg["token_endpoint_auth_method"] != "none" ||
					!strings.Contains(fmtAny(reg["grant_types"]), "refresh_token") {
					t.Fatalf("registration request %v", reg)
				}
			}
		})
	}
}

// fmtAny joins a JSON list of strings.
func fmtAny(v any) string {
	var b strings.Builder
	if list, ok := v.([]any); ok {
		for _, x := range list {
			s, _ := x.(string)
			b.WriteString(s + " ")
		}
	}
	return b.String()
}

// The token endpoint authentication is what the server's metadata allows.
func TestTokenEndpointAuthMethod(t *testing.T) {
	for method, want := range map[string]string{"none": "none", "client_secret_basic": "basic", "client_secret_post": "post"} {
		t.Run(method, func(t *testing.T) {
			f := setup(t, oauthserver.AuthServerOptions{AuthMethods: []string{method}}, oauthserver.ProtectedOptions{})
			mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
			if got := f.as.Stats().LastTokenAuth; got != want {
				t.Fatalf("authenticated with %q, want %q", got, want)
			}
		})
	}
	t.Run("pre-registered, post only", func(t *testing.T) {
		f := setup(t, oauthserver.AuthServerOptions{AuthMethods: []string{"client_secret_post"},
			Clients: []oauthserver.RegisteredClient{{ID: "c", Secret: "s", Method: "client_secret_post"}}}, oauthserver.ProtectedOptions{})
		mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{ClientID: "c", ClientSecret: "s"}))
		if got := f.as.Stats().LastTokenAuth; got != "post" {
			t.Fatalf("authenticated with %q, want post", got)
		}
	})
}

// No registration possible: the error says a client id is needed.
func TestNoRegistrationPossible(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{NoRegistration: true}, oauthserver.ProtectedOptions{})
	err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{ClientMetadataURL: cimdURL}))
	var me *auth.MetadataError
	if !errors.As(err, &me) || !strings.Contains(me.Reason, "pre-registered client id") {
		t.Fatalf("err = %v", err)
	}
}

// Pre-registered credentials bound to an issuer are not sent to another.
func TestPreRegisteredForAnotherIssuer(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{Clients: []oauthserver.RegisteredClient{{ID: "c", Secret: "s"}}}, oauthserver.ProtectedOptions{})
	err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{ClientID: "c", ClientSecret: "s", ClientIssuer: "https://as.example.com"}))
	var me *auth.MetadataError
	if !errors.As(err, &me) || !strings.Contains(me.Reason, "pre-registered") {
		t.Fatalf("err = %v", err)
	}
	if st := f.as.Stats(); st.Authorizations+len(st.Tokens) != 0 {
		t.Fatalf("the credentials were used: %+v", st)
	}
}

// Registrations are kept per issuer: when the server moves to another
// authorization server, the client registers there and never presents the
// first server's client id to it.
func TestMigrationRegistersAgain(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	as2 := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{})
	defer as2.Close()
	store := &auth.MemoryStore{}
	a, err := auth.New(auth.Config{RedirectURL: redirectURL, Store: store, Authorize: func(ctx context.Context, u string) (string, error) {
		if strings.HasPrefix(u, as2.URL) {
			return as2.Approve(ctx, u)
		}
		return f.as.Approve(ctx, u)
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	mustConnect(t, ctx, f.ps.URL, a)
	first := f.as.Stats().LastAuthorization.Get("client_id")

	f.ps.SetAuthServer(as2) // the first server's tokens are refused from now on
	mustConnect(t, ctx, f.ps.URL, a)
	st2 := as2.Stats()
	if st2.Registrations != 1 {
		t.Fatalf("registrations at the new server: %d, want 1", st2.Registrations)
	}
	if id := st2.LastAuthorization.Get("client_id"); id == "" || id == first || st2.LastToken.Get("client_id") == first {
		t.Fatalf("the new server saw client_id %q (the old one is %q)", id, first)
	}
	for _, is := range []string{f.as.Issuer, as2.Issuer} {
		if c, _ := store.Client(ctx, is); c == nil || c.Issuer != is {
			t.Fatalf("no registration kept for %s", is)
		}
	}
	keys, _ := store.Keys(ctx)
	if len(keys) != 1 || keys[0].Issuer != as2.Issuer {
		t.Fatalf("token keys %v: want only the new issuer's", keys)
	}
}
