package access

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const (
	tokA = "team-a-token-0123456789abcdef"
	tokB = "team-b-token-0123456789abcdef"
)

func TestTokens(t *testing.T) {
	p, err := Tokens(map[string]string{tokA: "a", tokB: ""})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		auth   string
		view   string
		status int
		code   string
	}{
		{"Bearer " + tokA, "a", 0, ""},
		{"bearer  " + tokB, "", 0, ""},
		{"", "", 401, ""},
		{"Basic dXNlcjpwYXNz", "", 401, ""},
		{"Bearer " + tokA + "x", "", 401, CodeInvalidToken},
		{"Bearer " + tokA[:len(tokA)-1], "", 401, CodeInvalidToken},
		{"Bearer tok en", "", 401, CodeInvalidToken},
	} {
		g, err := p.Authorize(request(tt.auth))
		if tt.status == 0 {
			if err != nil || g.View != tt.view || strings.Contains(g.Subject, tokA) || strings.Contains(g.Subject, tokB) {
				t.Errorf("%q: grant %+v, err %v", tt.auth, g, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Status != tt.status || e.Code != tt.code {
			t.Errorf("%q: err = %#v, want %d %q", tt.auth, err, tt.status, tt.code)
			continue
		}
		mustNotShow(t, "the error", err.Error(), strings.TrimPrefix(tt.auth, "Bearer "))
	}
	r := request("Bearer " + tokA)
	r.Header.Add("Authorization", "Bearer "+tokB)
	if _, err := p.Authorize(r); err == nil || err.(*Error).Status != http.StatusBadRequest {
		t.Errorf("two Authorization headers: %v", err)
	}
}

func TestTokensRefusedAtConstruction(t *testing.T) {
	for tok, want := range map[string]string{
		"short-0123456":                   "at least 16",
		"has a space in it 0123456789":    "not a valid bearer token",
		"ctl\x01-0123456789abcdef":        "not a valid bearer token",
		strings.Repeat("a", 17<<10) + "x": "not a valid bearer token",
	} {
		_, err := Tokens(map[string]string{tok: "ops"})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"ops"`) {
			t.Errorf("err = %v, want %q naming the view", err, want)
			continue
		}
		if strings.Contains(err.Error(), tok) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
	if _, err := Tokens(nil); err == nil {
		t.Error("no tokens: no error")
	}
}

// Every configured token is compared, in constant time, on every request:
// which one matched (or none) does not change the work done.
func TestTokensConstantTime(t *testing.T) {
	tokens := map[string]string{tokA: "a", tokB: "b", "third-token-0123456789": "c", "fourth-token-0123456789": "d"}
	p, err := Tokens(tokens)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	constantTimeCompare = func(x, y []byte) int { calls++; return cmp(x, y) }
	t.Cleanup(func() { constantTimeCompare = cmp })
	for _, auth := range []string{"Bearer " + tokA, "Bearer " + tokB, "Bearer fourth-token-0123456789", "Bearer unknown-token-0123456789"} {
		calls = 0
		_, _ = p.Authorize(request(auth))
		if calls != len(tokens) {
			t.Errorf("%q: %d constant-time compares, want %d", auth, calls, len(tokens))
		}
	}
}

var cmp = constantTimeCompare

func TestLoopback(t *testing.T) {
	p := Loopback()
	for _, tt := range []struct {
		remote, host, origin string
		ok                   bool
	}{
		{"127.0.0.1:5000", "127.0.0.1:8080", "", true},
		{"[::1]:5000", "localhost:8080", "http://localhost:3000", true},
		{"127.0.0.1:5000", "", "", true},
		{"192.0.2.1:5000", "127.0.0.1:8080", "", false},
		{"127.0.0.1:5000", "evil.example:8080", "", false},                 // DNS rebinding
		{"127.0.0.1:5000", "127.0.0.1:8080", "http://evil.example", false}, // a web page
		{"127.0.0.1:5000", "127.0.0.1:8080", "null", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://x/mcp", nil)
		r.RemoteAddr, r.Host = tt.remote, tt.host
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		_, err := p.Authorize(r)
		if (err == nil) != tt.ok {
			t.Errorf("%+v: err = %v", tt, err)
		}
		if err != nil && (!errors.Is(err, ErrNotLoopback) || err.(*Error).Status != 403) {
			t.Errorf("%+v: err = %v, want a 403 ErrNotLoopback", tt, err)
		}
	}
}

// Any: the first policy that admits wins; when all refuse, the most
// specific refusal is the answer.
func TestAny(t *testing.T) {
	is := newIssuer(t)
	tokens, err := Tokens(map[string]string{tokA: "a"})
	if err != nil {
		t.Fatal(err)
	}
	p := Any(Loopback(), tokens, is.policy(t, func(c *JWTConfig) { c.Scopes = []string{"admin"} }))
	local := request("")
	local.RemoteAddr, local.Host = "127.0.0.1:1", "127.0.0.1:2"
	if g, err := p.Authorize(local); err != nil || g.Subject != "loopback" {
		t.Fatalf("loopback: %+v %v", g, err)
	}
	if g, err := p.Authorize(request(bearer(tokA))); err != nil || g.View != "a" {
		t.Fatalf("static token: %+v %v", g, err)
	}
	for _, tt := range []struct {
		name   string
		auth   string
		status int
		reason string
	}{
		{"no token: a 401 that invites one, not loopback's 403", "", 401, "a bearer token is required"},
		{"expired JWT: the JWT's reason, not the static token's", bearer(is.rsaToken(t, map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})), 401, "expired"},
		{"valid JWT without the scope: 403", bearer(is.rsaToken(t, nil)), 403, "scope admin"},
		{"unknown opaque token", bearer("opaque-token-0123456789"), 401, "not one this server knows"},
	} {
		_, err := p.Authorize(request(tt.auth))
		var e *Error
		if !errors.As(err, &e) || e.Status != tt.status || !strings.Contains(e.Reason, tt.reason) {
			t.Errorf("%s: err = %v", tt.name, err)
		}
	}
}

// The challenge a client finds the metadata by (RFC 9728 section 5.1),
// and RFC 6750's error codes.
func TestMiddlewareChallenge(t *testing.T) {
	is := newIssuer(t)
	const meta = "https://gw.example/.well-known/oauth-protected-resource/mcp"
	h := Middleware(is.policy(t, func(c *JWTConfig) { c.Scopes = []string{"mcp", "admin"} }), meta, http.NotFoundHandler())
	for _, tt := range []struct {
		auth, want string
		status     int
	}{
		{"", `Bearer resource_metadata="` + meta + `", scope="mcp admin"`, 401},
		{bearer("not-a-jwt-0123456789"), `Bearer resource_metadata="` + meta + `", error="invalid_token", error_description="the bearer token is not a JWT"`, 401},
		{bearer(is.rsaToken(t, nil)), `Bearer resource_metadata="` + meta + `", error="insufficient_scope", error_description="the access token lacks the scope admin", scope="mcp admin"`, 403},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request(tt.auth))
		if w.Code != tt.status || w.Header().Get("WWW-Authenticate") != tt.want {
			t.Errorf("%d %q\nwant %d %q", w.Code, w.Header().Get("WWW-Authenticate"), tt.status, tt.want)
		}
	}
	// A refusal without a token code (Loopback's 403) has no challenge;
	// a nil policy is Loopback.
	for _, p := range []Policy{Loopback(), nil} {
		w := httptest.NewRecorder()
		Middleware(p, meta, http.NotFoundHandler()).ServeHTTP(w, request(""))
		if w.Code != 403 || w.Header().Get("WWW-Authenticate") != "" {
			t.Errorf("loopback refusal: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
}

func TestWWWAuthenticateQuoting(t *testing.T) {
	e := &Error{Status: 401, Code: CodeInvalidToken, Reason: "bad \"quote\" \\ and\r\nnewline é"}
	got := e.WWWAuthenticate("")
	if got != `Bearer error="invalid_token", error_description="bad quote  andnewline "` {
		t.Fatalf("%q", got)
	}
}
