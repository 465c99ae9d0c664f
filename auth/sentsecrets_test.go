package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// tokenRequests keeps the credentials in the headers of the token
// requests a server got (its OnRequest): Authorization and DPoP.
type tokenRequests struct {
	mu    sync.Mutex
	creds []string
}

func (q *tokenRequests) note(r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/token") {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if v := r.Header.Get("DPoP"); v != "" {
		q.creds = append(q.creds, v)
	}
	if _, cred, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok {
		q.creds = append(q.creds, cred)
		if raw, err := base64.StdEncoding.DecodeString(cred); err == nil {
			if _, secret, ok := strings.Cut(string(raw), ":"); ok {
				q.creds = append(q.creds, secret)
			}
		}
	}
}

func (q *tokenRequests) values() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.creds...)
}

// sentSecrets are the credentials of a token request's form.
func sentSecrets(form url.Values) []string {
	var out []string
	for _, f := range []string{"code", "code_verifier", "client_secret", "client_assertion", "refresh_token", "assertion", "subject_token", "actor_token"} {
		out = append(out, form[f]...)
	}
	return out
}

// A token endpoint that quotes the whole request back — headers, form as
// sent, each field decoded, in error_description and error_uri — gets
// none of what was sent shown: not in the error, not in any log line at
// any level. For every grant: the code exchange (with a client secret, a
// client assertion, a DPoP proof), a refresh, client_credentials,
// jwt-bearer, and the identity provider's token exchange.
func TestSentSecretsNotShown(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		err     error
		secrets []string
		quoted  bool // the refusal reached only the log (a refresh, followed by a new grant)
	}
	tests := []struct {
		name string
		run  func(t *testing.T, log *slog.Logger) run
	}{
		{"code with client_secret_basic", func(t *testing.T, log *slog.Logger) run {
			var q tokenRequests
			f := setup(t, oauthserver.AuthServerOptions{QuoteRequests: []string{"authorization_code"}, OnRequest: q.note,
				Clients: []oauthserver.RegisteredClient{{ID: "app", Secret: "app-secret-0123"}}}, oauthserver.ProtectedOptions{})
			err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{ClientID: "app", ClientSecret: "app-secret-0123", Logger: log}))
			return run{err: err, secrets: append(append(sentSecrets(f.as.Stats().LastToken), q.values()...), "app-secret-0123")}
		}},
		{"code with client_secret_post", func(t *testing.T, log *slog.Logger) run {
			f := setup(t, oauthserver.AuthServerOptions{QuoteRequests: []string{"authorization_code"}, AuthMethods: []string{"client_secret_post"},
				Clients: []oauthserver.RegisteredClient{{ID: "app", Secret: "app/secret+&=0123", Method: "client_secret_post"}}}, oauthserver.ProtectedOptions{})
			err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{ClientID: "app", ClientSecret: "app/secret+&=0123", Logger: log}))
			return run{err: err, secrets: sentSecrets(f.as.Stats().LastToken)}
		}},
		{"code with private_key_jwt", func(t *testing.T, log *slog.Logger) run {
			f := setup(t, oauthserver.AuthServerOptions{QuoteRequests: []string{"authorization_code"}, AuthMethods: []string{"private_key_jwt"},
				Clients: []oauthserver.RegisteredClient{{ID: "app", PublicKey: &key.PublicKey}}}, oauthserver.ProtectedOptions{})
			err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{ClientID: "app", PrivateKey: key, Logger: log}))
			return run{err: err, secrets: sentSecrets(f.as.Stats().LastToken)}
		}},
		{"code with a DPoP proof", func(t *testing.T, log *slog.Logger) run {
			var q tokenRequests
			f := setup(t, oauthserver.AuthServerOptions{QuoteRequests: []string{"authorization_code"}, DPoP: true, OnRequest: q.note},
				oauthserver.ProtectedOptions{DPoP: true})
			err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{Logger: log}))
			return run{err: err, secrets: append(sentSecrets(f.as.Stats().LastToken), q.values()...)}
		}},
		{"refresh", func(t *testing.T, log *slog.Logger) run {
			f := setup(t, oauthserver.AuthServerOptions{QuoteRequests: []string{"refresh_token"}}, oauthserver.ProtectedOptions{})
			ctx := testContext(t)
			a := f.authorizer(t, auth.Config{Logger: log})
			mustConnect(t, ctx, f.ps.URL, a)
			rt := storedToken(t, a).RefreshToken
			f.as.Revoke() // the next request's 401 makes a refresh, refused quoting it; a new grant follows
			err := connect(ctx, f.ps.URL, a)
			st := f.as.Stats()
			if st.Tokens["refresh_token"] != 1 {
				t.Fatalf("%d refreshes, want 1", st.Tokens["refresh_token"])
			}
			return run{err: err, secrets: []string{rt}, quoted: true}
		}},
		{"client_credentials", func(t *testing.T, log *slog.Logger) run {
			f := setup(t, oauthserver.AuthServerOptions{ClientCredentials: true, QuoteRequests: []string{"client_credentials"}, AuthMethods: []string{"client_secret_post"},
				Clients: []oauthserver.RegisteredClient{{ID: "m2m", Secret: "m2m-secret-0123", Method: "client_secret_post"}}}, oauthserver.ProtectedOptions{})
			a, err := auth.New(auth.Config{Grant: auth.GrantClientCredentials, ClientID: "m2m", ClientSecret: "m2m-secret-0123", Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			err = connect(testContext(t), f.ps.URL, a)
			return run{err: err, secrets: sentSecrets(f.as.Stats().LastToken)}
		}},
		{"jwt-bearer", func(t *testing.T, log *slog.Logger) run {
			f := setup(t, oauthserver.AuthServerOptions{QuoteRequests: []string{"urn:ietf:params:oauth:grant-type:jwt-bearer"}, NoRegistration: true,
				Assertion: func(string, string, string, string) error { return nil }, Clients: []oauthserver.RegisteredClient{{ID: "wl"}}}, oauthserver.ProtectedOptions{})
			a, err := auth.New(auth.Config{Grant: auth.GrantJWTBearer, ClientID: "wl", Logger: log,
				Assertion: func(context.Context, auth.AssertionRequest) (string, error) { return "eyJ.workload-assertion.sig", nil }})
			if err != nil {
				t.Fatal(err)
			}
			err = connect(testContext(t), f.ps.URL, a)
			return run{err: err, secrets: sentSecrets(f.as.Stats().LastToken)}
		}},
		{"token exchange", func(t *testing.T, log *slog.Logger) run {
			e := startEnterprise(t, oauthserver.IdPOptions{QuoteRequests: true})
			a, err := auth.New(auth.Config{Grant: auth.GrantJWTBearer, Assertion: e.idjag().Assertion, ClientID: appID, ClientSecret: appSecret, Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			err = connect(testContext(t), e.ps.URL, a)
			return run{err: err, secrets: append(sentSecrets(e.idp.Stats().LastExchange), "idp-s3cret", base64.StdEncoding.EncodeToString([]byte("idp-client:idp-s3cret")))}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out logtest.Buffer
			log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.Level(-100)}))
			r := tt.run(t, log)
			shown := out.String()
			if r.err != nil {
				shown += "\n" + r.err.Error()
			}
			if r.quoted == (r.err != nil) {
				t.Fatalf("err = %v", r.err)
			}
			if !strings.Contains(shown, "cannot grant POST") {
				t.Fatalf("the refusal, quoting the request, is shown nowhere:\n%s", shown)
			}
			if len(r.secrets) == 0 {
				t.Fatal("no secret was sent")
			}
			for _, s := range r.secrets {
				for _, form := range []string{s, url.QueryEscape(s)} {
					if strings.Contains(shown, form) {
						t.Errorf("%q, sent, is shown:\n%s", form, shown)
					}
				}
			}
		})
	}
}
