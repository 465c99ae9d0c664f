package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// desktopRunner is a runner on a desktop whose person approves in the
// browser at once.
func desktopRunner(t *testing.T) *runner {
	r := newRunner(t)
	r.goos = "linux"
	r.env["DISPLAY"] = ":0"
	opened := 0
	r.browser = headlessBrowser(t, &opened)
	return r
}

// A token endpoint that quotes the whole request back in its refusal gets
// none of it shown by login: not the code, its verifier or the client
// secret, in text or --json.
func TestAuthLoginSentSecretsNotShown(t *testing.T) {
	as, ps := protectedServer(t, oauthserver.AuthServerOptions{QuoteRequests: []string{"authorization_code"},
		Clients: []oauthserver.RegisteredClient{{ID: "app", Secret: "app-secret-0123"}}})
	for _, asJSON := range []bool{false, true} {
		r := desktopRunner(t)
		r.env["APP_SECRET"] = "app-secret-0123"
		args := []string{"auth", "login", "--client-id", "app", "--client-secret-env", "APP_SECRET", ps.URL}
		if asJSON {
			args = append([]string{"--json"}, args...)
		}
		res := r.run(args...)
		out := res.stdout + res.stderr
		if res.code != exitAuth || !strings.Contains(out, "cannot grant POST") {
			t.Fatalf("json %v: exit %d\n%s", asJSON, res.code, out)
		}
		if asJSON {
			var line errorLine
			if err := json.Unmarshal([]byte(strings.TrimSpace(res.stderr[strings.LastIndex(strings.TrimSpace(res.stderr), "\n")+1:])), &line); err != nil || line.Error.Kind != "auth" {
				t.Fatalf("the last line of stderr is not the --json error (%v):\n%s", err, res.stderr)
			}
		}
		form := as.Stats().LastToken
		for _, f := range []string{"code", "code_verifier"} {
			v := form.Get(f)
			if v == "" {
				t.Fatalf("no %s was sent", f)
			}
			for _, shown := range []string{v, url.QueryEscape(v)} {
				if strings.Contains(out, shown) {
					t.Fatalf("json %v: the %s sent is shown:\n%s", asJSON, f, out)
				}
			}
		}
		if strings.Contains(out, "app-secret-0123") {
			t.Fatalf("json %v: the client secret is shown:\n%s", asJSON, out)
		}
	}
}

// A server whose 403 asks for a huge scope list, run after run, gets an
// authorization error (exit 3) that says how many scopes and bytes, not
// which; the token file does not grow.
func TestAuthHugeScopeChallenge(t *testing.T) {
	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{})
	t.Cleanup(as.Close)
	var scopes []string
	for i := range 20000 {
		scopes = append(scopes, "scope-"+strings.Repeat("x", 8)+"-"+strconv.Itoa(i))
	}
	ps := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as, ScopeChallenge: func(method string) []string {
		if method == "tools/call" {
			return scopes
		}
		return nil
	}})
	t.Cleanup(ps.Close)
	r := desktopRunner(t)
	r.runOK("auth", "login", ps.URL)
	r.browser = nil
	file := filepath.Join(r.home, ".config", "mcpcall", "tokens.json")
	for range 3 {
		res := r.run("tools", "call", "echo", "text=hi", ps.URL)
		if res.code != exitAuth || !strings.Contains(res.stderr, "asks for 20000 scopes") || len(res.stderr) > 4<<10 {
			t.Fatalf("exit %d\nstderr (%d bytes) %.3000s", res.code, len(res.stderr), res.stderr)
		}
		if fi, err := os.Stat(file); err != nil || fi.Size() > 16<<10 {
			t.Fatalf("token file: %v, %v", fi.Size(), err)
		}
	}
	if n := as.Stats().Authorizations; n != 1 {
		t.Fatalf("%d authorizations, want 1 (the login)", n)
	}
}
