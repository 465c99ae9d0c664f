package access

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Keys are made once per test binary: RSA generation is slow under -race.
var testKeys = sync.OnceValue(func() (k struct {
	rsa, rsaOther *rsa.PrivateKey
	ec            *ecdsa.PrivateKey
}) {
	var err error
	if k.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	if k.rsaOther, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	if k.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		panic(err)
	}
	return k
})

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(kid string, k *rsa.PublicKey) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PublicKey) map[string]any {
	raw, err := k.Bytes()
	if err != nil {
		panic(err)
	}
	return map[string]any{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(raw[1:33]), "y": b64(raw[33:])}
}

// issuer is a fake authorization server: RFC 8414 metadata and a JWKS
// with an RSA key (kid "rsa1") and an ECDSA key (kid "ec1"), each request
// counted by path.
type issuer struct {
	*httptest.Server
	mu       sync.Mutex
	hits     map[string]int
	jwksURI  string // override of the metadata's jwks_uri
	jwksBody []byte // override of the JWKS
	jwksHits atomic.Int64
	// gate, when set, holds every JWKS answer until closed; each JWKS
	// request is first told on started.
	gate    chan struct{}
	started chan struct{}
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{hits: map[string]int{}}
	is.Server = httptest.NewServer(http.HandlerFunc(is.serve))
	t.Cleanup(is.Close)
	return is
}

func (is *issuer) serve(w http.ResponseWriter, r *http.Request) {
	is.mu.Lock()
	is.hits[r.URL.Path]++
	jwksURI, body, gate, started := is.jwksURI, is.jwksBody, is.gate, is.started
	is.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		if jwksURI == "" {
			jwksURI = is.URL + "/jwks"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.URL, "jwks_uri": jwksURI, "token_endpoint": is.URL + "/token"})
	case "/jwks":
		is.jwksHits.Add(1)
		if gate != nil {
			started <- struct{}{}
			<-gate
		}
		if body == nil {
			k := testKeys()
			body, _ = json.Marshal(map[string]any{"keys": []any{rsaJWK("rsa1", &k.rsa.PublicKey), ecJWK("ec1", &k.ec.PublicKey)}})
		}
		_, _ = w.Write(body)
	default:
		http.NotFound(w, r)
	}
}

func (is *issuer) hitsOf(path string) int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.hits[path]
}

const testAudience = "https://gw.example/mcp"

// claims returns valid claims for is, with extra merged in (a nil value
// deletes a claim).
func (is *issuer) claims(extra map[string]any) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": is.URL, "aud": testAudience, "sub": "alice", "client_id": "app",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scope": "mcp team-a",
	}
	maps.Copy(c, extra)
	for k, v := range c {
		if v == nil {
			delete(c, k)
		}
	}
	return c
}

// sign signs claims with the method and key, kid in the header ("" for
// none), typ "at+jwt".
func sign(t testing.TB, m jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, claims)
	tok.Header["typ"] = "at+jwt"
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (is *issuer) rsaToken(t testing.TB, extra map[string]any) string {
	return sign(t, jwt.SigningMethodRS256, testKeys().rsa, "rsa1", is.claims(extra))
}

func (is *issuer) policy(t testing.TB, mod func(*JWTConfig)) *JWTPolicy {
	t.Helper()
	cfg := JWTConfig{Issuer: is.URL, Audience: testAudience, HTTPClient: is.Client()}
	if mod != nil {
		mod(&cfg)
	}
	p, err := JWT(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// request is a GET from a remote address with the Authorization header
// auth ("" for none).
func request(auth string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "https://gw.example/mcp", nil)
	r.RemoteAddr = "192.0.2.7:40000"
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

func bearer(tok string) string { return "Bearer " + tok }

// mustNotShow fails when s shows the token or its signature.
func mustNotShow(t *testing.T, what, s, tok string) {
	t.Helper()
	if tok == "" {
		return
	}
	sig := tok[strings.LastIndexByte(tok, '.')+1:]
	at := strings.Index(s, tok)
	if at < 0 && len(sig) >= 8 {
		at = strings.Index(s, sig)
	}
	if at >= 0 {
		t.Errorf("%s shows the token, at byte %d: %q", what, at, s[max(0, at-80):at])
	}
}
