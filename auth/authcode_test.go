package auth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// PKCE with S256 is used, and an authorization server that does not
// list S256 is refused before the person is asked anything.
func TestPKCE(t *testing.T) {
	t.Run("S256", func(t *testing.T) {
		f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
		mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
		st := f.as.Stats()
		verifier := st.LastToken.Get("code_verifier")
		sum := sha256.Sum256([]byte(verifier))
		if st.LastAuthorization.Get("code_challenge_method") != "S256" || verifier == "" ||
			st.LastAuthorization.Get("code_challenge") != base64.RawURLEncoding.EncodeToString(sum[:]) {
			t.Fatalf("authorization %v, token %v", st.LastAuthorization, st.LastToken)
		}
	})
	for name, methods := range map[string][]string{"not advertised": {}, "plain only": {"plain"}} {
		t.Run(name, func(t *testing.T) {
			f := setup(t, oauthserver.AuthServerOptions{PKCEMethods: methods}, oauthserver.ProtectedOptions{})
			asked := false
			a := f.authorizer(t, auth.Config{Authorize: func(context.Context, string) (string, error) {
				asked = true
				return "", errors.New("unreachable")
			}})
			err := connect(testContext(t), f.ps.URL, a)
			var me *auth.MetadataError
			if !errors.As(err, &me) || !strings.Contains(me.Reason, "S256") || asked {
				t.Fatalf("err = %v (person asked: %v), want a *auth.MetadataError about S256", err, asked)
			}
		})
	}
}

// The resource indicator (RFC 8707) goes on the authorization and the
// token request: the resource the server's metadata names.
func TestResourceIndicator(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{PRM: oauthserver.PRMRoot})
	mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
	st := f.as.Stats()
	origin := strings.TrimSuffix(f.ps.URL, "/mcp")
	if st.LastAuthorization.Get("resource") != origin || st.LastToken.Get("resource") != origin {
		t.Fatalf("resource: authorization %q, token %q; want %q (the metadata's, exactly)",
			st.LastAuthorization.Get("resource"), st.LastToken.Get("resource"), origin)
	}
}

// tamper returns a headless user that changes the redirect's query.
func tamper(f *fixture, change func(q url.Values)) auth.AuthorizeFunc {
	return func(ctx context.Context, authURL string) (string, error) {
		back, err := f.as.Approve(ctx, authURL)
		if err != nil {
			return "", err
		}
		u, _ := url.Parse(back)
		q := u.Query()
		change(q)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
}

// The state sent is checked on return: a response without it, or with
// another, is not acted on.
func TestStateChecked(t *testing.T) {
	for name, change := range map[string]func(url.Values){
		"changed": func(q url.Values) { q.Set("state", "forged") },
		"missing": func(q url.Values) { q.Del("state") },
	} {
		t.Run(name, func(t *testing.T) {
			f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
			err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{Authorize: tamper(f, change)}))
			var se *auth.StateMismatchError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *auth.StateMismatchError", err)
			}
			if st := f.as.Stats(); len(st.Tokens) != 0 {
				t.Fatalf("the code was sent to the token endpoint: %v", st.Tokens)
			}
			if len(f.as.Stats().LastAuthorization.Get("state")) < 32 {
				t.Fatal("no proper state in the authorization request")
			}
		})
	}
}

// RFC 9207: iss is compared, exactly, whenever present; required when the
// server advertises it; a mismatch is not acted on, not even its error.
func TestIssValidation(t *testing.T) {
	tests := []struct {
		name       string
		advertised bool
		iss        oauthserver.IssMode
		deny       bool
		wantErr    bool
	}{
		{"advertised and correct", true, oauthserver.IssCorrect, false, false},
		{"advertised and missing", true, oauthserver.IssOmit, false, true},
		{"not advertised, missing", false, oauthserver.IssOmit, false, false},
		{"not advertised, present and wrong", false, oauthserver.IssWrong, false, true},
		{"not advertised, present and correct", false, oauthserver.IssCorrect, false, false},
		{"advertised and wrong", true, oauthserver.IssWrong, false, true},
		{"equal only after normalisation", true, oauthserver.IssNormalized, false, true},
		{"wrong, on an error response", true, oauthserver.IssWrong, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, oauthserver.AuthServerOptions{NoIssAdvertised: !tt.advertised, Iss: tt.iss, Deny: tt.deny}, oauthserver.ProtectedOptions{})
			err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
			st := f.as.Stats()
			if !tt.wantErr {
				if err != nil || st.Tokens["authorization_code"] != 1 {
					t.Fatalf("err = %v, token requests %v", err, st.Tokens)
				}
				return
			}
			var ie *auth.IssuerMismatchError
			var ge *auth.GrantError
			if !errors.As(err, &ie) || errors.As(err, &ge) {
				t.Fatalf("err = %v, want an *auth.IssuerMismatchError only", err)
			}
			if len(st.Tokens) != 0 {
				t.Fatalf("the code went to the token endpoint: %v", st.Tokens)
			}
		})
	}
}

// A person who declines: a typed error with the server's code.
func TestAuthorizationDenied(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{Deny: true}, oauthserver.ProtectedOptions{})
	err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
	var ge *auth.GrantError
	if !errors.As(err, &ge) || ge.Code != "access_denied" || ge.Step != "authorization" {
		t.Fatalf("err = %v, want a *auth.GrantError access_denied", err)
	}
}

// Without a way to ask a person, a flow that needs one fails at once,
// typed, before registering anything.
func TestInteractionRequired(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	a, err := auth.New(auth.Config{RedirectURL: redirectURL})
	if err != nil {
		t.Fatal(err)
	}
	err = connect(testContext(t), f.ps.URL, a)
	var ir *auth.InteractionRequiredError
	if !errors.As(err, &ir) || ir.Server != f.ps.URL || ir.Issuer != f.as.Issuer {
		t.Fatalf("err = %v, want *auth.InteractionRequiredError", err)
	}
	// The server's 401 is still known to whoever reports the exchange,
	// and the text names no Go field for a command line's user to puzzle
	// over.
	var refused *auth.RefusedError
	if !errors.As(err, &refused) || refused.HTTPStatus() != http.StatusUnauthorized {
		t.Errorf("err = %v, want an *auth.RefusedError with the server's 401", err)
	}
	if strings.Contains(ir.Error(), "Authorize") {
		t.Errorf("the message names the Go field: %s", ir.Error())
	}
	if st := f.as.Stats(); st.Registrations+st.Authorizations != 0 {
		t.Fatalf("%+v", st)
	}
	if got := f.ps.Hits()["GET /mcp"]; got != 0 {
		t.Fatalf("the 401 made the client try HTTP+SSE: %d GET /mcp", got)
	}
}
