package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// dpopServers starts an authorization server that takes DPoP proofs and an
// MCP server that wants DPoP-bound tokens, with the nonce each asks for
// ("" for none).
func dpopServers(t *testing.T, asNonce, rsNonce string) *fixture {
	return setup(t, oauthserver.AuthServerOptions{DPoP: true, DPoPNonce: asNonce},
		oauthserver.ProtectedOptions{DPoP: true, DPoPNonce: rsNonce, Scopes: []string{"mcp"}, ScopeInChallenge: true})
}

// storedToken returns the one token a's store holds.
func storedToken(t *testing.T, a *auth.Authorizer) *auth.Token {
	t.Helper()
	ctx := testContext(t)
	keys, err := a.Store().Keys(ctx)
	if err != nil || len(keys) != 1 {
		t.Fatalf("stored keys %v, %v", keys, err)
	}
	tok, err := a.Store().Token(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// A server that wants DPoP gets a token bound to the client's key, sent
// with the DPoP scheme and a fresh proof on every request.
func TestDPoP(t *testing.T) {
	f := dpopServers(t, "", "")
	a := f.authorizer(t, auth.Config{})
	mustConnect(t, testContext(t), f.ps.URL, a)
	mustConnect(t, testContext(t), f.ps.URL, a) // the token again, new proofs
	if st := f.as.Stats(); st.DPoPProofs != 1 || st.Authorizations != 1 {
		t.Fatalf("authorization server: %d proofs, %d authorizations; want 1 and 1", st.DPoPProofs, st.Authorizations)
	}
	ds := f.ps.DPoPStats()
	if ds.Proofs < 4 || ds.Replays != 0 || ds.Schemes["Bearer"] != 0 {
		t.Fatalf("MCP server: %+v; want every request with a fresh proof, none Bearer (%s)", ds, ds.LastError)
	}
	tok := storedToken(t, a)
	if tok.TokenType != "DPoP" || tok.JKT == "" {
		t.Fatalf("token type %q, jkt %q", tok.TokenType, tok.JKT)
	}
	if info, ok := f.as.Verify(tok.AccessToken); !ok || info.JKT != tok.JKT {
		t.Fatalf("the server bound the token to %q, the client says %q", info.JKT, tok.JKT)
	}
}

// Nonces (RFC 9449 sections 8 and 9): each server's use_dpop_nonce is
// answered once, and its nonce then used without being asked again.
func TestDPoPNonces(t *testing.T) {
	f := dpopServers(t, "as-nonce-1", "rs-nonce-1")
	mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}))
	if st := f.as.Stats(); st.DPoPNonceChallenges != 1 || st.DPoPProofs != 1 {
		t.Fatalf("authorization server: %d nonce challenges, %d good proofs; want 1 and 1", st.DPoPNonceChallenges, st.DPoPProofs)
	}
	if ds := f.ps.DPoPStats(); ds.NonceChallenges != 1 || ds.Proofs < 2 {
		t.Fatalf("MCP server: %+v; want one nonce challenge, then proofs with the nonce (%s)", ds, ds.LastError)
	}
}

// DPoP only where it is asked for: an authorization server that takes
// proofs, in front of a server that wants Bearer tokens, gives a Bearer
// token, asked for without a proof.
func TestDPoPOnlyWhenAsked(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{DPoP: true}, oauthserver.ProtectedOptions{})
	a := f.authorizer(t, auth.Config{})
	mustConnect(t, testContext(t), f.ps.URL, a)
	if st := f.as.Stats(); st.DPoPProofs != 0 {
		t.Fatalf("%d proofs sent to the authorization server", st.DPoPProofs)
	}
	if tok := storedToken(t, a); tok.TokenType != "Bearer" || tok.JKT != "" {
		t.Fatalf("token type %q, jkt %q", tok.TokenType, tok.JKT)
	}
}

// A FileStore keeps the key with the tokens: the next Authorizer (the
// next run) uses the stored DPoP token, with proofs of the same key. An
// Authorizer with another key does not send it, and gets its own.
func TestDPoPKeyKeptWithTheTokens(t *testing.T) {
	f := dpopServers(t, "", "")
	path := filepath.Join(t.TempDir(), "tokens.json")
	first := f.authorizer(t, auth.Config{Store: auth.NewFileStore(path)})
	mustConnect(t, testContext(t), f.ps.URL, first)
	jkt := storedToken(t, first).JKT

	next := f.authorizer(t, auth.Config{Store: auth.NewFileStore(path)})
	mustConnect(t, testContext(t), f.ps.URL, next)
	if st := f.as.Stats(); st.Authorizations != 1 || st.Tokens["refresh_token"] != 0 {
		t.Fatalf("the next run authorized again (%d authorizations, %d refreshes)", st.Authorizations, st.Tokens["refresh_token"])
	}

	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	foreign := f.authorizer(t, auth.Config{Store: auth.NewFileStore(path), DPoPKey: other})
	mustConnect(t, testContext(t), f.ps.URL, foreign)
	if st := f.as.Stats(); st.Authorizations != 2 {
		t.Fatalf("%d authorizations: want a new one for the other key", st.Authorizations)
	}
	if ds := f.ps.DPoPStats(); ds.LastError != "" {
		t.Fatalf("the token bound to the stored key was sent with another key's proof: %+v (%s)", ds, ds.LastError)
	}
	if tok := storedToken(t, foreign); tok.JKT == jkt || tok.JKT == "" {
		t.Fatalf("jkt %q after the other key's grant (was %q)", tok.JKT, jkt)
	}
}

