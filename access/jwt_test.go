package access

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/anymcp/anymcp/internal/logtest"
)

// End to end: an issuer with an RSA and an ECDSA key, tokens signed by
// each, a handler behind the middleware.
func TestJWTEndToEnd(t *testing.T) {
	is := newIssuer(t)
	p := is.policy(t, func(c *JWTConfig) {
		c.Scopes = []string{"mcp"}
		c.Views = map[string]string{"team-a": "a", "team-b": "b"}
	})
	var got Grant
	var sawAuth []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = GrantOf(r.Context())
		sawAuth = r.Header.Values("Authorization")
		_, _ = w.Write([]byte("ok"))
	})
	srv := httptest.NewServer(Middleware(p, "https://gw.example/.well-known/oauth-protected-resource/mcp", next))
	defer srv.Close()
	k := testKeys()
	tokens := map[string]string{
		"RS256":  sign(t, jwt.SigningMethodRS256, k.rsa, "rsa1", is.claims(nil)),
		"ES256":  sign(t, jwt.SigningMethodES256, k.ec, "ec1", is.claims(map[string]any{"scope": "mcp team-b", "sub": "bob"})),
		"no kid": sign(t, jwt.SigningMethodES256, k.ec, "", is.claims(map[string]any{"scope": nil, "scp": []string{"mcp", "team-b"}, "sub": "bob"})),
	}
	want := map[string]Grant{"RS256": {View: "a", Subject: "alice"}, "ES256": {View: "b", Subject: "bob"}, "no kid": {View: "b", Subject: "bob"}}
	for name, tok := range tokens {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d, challenge %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		if got.View != want[name].View || got.Subject != want[name].Subject || got.Expires.IsZero() {
			t.Errorf("%s: grant %+v, want %+v", name, got, want[name])
		}
		if len(sawAuth) != 0 {
			t.Errorf("%s: the handler saw the client's Authorization header", name)
		}
	}
	if n := is.jwksHits.Load(); n != 1 {
		t.Errorf("the key set was fetched %d times, want 1", n)
	}
}

