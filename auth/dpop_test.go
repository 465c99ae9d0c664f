package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// decodeProof checks a proof's signature with the key of its own jwk and
// returns its header and claims.
func decodeProof(t *testing.T, proof string) (map[string]any, map[string]any) {
	t.Helper()
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", proof)
	}
	enc := base64.RawURLEncoding
	var header, claims map[string]any
	for i, v := range []*map[string]any{&header, &claims} {
		b, err := enc.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	jwk, _ := header["jwk"].(map[string]any)
	x, _ := enc.DecodeString(fmt.Sprint(jwk["x"]))
	y, _ := enc.DecodeString(fmt.Sprint(jwk["y"]))
	if _, private := jwk["d"]; private || len(x) != 32 || len(y) != 32 {
		t.Fatalf("jwk %v: want a P-256 public key alone", jwk)
	}
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	sig, _ := enc.DecodeString(parts[2])
	h := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the proof's signature does not verify with its jwk")
	}
	return header, claims
}

func TestDPoPProof(t *testing.T) {
	k, err := newDPoPKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("HTTPS://MCP.Example.com:8443/a%2Fb/mcp?api_key=s3cret#frag")
	p1, err := k.proof("POST", u, "the-access-token", time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	header, claims := decodeProof(t, p1)
	if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
		t.Errorf("header %v", header)
	}
	sum := sha256.Sum256([]byte("the-access-token"))
	want := map[string]any{
		"htm": "POST",
		"htu": "https://mcp.example.com:8443/a%2Fb/mcp", // no query, no fragment
		"iat": float64(1700000000),
		"ath": base64.RawURLEncoding.EncodeToString(sum[:]),
	}
	for name, v := range want {
		if claims[name] != v {
			t.Errorf("%s = %v, want %v", name, claims[name], v)
		}
	}
	if _, ok := claims["nonce"]; ok {
		t.Errorf("a nonce before any server gave one: %v", claims)
	}
	p2, _ := k.proof("POST", u, "the-access-token", time.Unix(1700000000, 0))
	if _, c2 := decodeProof(t, p2); c2["jti"] == claims["jti"] || claims["jti"] == "" {
		t.Errorf("jti %v then %v: want a fresh one per proof", claims["jti"], c2["jti"])
	}
	// The thumbprint is RFC 7638's: SHA-256 of the required members, in
	// order.
	jwk := header["jwk"].(map[string]any)
	th := sha256.Sum256([]byte(fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, jwk["x"], jwk["y"])))
	if k.jkt != base64.RawURLEncoding.EncodeToString(th[:]) {
		t.Errorf("jkt %s", k.jkt)
	}
	// A token request's proof has no ath.
	p3, _ := k.proof("POST", u, "", time.Now())
	if _, c3 := decodeProof(t, p3); c3["ath"] != nil {
		t.Errorf("ath without a token: %v", c3)
	}
}

// A server's nonce is sent to that origin only; a nonce over 1 KiB is not
// kept, nor more than 64 origins' nonces.
func TestDPoPNonceTable(t *testing.T) {
	k, err := newDPoPKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	answer := func(rawURL, nonce string) *http.Response {
		req, _ := http.NewRequest("POST", rawURL, nil)
		return &http.Response{Header: http.Header{"Dpop-Nonce": {nonce}}, Request: req}
	}
	if !k.noteNonce(answer("https://as.example.com/token", "n-1")) {
		t.Fatal("nonce not noted")
	}
	as, _ := url.Parse("https://AS.example.com/other")
	rs, _ := url.Parse("https://rs.example.com/mcp")
	if k.nonce(as) != "n-1" || k.nonce(rs) != "" {
		t.Fatalf("nonces %q, %q: want the origin's alone", k.nonce(as), k.nonce(rs))
	}
	p, _ := k.proof("GET", as, "", time.Now())
	if _, c := decodeProof(t, p); c["nonce"] != "n-1" {
		t.Fatalf("proof claims %v: want the origin's nonce", c)
	}
	if k.noteNonce(answer("https://as.example.com/token", strings.Repeat("n", 1025))) || k.nonce(as) != "n-1" {
		t.Fatal("a 1025-byte nonce was kept")
	}
	for i := range 200 {
		k.noteNonce(answer(fmt.Sprintf("https://s%d.example.com/", i), "n"))
	}
	if len(k.nonces) > maxDPoPNonceOrigins {
		t.Fatalf("%d nonces kept, want at most %d", len(k.nonces), maxDPoPNonceOrigins)
	}
}

func TestDPoPKeyMustBeP256(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{DPoPKey: key}); err == nil {
		t.Fatal("a P-384 DPoP key was taken")
	}
	a, err := New(Config{NoDPoP: true})
	if err != nil || a.key(t.Context()) != nil {
		t.Fatalf("NoDPoP: %v, a key all the same", err)
	}
}
