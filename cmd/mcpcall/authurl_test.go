package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// The authorization URL is the authorization server's text: what in it
// is not printable reaches the terminal escaped, in text and in --json,
// and the JSON still reads back as the URL.
func TestAuthorizationURLShownEscaped(t *testing.T) {
	const u = "http://127.0.0.1:1/auth/\u202emoc.elpmaxe/\u009b2J/\x1b]8;;x\x07?client_id=a\U000E0041"
	for _, jsonOut := range []bool{false, true} {
		var b bytes.Buffer
		showAuthorization(&b, jsonOut, u, "http://127.0.0.1:2/callback")
		out := b.String()
		if strings.ContainsAny(out, "\u202e\u009b\x1b\x07\U000E0041") {
			t.Fatalf("json %v: raw control characters in %q", jsonOut, out)
		}
		if !jsonOut {
			if !strings.Contains(out, `\u202e`) || !strings.Contains(out, "http://127.0.0.1:2/callback") {
				t.Fatalf("text: %q", out)
			}
			continue
		}
		var v struct{ Authorize, Redirect string }
		if err := json.Unmarshal(b.Bytes(), &v); err != nil || v.Authorize != u {
			t.Fatalf("json: %q reads back as %q (%v)", out, v.Authorize, err)
		}
	}
}

// A hostile authorization server's endpoints (a C1 CSI or a right-to-left
// override in the authorization endpoint, user information before its
// host) end the login with an error that shows them escaped; no URL is
// printed, no browser opened.
func TestAuthLoginRefusesHostileAuthorizationURL(t *testing.T) {
	for name, edit := range map[string]func(string) string{
		"C1 CSI":                 func(e string) string { return e + "/\u009b2J" },
		"right-to-left override": func(e string) string { return e + "/\u202emoc.elpmaxe" },
		"userinfo": func(e string) string {
			return strings.Replace(e, "http://", "http://accounts.example.com%2Fsignin@", 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			as, ps := protectedServer(t, oauthserver.AuthServerOptions{EditMetadata: func(m map[string]any) {
				m["authorization_endpoint"] = edit(m["authorization_endpoint"].(string))
			}})
			r := newRunner(t)
			r.goos = "linux"
			r.env["DISPLAY"] = ":0"
			opened := 0
			r.browser = headlessBrowser(t, &opened)
			res := r.run("auth", "login", ps.URL)
			if res.code == 0 || opened != 0 || strings.Contains(res.stderr, "Open this URL") ||
				strings.ContainsAny(res.stderr+res.stdout, "\u009b\u202e") || !strings.Contains(res.stderr, "authorization_endpoint") {
				t.Fatalf("exit %d, browser opened %d times\nstdout %q\nstderr %q", res.code, opened, res.stdout, res.stderr)
			}
			if st := as.Stats(); st.Authorizations != 0 || len(st.Tokens) != 0 {
				t.Fatalf("%+v", st)
			}
		})
	}
}