// Every check of the token, each on a token that only it refuses.
func TestJWTRefuses(t *testing.T) {
	is := newIssuer(t)
	k := testKeys()
	pubDER := k.rsa.PublicKey.N.Bytes()
	hour := time.Hour
	tests := []struct {
		name   string
		mod    func(*JWTConfig)
		token  func() string
		status int
		code   string
		reason string
	}{
		{"expired", nil, func() string {
			return is.rsaToken(t, map[string]any{"exp": time.Now().Add(-2 * time.Minute).Unix(), "iat": time.Now().Add(-hour).Unix()})
		}, 401, CodeInvalidToken, "expired"},
		{"no exp", nil, func() string { return is.rsaToken(t, map[string]any{"exp": nil}) }, 401, CodeInvalidToken, "no expiry"},
		{"not valid yet", nil, func() string { return is.rsaToken(t, map[string]any{"nbf": time.Now().Add(hour).Unix()}) }, 401, CodeInvalidToken, "not valid yet"},
		{"issued in the future", nil, func() string { return is.rsaToken(t, map[string]any{"iat": time.Now().Add(hour).Unix()}) }, 401, CodeInvalidToken, "not valid yet"},
		{"wrong iss", nil, func() string { return is.rsaToken(t, map[string]any{"iss": "https://evil.example"}) }, 401, CodeInvalidToken, "not issued by"},
		{"wrong aud", nil, func() string { return is.rsaToken(t, map[string]any{"aud": "https://other.example/mcp"}) }, 401, CodeInvalidToken, "not issued for this server"},
		{"aud prefix only", nil, func() string { return is.rsaToken(t, map[string]any{"aud": testAudience + "x"}) }, 401, CodeInvalidToken, "not issued for this server"},
		{"alg none", nil, func() string {
			return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "rsa1", is.claims(nil))
		}, 401, CodeInvalidToken, "signature or algorithm"},
		{"HS256 with the public key as secret", nil, func() string {
			return sign(t, jwt.SigningMethodHS256, pubDER, "rsa1", is.claims(nil))
		}, 401, CodeInvalidToken, "signature or algorithm"},
		{"RS256 not allowed", func(c *JWTConfig) { c.Algorithms = []string{"ES256"} }, func() string { return is.rsaToken(t, nil) }, 401, CodeInvalidToken, "signature or algorithm"},
		{"another key under a known kid", nil, func() string {
			return sign(t, jwt.SigningMethodRS256, k.rsaOther, "rsa1", is.claims(nil))
		}, 401, CodeInvalidToken, "signature or algorithm"},
		{"ECDSA kid, RSA signature", nil, func() string {
			return sign(t, jwt.SigningMethodRS256, k.rsa, "ec1", is.claims(nil))
		}, 401, CodeInvalidToken, "key the issuer does not publish"},
		{"typ of an ID token's kind", nil, func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, is.claims(nil))
			tok.Header["kid"], tok.Header["typ"] = "rsa1", "dpop+jwt"
			s, _ := tok.SignedString(k.rsa)
			return s
		}, 401, CodeInvalidToken, "typ"},
		{"typ JWT when strict", func(c *JWTConfig) { c.StrictType = true }, func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, is.claims(nil))
			tok.Header["kid"], tok.Header["typ"] = "rsa1", "JWT"
			s, _ := tok.SignedString(k.rsa)
			return s
		}, 401, CodeInvalidToken, "typ"},
		{"not a JWT", nil, func() string { return "abcdefghijklmnopqrstuvwxyz" }, 401, CodeInvalidToken, "not a JWT"},
		{"missing scope", func(c *JWTConfig) { c.Scopes = []string{"mcp", "admin"} }, func() string { return is.rsaToken(t, nil) }, 403, CodeInsufficientScope, "scope admin"},
		{"no view claim", func(c *JWTConfig) { c.ViewClaim = "mcp_view" }, func() string { return is.rsaToken(t, nil) }, 403, CodeInsufficientScope, "names no view"},
		{"no view scope", func(c *JWTConfig) { c.Views = map[string]string{"team-z": "z"} }, func() string { return is.rsaToken(t, nil) }, 403, CodeInsufficientScope, "picks a view"},
		{"two view scopes", func(c *JWTConfig) { c.Views = map[string]string{"team-a": "a", "mcp": "m"} }, func() string { return is.rsaToken(t, nil) }, 403, CodeInsufficientScope, "more than one view"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := tt.token()
			_, err := is.policy(t, tt.mod).Authorize(request(bearer(tok)))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Status != tt.status || e.Code != tt.code || !strings.Contains(e.Reason, tt.reason) {
				t.Fatalf("refusal %d %q %q, want %d %q with %q", e.Status, e.Code, e.Reason, tt.status, tt.code, tt.reason)
			}
			mustNotShow(t, "the error", err.Error(), tok)
		})
	}
	// The same token, valid, passes the default policy: each case above
	// broke exactly one thing.
	if _, err := is.policy(t, nil).Authorize(request(bearer(is.rsaToken(t, nil)))); err != nil {
		t.Fatal(err)
	}
}

// A token with the ViewClaim picks its view.
func TestJWTViewClaim(t *testing.T) {
	is := newIssuer(t)
	p := is.policy(t, func(c *JWTConfig) { c.ViewClaim = "mcp_view" })
	g, err := p.Authorize(request(bearer(is.rsaToken(t, map[string]any{"mcp_view": "ops"}))))
	if err != nil || g.View != "ops" {
		t.Fatalf("grant %+v, err %v", g, err)
	}
}

