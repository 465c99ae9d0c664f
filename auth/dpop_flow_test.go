package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"path/filepath"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
)

// dpopServers starts an authorization server that takes DPoP proofs and an
// MCP server that wants DPoP-bound tokens, with the nonce each asks for
// ("" for none).
func dpopServers(t *testing.T, asNonce, rsNonce string) *fixture {
	return setup(t, testservers.AuthServerOptions{DPoP: true, DPoPNonce: asNonce},
		testservers.ProtectedOptions{DPoP: true, DPoPNonce: rsNonce, Scopes: []string{"mcp"}, ScopeInChallenge: true})
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
	f := setup(t, testservers.AuthServerOptions{DPoP: true}, testservers.ProtectedOptions{})
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
