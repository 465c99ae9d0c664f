package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/testservers"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// protectedServer starts an authorization server and an MCP server that
// wants its tokens.
func protectedServer(t *testing.T, aso oauthserver.AuthServerOptions) (*oauthserver.AuthServer, *oauthserver.ProtectedServer) {
	t.Helper()
	as := oauthserver.StartAuthServer(aso)
	t.Cleanup(as.Close)
	ps := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as, Scopes: []string{"mcp"}, ScopeInChallenge: true})
	t.Cleanup(ps.Close)
	return as, ps
}

// headlessBrowser is a desktop browser whose user approves at once: it
// opens the authorization URL and follows the redirect home.
func headlessBrowser(t *testing.T, opened *int) func(ctx context.Context, u string) error {
	return func(ctx context.Context, u string) error {
		*opened++
		back, err := oauthserver.FollowAuthorization(ctx, u)
		if err != nil {
			return err
		}
		go func() { // as a browser does, after the opener returned
			resp, err := http.Get(back)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
		return nil
	}
}

// loggedIn returns the runner of a desktop user who ran auth login (with
// flags, when given) for url; nobody can be asked for anything after.
func loggedIn(t *testing.T, url string, flags ...string) *runner {
	t.Helper()
	r := newRunner(t)
	r.goos = "linux"
	r.env["DISPLAY"] = ":0"
	opened := 0
	r.browser = headlessBrowser(t, &opened)
	r.runOK(append(append([]string{"auth", "login"}, flags...), url)...)
	r.browser = nil
	return r
}

// The whole life of a login: login on a desktop (the browser opened), the
// token used by later commands without asking anyone, refreshed when
// refused, listed, forgotten; then a command that needs a login fails at
// once, naming the login to run.
func TestAuthLoginLifecycle(t *testing.T) {
	as, ps := protectedServer(t, oauthserver.AuthServerOptions{})
	r := newRunner(t)
	r.goos = "linux"
	r.env["DISPLAY"] = ":0"
	opened := 0
	r.browser = headlessBrowser(t, &opened)

	res := r.runOK("auth", "login", ps.URL)
	if opened != 1 || !strings.Contains(res.stderr, "/authorize?") || !strings.HasPrefix(res.stdout, "logged in to "+ps.URL+" at "+as.Issuer+": expires ") ||
		!strings.Contains(res.stdout, "refreshable, scopes mcp") {
		t.Fatalf("browser opened %d times\nstdout %q\nstderr %q", opened, res.stdout, res.stderr)
	}
	file := filepath.Join(r.home, ".config", "mcpcall", "tokens.json")
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", fi, err)
	}

	r.browser = nil // from here on nobody may be asked
	if res := r.runOK("tools", "call", "echo", "text=hi", ps.URL); res.stdout != "hi\n" {
		t.Fatalf("stdout %q", res.stdout)
	}
	as.Revoke()
	r.runOK("tools", "list", ps.URL)
	if st := as.Stats(); st.Authorizations != 1 || st.Tokens["refresh_token"] != 1 {
		t.Fatalf("authorizations %d, refreshes %d", st.Authorizations, st.Tokens["refresh_token"])
	}

	res = r.runOK("auth", "status")
	if !strings.Contains(res.stdout, ps.URL) || !strings.Contains(res.stdout, as.Issuer) || !strings.Contains(res.stdout, "refreshable") {
		t.Fatalf("status: %s", res.stdout)
	}
	res = r.runOK("auth", "status", "--json", ps.URL)
	var st struct {
		Tokens []struct {
			Resource, Issuer string
			Token            map[string]any
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil || len(st.Tokens) != 1 || st.Tokens[0].Token["refreshable"] != true {
		t.Fatalf("status --json: %s (%v)", res.stdout, err)
	}
	raw, _ := os.ReadFile(file)
	var stored struct {
		Tokens []struct {
			Token struct {
				AccessToken string `json:"access_token"`
			}
		}
	}
	json.Unmarshal(raw, &stored)
	if tok := stored.Tokens[0].Token.AccessToken; tok == "" || strings.Contains(res.stdout, tok) {
		t.Fatal("status shows the token")
	}

	if res := r.runOK("auth", "logout", ps.URL); !strings.Contains(res.stdout, "logged out of "+ps.URL) {
		t.Fatalf("logout: %s", res.stdout)
	}
	res = r.run("tools", "list", ps.URL)
	if res.code != exitAuth || !strings.Contains(res.stderr, "mcpcall auth login "+ps.URL) {
		t.Fatalf("after logout: exit %d, stderr %q", res.code, res.stderr)
	}
	if got := as.Stats().Authorizations; got != 1 {
		t.Fatalf("a command started an authorization: %d", got)
	}
}

// urlTap finds the authorization URL login prints and plays the user.
type urlTap struct {
	t    *testing.T
	mu   sync.Mutex
	buf  strings.Builder
	done bool
	wg   sync.WaitGroup
}

var authURLRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/authorize\?\S+`)

func (u *urlTap) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.buf.Write(p)
	if m := authURLRE.FindString(u.buf.String()); m != "" && !u.done {
		u.done = true
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			back, err := oauthserver.FollowAuthorization(context.Background(), m)
			if err != nil {
				u.t.Error(err)
				return
			}
			resp, err := http.Get(back)
			if err != nil {
				u.t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	return len(p), nil
}

// Without a desktop session, or with --no-browser, login only prints the
// URL; the person follows it from elsewhere.
func TestAuthLoginPrintsURL(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"no desktop", map[string]string{}, nil},
		{"--no-browser on a desktop", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, []string{"--no-browser"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := protectedServer(t, oauthserver.AuthServerOptions{})
			r := newRunner(t)
			r.goos = "linux"
			for k, v := range tt.env {
				r.env[k] = v
			}
			tap := &urlTap{t: t}
			r.stderrTap = tap
			r.runOK(append(append([]string{"auth", "login"}, tt.args...), ps.URL)...)
			tap.wg.Wait()
			r.runOK("tools", "list", ps.URL)
		})
	}
}

// A run that needs a login exits 3 at once and names the exact login to
// run, client flags and config names included; --json carries it too.
func TestAuthLoginNeeded(t *testing.T) {
	as, ps := protectedServer(t, oauthserver.AuthServerOptions{Clients: []oauthserver.RegisteredClient{{ID: "my app"}}})
	r := newRunner(t)
	res := r.run("tools", "list", "--client-id", "my app", "--scope", "a b", ps.URL)
	want := "mcpcall auth login --client-id 'my app' --scope 'a b' " + ps.URL
	if res.code != exitAuth || !strings.Contains(res.stderr, want) {
		t.Fatalf("exit %d, stderr %q; want 3 and %q", res.code, res.stderr, want)
	}
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), `{"mcpServers": {"prot": {"type": "http", "url": "`+ps.URL+`"}}}`)
	res = r.run("ping", "--json", "prot")
	var line struct{ Error struct{ Kind, Login string } }
	if err := json.Unmarshal([]byte(strings.TrimSpace(res.stderr)), &line); err != nil || res.code != exitAuth ||
		line.Error.Kind != "auth" || line.Error.Login != "mcpcall auth login prot" {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	if st := as.Stats(); st.Authorizations+st.Registrations != 0 {
		t.Fatalf("%+v", st)
	}
}

// The OAuth fields of config entries: Claude Code's "oauth" and Cursor's
// "auth" (its secret expanded from the environment) name the client.
func TestAuthConfigFields(t *testing.T) {
	as, ps := protectedServer(t, oauthserver.AuthServerOptions{Clients: []oauthserver.RegisteredClient{
		{ID: "claude-client"}, {ID: "cursor-client", Secret: "cursor-secret"},
	}})
	r := newRunner(t)
	r.goos = "linux"
	r.env["DISPLAY"] = ":0"
	r.env["CURSOR_SECRET"] = "cursor-secret"
	opened := 0
	r.browser = headlessBrowser(t, &opened)
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), `{"mcpServers": {
		"claude": {"type": "http", "url": "`+ps.URL+`", "oauth": {"clientId": "claude-client", "scopes": "mcp extra"}},
		"cursor": {"url": "`+ps.URL+`", "auth": {"CLIENT_ID": "cursor-client", "CLIENT_SECRET": "${env:CURSOR_SECRET}", "scopes": ["mcp"]}}
	}}`)
	r.runOK("auth", "login", "claude")
	st := as.Stats()
	if st.LastAuthorization.Get("client_id") != "claude-client" || st.LastAuthorization.Get("scope") != "mcp extra" || st.LastTokenAuth != "none" || st.Registrations != 0 {
		t.Fatalf("claude entry: %v, auth %s", st.LastAuthorization, st.LastTokenAuth)
	}
	r.runOK("auth", "login", "cursor")
	st = as.Stats()
	if st.LastAuthorization.Get("client_id") != "cursor-client" || st.LastTokenAuth != "basic" || st.Registrations != 0 {
		t.Fatalf("cursor entry: %v, auth %s", st.LastAuthorization, st.LastTokenAuth)
	}
	res := r.runOK("servers", "--json")
	if strings.Contains(res.stdout, "cursor-secret") || !strings.Contains(res.stdout, `"clientId": "cursor-client"`) && !strings.Contains(res.stdout, `"clientId":"cursor-client"`) {
		t.Fatalf("servers --json: %s", res.stdout)
	}
}

// Credentials of the user's own (--bearer-env) are sent as given: no
// OAuth on top.
func TestAuthNotWithBearerEnv(t *testing.T) {
	_, ps := protectedServer(t, oauthserver.AuthServerOptions{})
	r := newRunner(t)
	r.env["TOKEN"] = "not-a-valid-token"
	res := r.run("ping", "--bearer-env", "TOKEN", ps.URL)
	if res.code != exitAuth || strings.Contains(res.stderr, "log in first") {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
}

// The trace shows the authorization's exchanges, never a token.
func TestAuthTraceRedacted(t *testing.T) {
	_, ps := protectedServer(t, oauthserver.AuthServerOptions{AuthMethods: []string{"client_secret_basic"}})
	r := newRunner(t)
	r.goos = "linux"
	r.env["DISPLAY"] = ":0"
	opened := 0
	r.browser = headlessBrowser(t, &opened)
	trace := filepath.Join(r.cwd, "trace.ndjson")
	r.runOK("auth", "login", "--trace", trace, ps.URL)
	r.runOK("tools", "list", "--trace", trace+".2", ps.URL)
	raw, _ := os.ReadFile(filepath.Join(r.home, ".config", "mcpcall", "tokens.json"))
	var stored struct {
		Tokens []struct {
			Token struct {
				AccessToken  string `json:"access_token"`
				RefreshToken string `json:"refresh_token"`
			}
		}
		Clients []struct {
			Secret string `json:"client_secret"`
		}
	}
	if err := json.Unmarshal(raw, &stored); err != nil || len(stored.Tokens) != 1 || len(stored.Clients) != 1 {
		t.Fatalf("store %s: %v", raw, err)
	}
	for _, f := range []string{trace, trace + ".2"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{stored.Tokens[0].Token.AccessToken, stored.Tokens[0].Token.RefreshToken, stored.Clients[0].Secret} {
			if secret == "" || strings.Contains(string(b), secret) {
				t.Fatalf("%s holds a secret (%q), or the secret is empty", f, secret)
			}
		}
	}
	b, _ := os.ReadFile(trace + ".2")
	if !strings.Contains(string(b), `"Authorization":"Bearer [REDACTED]"`) {
		t.Fatalf("the bearer header is not in the trace, redacted:\n%s", b)
	}
	b, _ = os.ReadFile(trace)
	if !strings.Contains(string(b), "/token") || !strings.Contains(string(b), `"Authorization":"Basic [REDACTED]"`) {
		t.Fatalf("the token request is not in the login's trace, redacted:\n%s", b)
	}
}

// A token from a pre-registered public client (--client-id) is refreshed
// by later commands that do not repeat the flag.
func TestAuthRefreshWithoutClientFlags(t *testing.T) {
	as, ps := protectedServer(t, oauthserver.AuthServerOptions{Clients: []oauthserver.RegisteredClient{{ID: "public-app"}}})
	r := loggedIn(t, ps.URL, "--client-id", "public-app")
	as.Revoke()
	r.runOK("tools", "list", ps.URL)
	if st := as.Stats(); st.Tokens["refresh_token"] != 1 || st.Registrations != 0 || st.LastToken.Get("client_id") != "public-app" {
		t.Fatalf("%+v", st)
	}
}

// A server that asks for nothing has nothing to log in to.
func TestAuthLoginUnprotected(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	t.Cleanup(srv.Close)
	r := newRunner(t)
	res := r.run("auth", "login", "--no-browser", srv.URL)
	if res.code != exitAuth || !strings.Contains(res.stderr, "nothing to log in to") || strings.Contains(res.stderr, "/authorize") {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
}

// A DPoP-bound token outlives the login that got it: the key is kept in
// the token file, so a later command sends the token with proofs of the
// same key, refreshes it with them, and nobody is asked again.
func TestAuthDPoPTokenOutlivesTheRun(t *testing.T) {
	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{DPoP: true})
	t.Cleanup(as.Close)
	ps := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as, DPoP: true})
	t.Cleanup(ps.Close)
	r := loggedIn(t, ps.URL)
	if res := r.runOK("tools", "call", "echo", "text=hi", ps.URL); res.stdout != "hi\n" {
		t.Fatalf("stdout %q", res.stdout)
	}
	as.Revoke()
	r.runOK("tools", "list", ps.URL)
	st, ds := as.Stats(), ps.DPoPStats()
	if st.Authorizations != 1 || st.Tokens["refresh_token"] != 1 || st.DPoPProofs != 2 {
		t.Fatalf("authorizations %d, refreshes %d, proofs at the token endpoint %d; want 1, 1, 2", st.Authorizations, st.Tokens["refresh_token"], st.DPoPProofs)
	}
	if ds.Proofs == 0 || ds.Schemes["Bearer"] != 0 || ds.LastError != "" {
		t.Fatalf("MCP server: %+v", ds)
	}
}

// Grants that need nobody: a command authorizes by itself with
// client_credentials or jwt-bearer (a workload token in a file), no login
// first; the assertion never shows, in a result or in --trace.
func TestAuthGrantFlags(t *testing.T) {
	const assertion = "workload-jwt-8d3f0a77"
	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{
		ClientCredentials: true,
		Clients:           []oauthserver.RegisteredClient{{ID: "m2m", Secret: "m2m-s3cret"}, {ID: "workload"}},
		Assertion: func(a, clientID, _, _ string) error {
			if a != assertion || clientID != "workload" {
				return errors.New("not this workload's token")
			}
			return nil
		},
	})
	t.Cleanup(as.Close)
	ps := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as})
	t.Cleanup(ps.Close)

	r := newRunner(t)
	r.env["M2M_SECRET"] = "m2m-s3cret"
	if res := r.runOK("--grant", "client_credentials", "--client-id", "m2m", "--client-secret-env", "M2M_SECRET", "tools", "call", "echo", "text=hi", ps.URL); res.stdout != "hi\n" {
		t.Fatalf("client_credentials: stdout %q", res.stdout)
	}
	file := filepath.Join(r.cwd, "token")
	if err := os.WriteFile(file, []byte(assertion+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(r.cwd, "trace.ndjson")
	r2 := newRunner(t) // another user: no stored token
	r2.cwd = r.cwd
	res := r2.runOK("--assertion-file", file, "--client-id", "workload", "--trace", trace, "tools", "call", "echo", "text=is it "+assertion+"?", ps.URL)
	if !strings.HasPrefix(res.stdout, "is it ") || strings.Contains(res.stdout, assertion) {
		t.Fatalf("jwt-bearer: stdout %q, want the echo without the assertion", res.stdout)
	}
	st := as.Stats()
	if st.Tokens["client_credentials"] != 1 || st.Tokens["urn:ietf:params:oauth:grant-type:jwt-bearer"] != 1 || st.Authorizations != 0 {
		t.Fatalf("token requests %v, authorizations %d", st.Tokens, st.Authorizations)
	}
	b, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(b), "/token") {
		t.Fatalf("trace %s: %v", b, err)
	}
	if strings.Contains(string(b), assertion) {
		t.Fatal("the trace shows the assertion")
	}

	for _, args := range [][]string{
		{"--grant", "password"},
		{"--grant", "jwt-bearer", "--client-id", "workload"},
		{"--grant", "client_credentials", "--assertion-file", file, "--client-id", "m2m"},
		{"--assertion-file", file}, // no --client-id
	} {
		if res := newRunner(t).run(append(args, "tools", "list", ps.URL)...); res.code != exitUsage {
			t.Errorf("%q: exit %d, want %d (usage); stderr %q", args, res.code, exitUsage, res.stderr)
		}
	}
}

// mcpcall runs side by side, after the token they share was refused,
// renew it once between them: one refresh, whose token the others find in
// the store. Each used to spend the old refresh token: all but one were
// refused, and a server that takes a reused refresh token for a stolen one
// revokes the whole login.
func TestAuthParallelRunsRefreshOnce(t *testing.T) {
	as, ps := protectedServer(t, oauthserver.AuthServerOptions{})
	r := loggedIn(t, ps.URL)
	as.Revoke()
	const n = 4
	results := make(chan result, n)
	for range n {
		go func() { results <- r.run("tools", "list", ps.URL) }()
	}
	for range n {
		if res := <-results; res.code != 0 {
			t.Errorf("exit %d: %s", res.code, res.stderr)
		}
	}
	if st := as.Stats(); st.Authorizations != 1 || st.Tokens["refresh_token"] != 1 {
		t.Fatalf("authorizations %d, refreshes %d; want 1 and 1", st.Authorizations, st.Tokens["refresh_token"])
	}
	r.runOK("tools", "list", ps.URL) // the store holds the refreshed token
}

// A pre-registered client's secret goes to its own authorization server
// only: the one --client-issuer (or the config entry's "issuer") names,
// else the first that issued it a token. Another server's authorization
// server (one that would take the client id, as an attacker's does) gets
// neither a token request nor the secret.
func TestAuthClientSecretBoundToIssuer(t *testing.T) {
	clients := []oauthserver.RegisteredClient{{ID: "conf", Secret: "conf-s3cret"}}
	as1, ps1 := protectedServer(t, oauthserver.AuthServerOptions{Clients: clients})
	as2, ps2 := protectedServer(t, oauthserver.AuthServerOptions{Clients: clients})
	client := []string{"--client-id", "conf", "--client-secret-env", "CONF_SECRET"}
	desktop := func() *runner {
		r := newRunner(t)
		r.goos = "linux"
		r.env["DISPLAY"] = ":0"
		r.env["CONF_SECRET"] = "conf-s3cret"
		opened := 0
		r.browser = headlessBrowser(t, &opened)
		return r
	}
	refused := func(what string, as *oauthserver.AuthServer, res result) {
		t.Helper()
		st := as.Stats()
		if res.code == 0 || st.Authorizations != 0 || len(st.Tokens) != 0 || st.LastTokenAuth != "" || !strings.Contains(res.stderr, "pre-registered client is for") {
			t.Fatalf("%s: exit %d, authorization server saw %d authorizations, token requests %v\nstderr %q", what, res.code, st.Authorizations, st.Tokens, res.stderr)
		}
	}

	// The issuer named: another is refused before anything is sent.
	r := desktop()
	res := r.run(append(append([]string{"auth", "login"}, client...), "--client-issuer", as2.Issuer, ps1.URL)...)
	refused("--client-issuer another", as1, res)
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), `{"mcpServers": {"conf": {"url": "`+ps1.URL+`", "auth": {"CLIENT_ID": "conf", "CLIENT_SECRET": "${env:CONF_SECRET}", "issuer": "`+as2.Issuer+`"}}}}`)
	refused("config entry's issuer", as1, r.run("auth", "login", "conf"))
	r.runOK(append(append([]string{"auth", "login"}, client...), "--client-issuer", as1.Issuer, ps1.URL)...)
	if st := as1.Stats(); st.LastTokenAuth != "basic" || st.Tokens["authorization_code"] != 1 {
		t.Fatalf("its own issuer: %+v", st)
	}

	// None named: a warning, then bound to the first that issued a token.
	r = desktop()
	res = r.runOK(append(append([]string{"auth", "login"}, client...), ps1.URL)...)
	if !strings.Contains(res.stderr, "no --client-issuer") {
		t.Fatalf("no warning: stderr %q", res.stderr)
	}
	refused("bound to the first", as2, r.run(append(append([]string{"auth", "login"}, client...), ps2.URL)...))
	if res := r.runOK(append(append([]string{"tools", "call", "echo", "text=hi"}, client...), ps1.URL)...); res.stdout != "hi\n" || strings.Contains(res.stderr, "no --client-issuer") {
		t.Fatalf("its own server: stdout %q, stderr %q", res.stdout, res.stderr)
	}
}

// With an authorization server that sends no iss, login registers a
// redirect URI of that server's own, below the listener's, and the
// browser comes back there.
func TestAuthLoginWithoutIss(t *testing.T) {
	as, ps := protectedServer(t, oauthserver.AuthServerOptions{NoIssAdvertised: true, Iss: oauthserver.IssOmit})
	r := loggedIn(t, ps.URL, "--wait", "20s")
	r.runOK("tools", "list", ps.URL)
	got := as.Stats().LastAuthorization.Get("redirect_uri")
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/callback/[0-9a-f]{16}$`).MatchString(got) {
		t.Fatalf("redirect_uri %q", got)
	}
}