func randomKid() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// A flood of tokens with random kids makes at most one fetch of the key
// set per MinRefetch, however many there are and however concurrent: the
// concurrent ones wait for the one fetch (the issuer holds it until all
// of them wait, or until a second fetch shows up).
func TestUnknownKidFlood(t *testing.T) {
	const n = 200
	is := newIssuer(t)
	p := is.policy(t, func(c *JWTConfig) { c.MinRefetch = time.Minute })
	clock := time.Now()
	var clockMu sync.Mutex
	p.keys.now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	advance := func(d time.Duration) { clockMu.Lock(); clock = clock.Add(d); clockMu.Unlock() }
	waiting := make(chan struct{}, 2*n)
	p.keys.testHookWait = func() {
		select {
		case waiting <- struct{}{}:
		default: // only a broken single flight waits this often
		}
	}
	if _, err := p.Authorize(request(bearer(is.rsaToken(t, nil)))); err != nil {
		t.Fatal(err)
	}
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = sign(t, jwt.SigningMethodRS256, testKeys().rsaOther, randomKid(), is.claims(nil))
	}
	flood := func() {
		var wg sync.WaitGroup
		for _, tok := range tokens {
			wg.Go(func() {
				_, err := p.Authorize(request(bearer(tok)))
				if !errors.Is(err, ErrInvalidToken) {
					t.Errorf("err = %v, want ErrInvalidToken", err)
				}
			})
		}
		wg.Wait()
	}
	flood() // within MinRefetch of the first fetch: none
	if got := is.jwksHits.Load(); got != 1 {
		t.Fatalf("after a flood within MinRefetch of the first fetch: %d fetches, want 1", got)
	}

	advance(time.Minute + time.Second)
	gate, started := make(chan struct{}), make(chan struct{}, n)
	is.mu.Lock()
	is.gate, is.started = gate, started
	is.mu.Unlock()
	done := make(chan struct{})
	go func() { flood(); close(done) }()
	waiters, fetches := 0, 0
	for waiters < n-1 && fetches < 2 {
		select {
		case <-waiting:
			waiters++
		case <-started:
			fetches++
		}
	}
	close(gate)
	<-done
	if got := is.jwksHits.Load(); got != 2 || waiters != n-1 {
		t.Fatalf("after a flood past MinRefetch: %d fetches (%d callers waited for one), want 2 (%d)", got, waiters, n-1)
	}
	// A kid the issuer has since published is found by that one fetch.
	if _, err := p.Authorize(request(bearer(is.rsaToken(t, nil)))); err != nil {
		t.Fatal(err)
	}
}

// A key set past its TTL is fetched again; while the issuer fails, the
// old keys go on verifying and the issuer is asked at most once per
// MinRefetch.
func TestKeySetTTL(t *testing.T) {
	is := newIssuer(t)
	p := is.policy(t, func(c *JWTConfig) { c.KeysTTL = time.Minute; c.MinRefetch = 10 * time.Second })
	clock := time.Now()
	p.keys.now = func() time.Time { return clock }
	tok := is.rsaToken(t, map[string]any{"exp": clock.Add(24 * time.Hour).Unix()})
	if _, err := p.Authorize(request(bearer(tok))); err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	is.jwksBody = []byte("not json")
	is.mu.Unlock()
	clock = clock.Add(2 * time.Minute)
	for range 5 {
		if _, err := p.Authorize(request(bearer(tok))); err != nil {
			t.Fatalf("with the issuer failing: %v", err)
		}
	}
	if n := is.jwksHits.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2 (the first, one past the TTL)", n)
	}
}

// A key set over MaxKeySetBytes is refused, not read in part: the request
// cannot be decided (503), and the error says why.
func TestKeySetOverCap(t *testing.T) {
	is := newIssuer(t)
	k := testKeys()
	valid, _ := json.Marshal(map[string]any{"keys": []any{rsaJWK("rsa1", &k.rsa.PublicKey)}})
	// Valid JSON (whitespace after it) one byte over the cap.
	is.jwksBody = append(valid, bytes.Repeat([]byte(" "), MaxKeySetBytes+1-len(valid))...)
	p := is.policy(t, nil)
	_, err := p.Authorize(request(bearer(is.rsaToken(t, nil))))
	var e *Error
	if err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), "over 1048576 bytes") {
		t.Fatalf("err = %v, want an undecided error about the size", err)
	}
	// At the cap exactly, the same set is read.
	is.jwksBody = is.jwksBody[:MaxKeySetBytes]
	if err := p.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A jwks_uri on another origin than the issuer's is never fetched: the
// error names JWKSURL. Named by the user, the same URL is used.
func TestJWKSOnOtherOrigin(t *testing.T) {
	is := newIssuer(t)
	other := newIssuer(t)
	is.jwksURI = other.URL + "/jwks"
	p := is.policy(t, nil)
	err := p.Refresh(t.Context())
	if err == nil || !strings.Contains(err.Error(), "set JWKSURL") || !strings.Contains(err.Error(), "not on the issuer's origin") {
		t.Fatalf("err = %v", err)
	}
	if _, err := p.Authorize(request(bearer(is.rsaToken(t, nil)))); err == nil {
		t.Fatal("admitted with keys from another origin")
	}
	if n := other.jwksHits.Load(); n != 0 {
		t.Fatalf("the other origin was asked %d times", n)
	}
	p = is.policy(t, func(c *JWTConfig) { c.JWKSURL = other.URL + "/jwks" })
	if _, err := p.Authorize(request(bearer(is.rsaToken(t, nil)))); err != nil {
		t.Fatal(err)
	}
	if is.hitsOf("/.well-known/oauth-authorization-server") != 1 || other.jwksHits.Load() != 1 {
		t.Fatalf("metadata %d, other jwks %d", is.hitsOf("/.well-known/oauth-authorization-server"), other.jwksHits.Load())
	}
}

