package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// The client_credentials grant: no person, credentials of the host's,
// authenticated with a secret (basic or post, as the metadata allows) or a
// signed JWT (private_key_jwt).
func TestClientCredentials(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		methods []string
		client  oauthserver.RegisteredClient
		cfg     auth.Config
		want    string
	}{
		{"client_secret_basic", nil, oauthserver.RegisteredClient{ID: "m2m", Secret: "s3cret"},
			auth.Config{ClientID: "m2m", ClientSecret: "s3cret"}, "basic"},
		{"client_secret_post", []string{"client_secret_post"}, oauthserver.RegisteredClient{ID: "m2m", Secret: "s3cret", Method: "client_secret_post"},
			auth.Config{ClientID: "m2m", ClientSecret: "s3cret"}, "post"},
		{"private_key_jwt", []string{"private_key_jwt"}, oauthserver.RegisteredClient{ID: "m2m", PublicKey: &key.PublicKey},
			auth.Config{ClientID: "m2m", PrivateKey: key, KeyID: "k1"}, "jwt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, oauthserver.AuthServerOptions{ClientCredentials: true, AuthMethods: tt.methods, Clients: []oauthserver.RegisteredClient{tt.client}},
				oauthserver.ProtectedOptions{Scopes: []string{"tools"}, ScopeInChallenge: true})
			tt.cfg.Grant = auth.GrantClientCredentials
			a, err := auth.New(tt.cfg) // no Authorize: nobody is there
			if err != nil {
				t.Fatal(err)
			}
			mustConnect(t, testContext(t), f.ps.URL, a)
			st := f.as.Stats()
			if st.Tokens["client_credentials"] != 1 || st.Authorizations != 0 || st.Registrations != 0 {
				t.Fatalf("%+v", st)
			}
			if st.LastTokenAuth != tt.want || st.LastToken.Get("resource") != f.ps.URL || st.LastToken.Get("scope") != "tools" {
				t.Fatalf("token request authenticated with %q, form %v", st.LastTokenAuth, st.LastToken)
			}
		})
	}
}

// Wrong credentials: a typed refusal.
func TestClientCredentialsRefused(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{ClientCredentials: true, Clients: []oauthserver.RegisteredClient{{ID: "m2m", Secret: "right"}}},
		oauthserver.ProtectedOptions{})
	a, err := auth.New(auth.Config{Grant: auth.GrantClientCredentials, ClientID: "m2m", ClientSecret: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	err = connect(testContext(t), f.ps.URL, a)
	var ge *auth.GrantError
	if !errors.As(err, &ge) || ge.Code != "invalid_client" || ge.Status != 401 || ge.Step != "client_credentials" {
		t.Fatalf("err = %v, want a *auth.GrantError invalid_client", err)
	}
}