// The TypeScript SDK's OAuth demo keeps its registrations and tokens in
// memory. After it restarts, the kept token is answered 500; logout then
// login registers again by itself (a warning says so), where the login
// reused the forgotten client id, whose authorization page answers 400
// invalid_client, and waited for --wait.
func TestAuthLoginAfterServerForgot(t *testing.T) {
	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{})
	t.Cleanup(as.Close)
	ps := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as, StaleTokenStatus: http.StatusInternalServerError})
	t.Cleanup(ps.Close)
	r := loggedIn(t, ps.URL)
	as.Forget()

	res := r.run("tools", "list", ps.URL)
	if res.code == 0 || !strings.Contains(res.stderr, "500") || !strings.Contains(res.stderr, "mcpcall auth logout "+ps.URL) {
		t.Fatalf("stale token: exit %d, stderr %q", res.code, res.stderr)
	}
	t.Logf("stale token:\n%s", res.stderr)
	res = r.run("tools", "list", "--json", ps.URL)
	if !strings.Contains(res.stderr, `"logout":"mcpcall auth logout `+ps.URL+`"`) {
		t.Fatalf("stale token, --json: stderr %q", res.stderr)
	}
	r.runOK("auth", "logout", ps.URL)
	r2 := loggedInAs(t, r, ps.URL, "--wait", "20s")
	if st := as.Stats(); st.Registrations != 2 || !strings.Contains(r2.stderr, "no longer knows this client's registration") {
		t.Fatalf("registrations %d; stderr %q", st.Registrations, r2.stderr)
	}
	t.Logf("login again:\n%s", r2.stderr)
	r.runOK("tools", "list", ps.URL)
}

