package auth_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// browser follows the authorization server's redirects, as a person's
// browser does, until one leads back to the client at redirectURL's host.
func browser(ctx context.Context, authURL string) (string, error) {
	home, _ := url.Parse(redirectURL)
	u := authURL
	for range 5 {
		next, err := oauthserver.FollowAuthorization(ctx, u)
		if err != nil {
			return "", err
		}
		if nu, err := url.Parse(next); err == nil && nu.Host == home.Host {
			return next, nil
		}
		u = next
	}
	return "", fmt.Errorf("too many redirects from %s", authURL)
}

// A mix-up without iss (RFC 9700 section 4.4): two authorization servers
// that send no iss, an honest one the client is registered with, and an
// attacker's that sends the person on to the honest one, with the
// client's id and redirect URI there. The honest server's code comes back
// to the client with the attacker's state; with one redirect URI for
// every issuer it was sent to the attacker's token endpoint. Each
// authorization server now has a redirect URI of its own, and the answer
// that comes back to another's is refused.
func TestMixUpWithoutIssRefused(t *testing.T) {
	ctx := testContext(t)
	noIss := oauthserver.AuthServerOptions{NoIssAdvertised: true, Iss: oauthserver.IssOmit}
	honest := setup(t, noIss, oauthserver.ProtectedOptions{})
	store := &auth.MemoryStore{}
	a := honest.authorizer(t, auth.Config{Store: store, Authorize: browser})
	mustConnect(t, ctx, honest.ps.URL, a)

	ci, err := store.Client(ctx, honest.as.Issuer)
	if err != nil || ci == nil || len(ci.RedirectURIs) != 1 {
		t.Fatalf("the honest registration: %v, %v", ci, err)
	}
	attack := noIss
	attack.ForwardAuthorization = func(q url.Values) string {
		q.Set("client_id", ci.ClientID)
		q.Set("redirect_uri", ci.RedirectURIs[0])
		return honest.as.URL + "/authorize?" + q.Encode()
	}
	attacker := setup(t, attack, oauthserver.ProtectedOptions{})
	err = connect(ctx, attacker.ps.URL, a)
	var ge *auth.GrantError
	if !errors.As(err, &ge) || ge.Step != "authorization" || !strings.Contains(err.Error(), "mix-up") {
		t.Fatalf("err = %v, want an authorization *auth.GrantError naming a mix-up", err)
	}
	if st := attacker.as.Stats(); len(st.Tokens) != 0 {
		t.Fatalf("the attacker's token endpoint got %v", st.Tokens)
	}
	if st := honest.as.Stats(); st.Tokens["authorization_code"] != 1 {
		t.Fatalf("the honest server's token requests: %v", st.Tokens)
	}

	// Its own redirect URIs differ, each under the one configured.
	ai, _ := store.Client(ctx, attacker.as.Issuer)
	if ai == nil || ai.RedirectURIs[0] == ci.RedirectURIs[0] || !strings.HasPrefix(ci.RedirectURIs[0], redirectURL+"/") || !strings.HasPrefix(ai.RedirectURIs[0], redirectURL+"/") {
		t.Fatalf("redirect URIs: honest %v, attacker %v", ci.RedirectURIs, ai)
	}
}

// An authorization server that sends iss keeps the configured redirect
// URI: its responses say whose they are.
func TestRedirectURIKeptWithIss(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
	if got := f.as.Stats().LastAuthorization.Get("redirect_uri"); got != redirectURL {
		t.Fatalf("redirect_uri %q, want %q", got, redirectURL)
	}
}
