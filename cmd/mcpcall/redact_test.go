package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"
)

// A credential after "Bearer" or "Basic" is hidden only when it has a
// credential's shape; a server's own words after the scheme are kept.
func TestRedactTextShape(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib2IifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	const opaque = "a3f9c0d2e8b14f7a9c6d5e4f3a2b1c0d9e8f7a6b" // 40 hex
	for _, tc := range []struct{ in, want string }{
		// Words: kept.
		{"Unauthorized: Missing bearer token", "Unauthorized: Missing bearer token"},
		{"Missing Bearer Token.", "Missing Bearer Token."},
		{"invalid bearer token: expired", "invalid bearer token: expired"},
		{"the bearer credentials.", "the bearer credentials."},
		{"Bearer realm=\"mcp\", error=\"invalid_token\"", "Bearer realm=\"mcp\", error=\"invalid_token\""},
		{"WWW-Authenticate: Basic realm=\"User Visible Realm\", charset=\"UTF-8\"", "WWW-Authenticate: Basic realm=\"User Visible Realm\", charset=\"UTF-8\""},
		{"Bearer error=invalid_token", "Bearer error=invalid_token"},
		{"expected a bearer well-formed header", "expected a bearer well-formed header"},
		{"basic authentication required", "basic authentication required"},
		{"a bearer of news, basically", "a bearer of news, basically"},
		{"Bearer " + redacted, "Bearer " + redacted},
		{"Bearer abc123", "Bearer abc123"}, // too short to be worth hiding
		// Credentials: hidden, the scheme kept.
		{"Authorization: Bearer " + jwt, "Authorization: Bearer " + redacted},
		{"bad token (Bearer " + jwt + ").", "bad token (Bearer " + redacted + ")."},
		{"Bearer " + opaque, "Bearer " + redacted},
		{"Basic dXNlcjpwYXNz", "Basic " + redacted},
		{"basic YWxhZGRpbjpvcGVuc2VzYW1l", "basic " + redacted},
		{"Basic Ym9iOnNlY3JldA==", "Basic " + redacted},
		{`{"h":"Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a"}`, `{"h":"Bearer ` + redacted + `"}`},
		{"Bearer sk_live_abcdefghijklmnopqrstuvwx, then Bearer hunter2hunter2.", "Bearer " + redacted + ", then Bearer " + redacted + "."},
		{"bearer\tabcdefghijklmnopqrstuvwxyz", "bearer\t" + redacted}, // 26 letters: long enough
	} {
		if got := redactText(tc.in); got != tc.want {
			t.Errorf("redactText(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// A server that answers 401 with its own words about a bearer token
// (notion-mcp-server: "Unauthorized: Missing bearer token") is shown them
// verbatim, exit 3; a token the server echoes is still hidden.
func TestUnauthorizedTextShown(t *testing.T) {
	const token = "tok_echoed_0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := "Unauthorized: Missing bearer token"
		if a := r.Header.Get("Authorization"); a != "" {
			msg = "Unauthorized: invalid bearer token: expired (got " + a + ")"
		}
		http.Error(w, msg, http.StatusUnauthorized)
	}))
	defer srv.Close()
	for _, flags := range [][]string{nil, {"--json"}} {
		res := newRunner(t).run(append(append([]string{"tools", "list"}, flags...), srv.URL+"/mcp")...)
		if res.code != exitAuth || !strings.Contains(res.stderr, "Unauthorized: Missing bearer token") || strings.Contains(res.stderr, redacted) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and the server's words verbatim", flags, res.code, res.stderr, exitAuth)
		}
		r := newRunner(t)
		r.env["TOK"] = token
		res = r.run(append(append([]string{"tools", "list", "--bearer-env", "TOK"}, flags...), srv.URL+"/mcp")...)
		if res.code != exitAuth || !strings.Contains(res.stderr, "invalid bearer token: expired") || strings.Contains(res.stderr, token[:8]) {
			t.Errorf("%v with a token: exit %d, stderr:\n%s\nwant exit %d, the server's words and the token hidden", flags, res.code, res.stderr, exitAuth)
		}
	}
}

// FuzzRedact: whatever a server writes around it, a secret mcpcall knows
// never survives the scrub of stderr; and text of small letters, spaces
// and ":,-" (what a server writes about a missing token) is kept as it is,
// unless a run of 24 letters could be a token.
func FuzzRedact(f *testing.F) {
	f.Add("Unauthorized: Missing bearer token", "tok_SuperSecret_42", 5)
	f.Add("Bearer realm=\"mcp\"", "ab/cd+ef==", 0)
	f.Add("Authorization: Bearer X…", "abcd1234efgh5678", 22)
	f.Add("cut: abcd…", "a<b>&c-secret", 4)
	f.Fuzz(func(t *testing.T, text, secret string, at int) {
		if strings.ContainsAny(secret, "[]") || strings.Contains(redacted, secret) || strings.ContainsFunc(secret, unicode.IsSpace) {
			t.Skip() // overlaps the marker itself, or is trimmed before it is known
		}
		if at < 0 {
			at = -at
		}
		at %= len(text) + 1
		in := text[:at] + secret + text[at:]
		var sec secrets
		sec.add(secret)
		out := sec.scrub(in)
		if len(secret) >= minSecretLen && strings.Contains(out, secret) {
			t.Fatalf("scrub(%q) with secret %q = %q", in, secret, out)
		}
		plain := !strings.ContainsFunc(text, func(r rune) bool {
			return !('a' <= r && r <= 'z' || r == ' ' || r == ':' || r == ',' || r == '-')
		})
		// A run of 24 letters is long enough to be a token.
		if plain && longestWord(text) < 24 && redactText(text) != text {
			t.Fatalf("redactText(%q) = %q: a word was hidden", text, redactText(text))
		}
	})
}

// longestWord is the length of the longest run of letters, '-' and '_'.
func longestWord(s string) int {
	n, best := 0, 0
	for i := 0; i < len(s); i++ {
		if wordByte(s[i]) || s[i] == '-' {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