// The issuer's metadata must name the issuer exactly (RFC 8414 3.3).
func TestIssuerMetadataMismatch(t *testing.T) {
	is := newIssuer(t)
	p, err := JWT(JWTConfig{Issuer: is.URL + "/", Audience: testAudience, HTTPClient: is.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Refresh(t.Context()); err == nil || !strings.Contains(err.Error(), "names another issuer") {
		t.Fatalf("err = %v", err)
	}
}

func TestJWTConfigRefused(t *testing.T) {
	for _, tt := range []struct {
		cfg  JWTConfig
		want string
	}{
		{JWTConfig{Audience: "x"}, "Issuer is required"},
		{JWTConfig{Issuer: "http://auth.example", Audience: "x"}, "must be https"},
		{JWTConfig{Issuer: "https://u:p@auth.example", Audience: "x"}, "user information"},
		{JWTConfig{Issuer: "https://auth.example"}, "Audience is required"},
		{JWTConfig{Issuer: "https://auth.example", Audience: "x", Algorithms: []string{"HS256"}}, "never none or HS"},
		{JWTConfig{Issuer: "https://auth.example", Audience: "x", Algorithms: []string{"none"}}, "never none or HS"},
		{JWTConfig{Issuer: "https://auth.example", Audience: "x", JWKSURL: "http://keys.example/jwks"}, "must be https"},
		{JWTConfig{Issuer: "https://auth.example", Audience: "x", ViewClaim: "v", Views: map[string]string{"a": "b"}}, "not both"},
	} {
		if _, err := JWT(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want %q", tt.cfg, err, tt.want)
		}
	}
	if _, err := JWT(JWTConfig{Issuer: "http://127.0.0.1:9", Audience: "x"}); err != nil {
		t.Errorf("http on loopback: %v", err)
	}
}

// No token, and no refusal, is ever in an error, a response or a log.
func TestTokenNeverShown(t *testing.T) {
	is := newIssuer(t)
	var logs logtest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := is.policy(t, func(c *JWTConfig) { c.Scopes = []string{"admin"}; c.Logger = log })
	h := Middleware(p, "https://gw.example/.well-known/oauth-protected-resource", http.NotFoundHandler())
	h.Logger = log
	k := testKeys()
	tokens := []string{
		is.rsaToken(t, map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}),
		is.rsaToken(t, map[string]any{"aud": "https://else"}),
		is.rsaToken(t, nil), // lacks the scope
		sign(t, jwt.SigningMethodRS256, k.rsaOther, randomKid(), is.claims(nil)),
		sign(t, jwt.SigningMethodHS256, []byte("0123456789abcdef0123"), "rsa1", is.claims(nil)),
		"not-a-jwt-but-a-secret-value-0123456789",
	}
	for _, tok := range tokens {
		_, err := p.Authorize(request(bearer(tok)))
		if err == nil {
			t.Fatal("admitted")
		}
		mustNotShow(t, "the error", fmt.Sprintf("%v %+v", err, err), tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request(bearer(tok)))
		mustNotShow(t, "the response", fmt.Sprint(w.Code, w.Header(), w.Body.String()), tok)
	}
	// The issuer failing: a 503 and a warning, still without the token.
	is.Close()
	p2 := is.policy(t, func(c *JWTConfig) { c.Logger = log })
	h2 := Middleware(p2, "", http.NotFoundHandler())
	h2.Logger = log
	w := httptest.NewRecorder()
	h2.ServeHTTP(w, request(bearer(tokens[2])))
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d with the issuer down, want 503", w.Code)
	}
	out := logs.String()
	if !strings.Contains(out, "request refused") || !strings.Contains(out, "could not be decided") {
		t.Fatalf("the logs do not show the refusals:\n%s", out)
	}
	for _, tok := range tokens {
		mustNotShow(t, "the logs", out, tok)
	}
}