// logout --forget-client forgets the registration too: the next login
// registers again, without a warning.
func TestAuthLogoutForgetClient(t *testing.T) {
	as, ps := protectedServer(t, oauthserver.AuthServerOptions{})
	r := loggedIn(t, ps.URL)
	res := r.runOK("auth", "logout", "--forget-client", ps.URL)
	if !strings.Contains(res.stdout, "forgot the client registration at "+as.Issuer) {
		t.Fatalf("stdout %q", res.stdout)
	}
	res = r.runOK("auth", "logout", "--forget-client", "--json", ps.URL)
	if !strings.Contains(res.stdout, `"forgotRegistrations":[]`) {
		t.Fatalf("again, --json: %q", res.stdout)
	}
	res = loggedInAs(t, r, ps.URL)
	if st := as.Stats(); st.Registrations != 2 || strings.Contains(res.stderr, "no longer knows") {
		t.Fatalf("registrations %d; stderr %q", st.Registrations, res.stderr)
	}
}

// loggedInAs runs auth login (with flags) for url as r's user, on a
// desktop whose browser approves at once.
func loggedInAs(t *testing.T, r *runner, url string, flags ...string) result {
	t.Helper()
	r.goos = "linux"
	r.env["DISPLAY"] = ":0"
	opened := 0
	r.browser = headlessBrowser(t, &opened)
	defer func() { r.browser = nil }()
	return r.runOK(append(append([]string{"auth", "login"}, flags...), url)...)
}
