package auth

import (
	"strings"
	"testing"
)

// FuzzCheckTokenValue: a token accepted fits the bound and holds only what
// an Authorization header carries (printable ASCII, no space in an access
// token); a refusal never repeats the token.
func FuzzCheckTokenValue(f *testing.F) {
	for _, s := range []string{"abc.def-ghi_jkl", "a b", "tok\r\nX-Evil: 1", "\x00", "é", strings.Repeat("a", maxTokenLen+1)} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, v string, access bool) {
		reason := checkTokenValue("access token", v, access)
		if reason != "" {
			if len(v) >= 8 && strings.Contains(reason, v) {
				t.Fatalf("the refusal %q repeats the token", reason)
			}
			return
		}
		if len(v) > maxTokenLen {
			t.Fatalf("accepted a token of %d bytes", len(v))
		}
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c < 0x20 || c > 0x7e || (access && c == ' ') {
				t.Fatalf("accepted a token with byte %#x at %d", c, i)
			}
		}
	})
}

// FuzzCheckScopes: a scope set accepted is at most maxScopes scopes and
// maxScopeBytes as sent, each a non-empty RFC 6749 scope-token.
func FuzzCheckScopes(f *testing.F) {
	for _, s := range []string{"read write", "a\"b", "x\\y", "", "tools:call " + strings.Repeat("s ", 80)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scopes := strings.Split(s, " ")
		if checkScopes(scopes) != nil {
			return
		}
		if len(scopes) > maxScopes || len(strings.Join(scopes, " ")) > maxScopeBytes {
			t.Fatalf("accepted %d scopes of %d bytes", len(scopes), len(s))
		}
		for _, sc := range scopes {
			if sc == "" {
				t.Fatal("accepted an empty scope")
			}
			for i := 0; i < len(sc); i++ {
				if c := sc[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
					t.Fatalf("accepted scope %q with byte %#x", sc, c)
				}
			}
		}
	})
}

// FuzzCheckSecure: a URL authorization may use is absolute, without user
// information or fragment, https or http on a loopback host (never a name
// under localhost), and holds nothing a terminal would act on.
func FuzzCheckSecure(f *testing.F) {
	for _, s := range []string{"https://as.example/token", "http://127.0.0.1:9/t", "http://attacker.localhost/t",
		"http://accounts.example.com%2F@127.0.0.1/authorize", "https://as.example/\u202eexe.txt", "https://as.example/\u009b31m", "http://[::1]/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := checkSecure("endpoint", raw)
		if err != nil {
			return
		}
		if _, bad := unprintable(raw); bad {
			t.Fatalf("accepted %q, which holds a control or format character", raw)
		}
		host := u.Hostname()
		switch {
		case u.Host == "", u.User != nil, u.Fragment != "":
			t.Fatalf("accepted %q: host %q, user %v, fragment %q", raw, u.Host, u.User, u.Fragment)
		case u.Scheme == "https":
		case u.Scheme == "http" && (strings.EqualFold(host, "localhost") || isLoopbackIP(host)):
		default:
			t.Fatalf("accepted %q: scheme %q on host %q", raw, u.Scheme, host)
		}
	})
}