// NoDPoP: a server that takes DPoP-bound tokens only refuses the Bearer
// token, and its refusal is the answer.
func TestNoDPoP(t *testing.T) {
	f := dpopServers(t, "", "")
	err := connect(testContext(t), f.ps.URL, f.authorizer(t, auth.Config{NoDPoP: true}))
	var he *jsonrpc.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 {
		t.Fatalf("err = %v, want the server's 401", err)
	}
	if st := f.as.Stats(); st.DPoPProofs != 0 {
		t.Fatalf("%d proofs with NoDPoP", st.DPoPProofs)
	}
}

// A token request refused for want of the nonce is made again built anew:
// a private_key_jwt client assertion and an ID-JAG are good once, so
// replaying the refused request's bytes would be refused in turn.
func TestDPoPNonceRequestBuiltAnew(t *testing.T) {
	t.Run("client assertion", func(t *testing.T) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		f := setup(t, oauthserver.AuthServerOptions{ClientCredentials: true, AuthMethods: []string{"private_key_jwt"},
			Clients: []oauthserver.RegisteredClient{{ID: "m2m", PublicKey: &key.PublicKey}}, DPoP: true, DPoPNonce: "as-nonce"},
			oauthserver.ProtectedOptions{DPoP: true})
		a, err := auth.New(auth.Config{Grant: auth.GrantClientCredentials, ClientID: "m2m", PrivateKey: key})
		if err != nil {
			t.Fatal(err)
		}
		mustConnect(t, testContext(t), f.ps.URL, a)
		if st := f.as.Stats(); st.DPoPNonceChallenges != 1 || st.Tokens["client_credentials"] != 2 || st.DPoPProofs != 1 {
			t.Fatalf("nonce challenges %d, token requests %v, good proofs %d; want 1, 2, 1", st.DPoPNonceChallenges, st.Tokens, st.DPoPProofs)
		}
	})
	t.Run("ID-JAG", func(t *testing.T) {
		idp := oauthserver.StartIdP(oauthserver.IdPOptions{ClientID: "idp-client", ClientSecret: "idp-s3cret", IDToken: idToken, GrantClientID: appID})
		t.Cleanup(idp.Close)
		f := setup(t, oauthserver.AuthServerOptions{Assertion: idp.Check, Clients: []oauthserver.RegisteredClient{{ID: appID, Secret: appSecret}}, DPoP: true, DPoPNonce: "as-nonce"},
			oauthserver.ProtectedOptions{DPoP: true})
		j := &auth.IDJAG{TokenEndpoint: idp.TokenEndpoint(), ClientID: "idp-client", ClientSecret: "idp-s3cret",
			IDToken: func(context.Context) (string, error) { return idToken, nil }}
		a, err := auth.New(auth.Config{Grant: auth.GrantJWTBearer, Assertion: j.Assertion, ClientID: appID, ClientSecret: appSecret})
		if err != nil {
			t.Fatal(err)
		}
		mustConnect(t, testContext(t), f.ps.URL, a)
		if n := idp.Stats().Exchanges; n != 2 {
			t.Fatalf("%d exchanges: want a fresh ID-JAG for the request made again", n)
		}
	})
}

// withChallenge adds a challenge to the 401s of the MCP server at origin,
// before (first) or after its own.
type withChallenge struct {
	origin, challenge string
	first             bool
}

func (w withChallenge) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(r.URL.String(), w.origin) {
		v := resp.Header.Values("WWW-Authenticate")
		if w.first {
			v = append([]string{w.challenge}, v...)
		} else {
			v = append(v, w.challenge)
		}
		resp.Header["Www-Authenticate"] = v
	}
	return resp, err
}

// A server that takes both schemes may put its Bearer challenge first
// (RFC 9449 section 7.1): its use_dpop_nonce is found all the same.
func TestDPoPNonceInAnyChallenge(t *testing.T) {
	f := dpopServers(t, "", "rs-nonce-1")
	hc := &http.Client{Transport: withChallenge{origin: f.ps.URL, challenge: `Bearer realm="mcp"`, first: true}}
	mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}), client.WithHTTPClient(hc))
	if st := f.as.Stats(); st.Authorizations != 1 {
		t.Fatalf("%d authorizations, want 1", st.Authorizations)
	}
	if ds := f.ps.DPoPStats(); ds.NonceChallenges != 1 {
		t.Fatalf("MCP server: %+v", ds)
	}
}

// A server that offers DPoP next to Bearer, whose authorization server
// answers a proof with a Bearer token (RFC 9449 section 5 lets it): that
// token and its refresh token are kept and used, not traded for a new
// authorization.
func TestBearerKeptWhereDPoPIsOffered(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{DPoP: true, OnRequest: func(r *http.Request) { r.Header.Del("DPoP") }},
		oauthserver.ProtectedOptions{Scopes: []string{"mcp"}, ScopeInChallenge: true})
	hc := &http.Client{Transport: withChallenge{origin: f.ps.URL, challenge: `DPoP algs="ES256", scope="mcp"`}}
	a := f.authorizer(t, auth.Config{})
	mustConnect(t, testContext(t), f.ps.URL, a, client.WithHTTPClient(hc))
	f.as.Revoke()
	mustConnect(t, testContext(t), f.ps.URL, a, client.WithHTTPClient(hc))
	if st := f.as.Stats(); st.Authorizations != 1 || st.Tokens["refresh_token"] != 1 {
		t.Fatalf("%d authorizations, %d refreshes; want 1 and 1", st.Authorizations, st.Tokens["refresh_token"])
	}
}
