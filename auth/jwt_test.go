package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"
)

// The client assertion is a JWS the key's algorithm verifies, with the
// claims RFC 7523 asks for.
func TestClientAssertion(t *testing.T) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		key    crypto.Signer
		alg    string
		verify func(input, sig []byte) bool
	}{
		{p256, "ES256", func(in, sig []byte) bool {
			h := sha256.Sum256(in)
			return len(sig) == 64 && ecdsa.Verify(&p256.PublicKey, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
		}},
		{p384, "ES384", func(in, sig []byte) bool {
			h := sha512.Sum384(in)
			return len(sig) == 96 && ecdsa.Verify(&p384.PublicKey, h[:], new(big.Int).SetBytes(sig[:48]), new(big.Int).SetBytes(sig[48:]))
		}},
		{rsaKey, "RS256", func(in, sig []byte) bool {
			h := sha256.Sum256(in)
			return rsa.VerifyPKCS1v15(&rsaKey.PublicKey, crypto.SHA256, h[:], sig) == nil
		}},
		{edKey, "EdDSA", func(in, sig []byte) bool { return ed25519.Verify(edKey.Public().(ed25519.PublicKey), in, sig) }},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		for range 3 {
			jwt, err := clientAssertion(tt.key, "kid-1", "client-1", "https://as.example.com", now)
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(jwt, ".")
			if len(parts) != 3 {
				t.Fatalf("%s: %q is not a JWS", tt.alg, jwt)
			}
			sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
			if !tt.verify([]byte(parts[0]+"."+parts[1]), sig) {
				t.Fatalf("%s: the signature does not verify", tt.alg)
			}
			var h map[string]string
			var c map[string]any
			hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
			cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
			if json.Unmarshal(hb, &h) != nil || json.Unmarshal(cb, &c) != nil {
				t.Fatal("undecodable header or claims")
			}
			if h["alg"] != tt.alg || h["kid"] != "kid-1" || c["iss"] != "client-1" || c["sub"] != "client-1" || c["aud"] != "https://as.example.com" ||
				c["iat"] != float64(now.Unix()) || c["exp"] != float64(now.Add(5*time.Minute).Unix()) {
				t.Fatalf("%s: header %v, claims %v", tt.alg, h, c)
			}
			jti, _ := c["jti"].(string)
			if jti == "" || seen[jti] {
				t.Fatalf("%s: jti %q missing or repeated", tt.alg, jti)
			}
			seen[jti] = true
		}
	}
}

func TestSigningAlgRefusesWeakKeys(t *testing.T) {
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	for _, k := range []crypto.Signer{small, p224} {
		if _, err := New(Config{ClientID: "c", PrivateKey: k}); err == nil {
			t.Errorf("%T accepted", k)
		}
	}
}
