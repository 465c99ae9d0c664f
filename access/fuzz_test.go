package access

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzAuthorize: whatever the Authorization header, a JWT policy (and Any
// over it and static tokens) never panics, and admits only the tokens it
// was given as valid: a token signed by the issuer's key, or a static
// token. The key set is loaded beforehand and never fetched again, so the
// fuzzer runs without a network.
func FuzzAuthorize(f *testing.F) {
	const issuerURL = "https://issuer.example"
	k := testKeys()
	claims := func(extra map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{"iss": issuerURL, "aud": testAudience, "sub": "alice", "exp": time.Now().Add(24 * time.Hour).Unix(), "scope": "mcp"}
		for n, v := range extra {
			c[n] = v
		}
		return c
	}
	valid := []string{
		sign(f, jwt.SigningMethodRS256, k.rsa, "rsa1", claims(nil)),
		sign(f, jwt.SigningMethodRS256, k.rsa, "", claims(map[string]any{"aud": []string{"x", testAudience}})),
		"static-token-0123456789",
	}
	for _, tok := range valid {
		f.Add("Bearer " + tok)
	}
	f.Add("Bearer " + sign(f, jwt.SigningMethodRS256, k.rsa, "rsa1", claims(map[string]any{"exp": 1})))
	f.Add("Bearer " + sign(f, jwt.SigningMethodRS256, k.rsaOther, "rsa1", claims(nil)))
	f.Add("Bearer " + sign(f, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "rsa1", claims(nil)))
	f.Add("Bearer " + sign(f, jwt.SigningMethodHS256, k.rsa.PublicKey.N.Bytes(), "rsa1", claims(nil)))
	f.Add("Bearer eyJhbGciOiJSUzI1NiJ9.e30.")
	f.Add("bearer   a.b.c")
	f.Add("Basic YTpi")
	f.Add("")

	p, err := JWT(JWTConfig{Issuer: issuerURL, Audience: testAudience, JWKSURL: "http://127.0.0.1:9/never", MinRefetch: 1000 * time.Hour, KeysTTL: 1000 * time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	p.keys.keys = []publicKey{{kid: "rsa1", key: &k.rsa.PublicKey}}
	loaded := time.Now()
	p.keys.fetched, p.keys.tried = loaded, loaded
	static, err := Tokens(map[string]string{"static-token-0123456789": "s"})
	if err != nil {
		f.Fatal(err)
	}
	both := Any(Loopback(), static, p)

	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodGet, "https://gw.example/mcp", nil)
		r.RemoteAddr = "192.0.2.1:1"
		r.Header["Authorization"] = []string{header}
		for _, pol := range []Policy{p, both} {
			_, err := pol.Authorize(r)
			if err != nil {
				if e, ok := err.(*Error); ok {
					_ = e.WWWAuthenticate("https://gw.example/.well-known/oauth-protected-resource")
				}
				continue
			}
			tok, _ := bearerToken(r)
			if !slices.Contains(valid, tok) {
				t.Fatalf("admitted a token it was not given: %q", header)
			}
		}
		p.keys.mu.Lock()
		tried := p.keys.tried
		p.keys.mu.Unlock()
		if !tried.Equal(loaded) {
			t.Fatal("the key set was fetched")
		}
	})
}
