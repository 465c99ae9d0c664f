package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/testservers"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// echoingServer answers every request with a 500 whose body repeats the
// credentials it was sent: the Authorization header, its token alone, and
// an X-Api-Key, as a careless server's error page does.
func echoingServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz := r.Header.Get("Authorization")
		token := strings.TrimPrefix(authz, "Bearer ")
		http.Error(w, "internal error; request had Authorization: "+authz+" token="+token+" key="+r.Header.Get("X-Api-Key"), http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// jsonEscaped is s as encoding/json writes it inside a string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// shows reports which of secrets out holds, as they are or JSON-escaped,
// whole or their first half (-v's negotiation report cuts long errors).
func shows(out string, secrets ...string) []string {
	var found []string
	for _, s := range secrets {
		half := s[:len(s)/2]
		if strings.Contains(out, half) || strings.Contains(out, jsonEscaped(half)) {
			found = append(found, s)
		}
	}
	return found
}

// A server that echoes the credentials it was sent in an error body:
// mcpcall's error (text or --json) and its logs (-v) show the failure,
// and neither the --bearer-env token nor a -H key, however the server
// wrote them.
func TestErrorsHideCredentials(t *testing.T) {
	const token, apiKey = "tok_SuperSecret_42", "key-abc-123-xyz"
	const oddToken = "tok<Odd>&Secret" // escaped by encoding/json: \u003c, \u003e, \u0026
	url := echoingServer(t)
	for _, tc := range []struct {
		name  string
		token string
		flags []string
	}{
		{"text", token, nil},
		{"json", token, []string{"--json"}},
		{"verbose", token, []string{"-v"}},
		{"json verbose", token, []string{"--json", "-v"}},
		{"odd token json", oddToken, []string{"--json", "-v"}},
		{"odd token text", oddToken, []string{"-v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			r.env["MYTOK"] = tc.token
			args := append([]string{"ping", "--bearer-env", "MYTOK", "-H", "X-Api-Key: " + apiKey}, tc.flags...)
			res := r.run(append(args, url)...)
			if res.code != exitConnect || !strings.Contains(res.stderr, "500") || !strings.Contains(res.stderr, "internal error") {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and the 500 shown", res.code, res.stderr, exitConnect)
			}
			if found := shows(res.stdout+res.stderr, tc.token, apiKey); len(found) > 0 {
				t.Errorf("the output shows %q:\nstdout:\n%s\nstderr:\n%s", found, res.stdout, res.stderr)
			}
			// The library hides the echoed header values itself
			// (wire.HideRequestSecrets, as "…"); mcpcall's filter catches
			// what is left ([REDACTED]). One of them must have acted.
			if !strings.Contains(res.stderr, redacted) && !strings.Contains(res.stderr, "Authorization: …") {
				t.Errorf("nothing hidden in stderr:\n%s", res.stderr)
			}
		})
	}
}

// A result or a server log that carries the run's credentials (here the
// echo tool's text, and a log record, that name them) shows them
// redacted, on stdout and stderr, in text and --json; the rest of the
// result is as the server sent it.
func TestResultsHideCredentials(t *testing.T) {
	const token, apiKey = "tok_SuperSecret_42", "key-abc-123-xyz"
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	for _, asJSON := range []bool{false, true} {
		r := newRunner(t)
		r.env["MYTOK"] = token
		creds := []string{"--bearer-env", "MYTOK", "-H", "X-Api-Key: " + apiKey}
		if asJSON {
			creds = append(creds, "--json")
		}
		res := r.runOK(append([]string{"tools", "call", "echo", "text=sent " + token + " and " + apiKey + ", a bearer token"}, append(creds, srv.URL)...)...)
		if found := shows(res.stdout+res.stderr, token, apiKey); len(found) > 0 {
			t.Errorf("json %v: the echo shows %q:\nstdout:\n%s\nstderr:\n%s", asJSON, found, res.stdout, res.stderr)
		}
		if !strings.Contains(res.stdout, "sent "+redacted+" and "+redacted+", a bearer token") {
			t.Errorf("json %v: stdout %q, want the echo with the credentials redacted and the rest as sent", asJSON, res.stdout)
		}
		res = r.runOK(append([]string{"tools", "call", "log", "level=warning", "message=saw " + token}, append(creds, srv.URL)...)...)
		if found := shows(res.stdout+res.stderr, token); len(found) > 0 || !strings.Contains(res.stderr, "saw "+redacted) {
			t.Errorf("json %v: the server log shows %q, or not the log redacted:\nstderr:\n%s", asJSON, found, res.stderr)
		}
	}
}

// The scrub: a secret inside a longer one does not cut the longer one
// apart, a secret cut short by "…" is hidden up to the cut, a secret
// JSON-escaped (as encoding/json does, or with "\/") is hidden, and text
// without secrets is left alone.
func TestSecretsScrub(t *testing.T) {
	var sec secrets
	for _, v := range []string{"Bearer abcd1234", "abcd1234efgh5678", "a<b>&c-secret", "no", " ", "ab/cd+ef=="} {
		sec.add(v)
	}
	for in, want := range map[string]string{
		"x abcd1234efgh5678 y":                 "x " + redacted + " y",
		"x abcd1234 y":                         "x " + redacted + " y",
		"cut: abcd1234ef…":                     "cut: " + redacted + "…",
		"cut: abcd…, and no cut: abc…":         "cut: " + redacted + "…, and no cut: abc…",
		`{"t":"a\u003cb\u003e\u0026c-secret"}`: `{"t":"` + redacted + `"}`,
		"a<b>&c-secret":                        redacted,
		`{"t":"ab\/cd+ef=="}`:                  `{"t":"` + redacted + `"}`,
		"ab/cd+ef==":                           redacted,
		"no secrets, no change: no":            "no secrets, no change: no",
	} {
		if got := sec.scrubKnown(in); got != want {
			t.Errorf("scrubKnown(%q) = %q, want %q", in, got, want)
		}
	}
	var out strings.Builder
	w := &scrubbedWriter{w: &out, sec: &sec}
	if n, err := w.Write([]byte("token abcd1234, a bearer token\n")); n != 31 || err != nil {
		t.Errorf("Write: %d, %v", n, err)
	}
	text := &scrubbedWriter{w: &out, sec: &sec, text: true}
	if _, err := text.Write([]byte("Authorization: Bearer zzzz9999\n")); err != nil {
		t.Error(err)
	}
	if want := "token " + redacted + ", a bearer token\nAuthorization: Bearer " + redacted + "\n"; out.String() != want {
		t.Errorf("written %q, want %q", out.String(), want)
	}
}

// Credentials from the token store are hidden too: after a login, a
// result that carries the stored access token (the one the server was
// sent) does not show it.
func TestStoredTokenHidden(t *testing.T) {
	_, ps := protectedServer(t, oauthserver.AuthServerOptions{})
	r := loggedIn(t, ps.URL)
	raw, err := os.ReadFile(filepath.Join(r.home, ".config", "mcpcall", "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Tokens []struct {
			Token struct {
				AccessToken string `json:"access_token"`
			}
		}
	}
	if err := json.Unmarshal(raw, &stored); err != nil || len(stored.Tokens) != 1 || stored.Tokens[0].Token.AccessToken == "" {
		t.Fatalf("store %s: %v", raw, err)
	}
	access := stored.Tokens[0].Token.AccessToken
	for _, flags := range [][]string{nil, {"--json"}} {
		args := append([]string{"tools", "call", "echo", "text=token " + access}, flags...)
		res := r.runOK(append(args, ps.URL)...)
		if found := shows(res.stdout+res.stderr, access); len(found) > 0 || !strings.Contains(res.stdout, "token "+redacted) {
			t.Errorf("%v: the output shows the token, or not the echo redacted:\nstdout:\n%s\nstderr:\n%s", flags, res.stdout, res.stderr)
		}
	}
}

// A stdio server's stderr reaches mcpcall in reads of 4 KiB, which may
// cut a credential in two: lines are passed on whole, so the scrub sees
// it whole. An unfinished line goes out at Flush; a line longer than
// maxStderrLine goes out in pieces, so what is held back stays bounded.
func TestStderrLinesScrubbedWhole(t *testing.T) {
	const token = "sk_live_0123456789abcdef"
	text := strings.Repeat("x", 4073) + " Authorization: Bearer " + token + "\nnext line\n"
	cut := strings.Index(text, token) + 5
	var out strings.Builder
	lw := &lineWriter{w: &scrubbedWriter{w: &out, sec: &secrets{}, text: true}}
	for _, part := range []string{text[:cut], text[cut:], "unfinished"} {
		if n, err := lw.Write([]byte(part)); err != nil || n != len(part) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if strings.Contains(out.String(), token[:5]+"…") || strings.Contains(out.String(), token) || strings.Contains(out.String(), token[5:]) {
		t.Fatalf("the cut token shows: %q", out.String()[4000:])
	}
	if !strings.HasSuffix(out.String(), "Bearer [REDACTED]\nnext line\n") {
		t.Fatalf("output ends %q", out.String()[4000:])
	}
	lw.Flush()
	if !strings.HasSuffix(out.String(), "next line\nunfinished") {
		t.Fatalf("after Flush, output ends %q", out.String()[4000:])
	}
	out.Reset()
	long := strings.Repeat("y", maxStderrLine+10)
	lw.Write([]byte(long))
	if out.Len() != len(long) || len(lw.buf) != 0 {
		t.Fatalf("a %d-byte line: %d written, %d held", len(long), out.Len(), len(lw.buf))
	}
}

// TestStdioEnvCredentialHidden: a stdio server takes its credentials in
// its environment, from a config entry's "env" (expanded) or -e; a value
// whose name reads as a credential is hidden when the server echoes it on
// stderr, like a -H or --bearer-env value, where it was shown as it came.
func TestStdioEnvCredentialHidden(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	path, _, _ := testservers.StdioCommand()
	script := `echo "starting with API_KEY=$API_KEY" >&2; exec "$0"`
	check := func(what string, res result) {
		t.Helper()
		if res.code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, res.code, res.stderr)
		}
		if strings.Contains(res.stdout+res.stderr, key) || !strings.Contains(res.stderr, "starting with API_KEY="+redacted) {
			t.Errorf("%s: want the key hidden on stderr:\n%s", what, res.stderr)
		}
	}
	entry, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{
		"command": "sh", "args": []string{"-c", script, path},
		"env": map[string]string{"ANYMCP_TESTSERVER": "stdio", "GORACE": "atexit_sleep_ms=0", "API_KEY": "${MY_API_KEY}"},
	}}})
	for _, flags := range [][]string{nil, {"--json"}} {
		r := newRunner(t)
		r.env["MY_API_KEY"] = key
		writeFile(t, filepath.Join(r.cwd, ".mcp.json"), string(entry))
		check(fmt.Sprintf("config env %v", flags), r.run(append(append([]string{"ping"}, flags...), "srv")...))
	}
	check("-e", newRunner(t).run("ping", "-e", "ANYMCP_TESTSERVER=stdio", "-e", "GORACE=atexit_sleep_ms=0", "-e", "API_KEY="+key, "--", "sh", "-c", script, path))
	// --inherit-env hands the server mcpcall's own environment, where the
	// credential was never named on the command line.
	t.Setenv("API_KEY", key)
	check("--inherit-env", newRunner(t).run("ping", "--inherit-env", "-e", "ANYMCP_TESTSERVER=stdio", "-e", "GORACE=atexit_sleep_ms=0", "--", "sh", "-c", script, path))
}

// TestStdioEnvSettingsShown: a variable whose name only looks like a
// credential's (TOKENIZERS_PARALLELISM, MAX_TOKENS), or that holds a flag
// or a number (AUTH_ENABLED=true), is a setting: its value is not hidden,
// where every "false" of a --json answer became [REDACTED] and the output
// was no JSON any more.
func TestStdioEnvSettingsShown(t *testing.T) {
	path, _, _ := testservers.StdioCommand()
	res := newRunner(t).run("tools", "list", "--json",
		"-e", "ANYMCP_TESTSERVER=stdio", "-e", "GORACE=atexit_sleep_ms=0",
		"-e", "TOKENIZERS_PARALLELISM=false", "-e", "AUTH_ENABLED=true", "-e", "MAX_TOKENS=1000", "--", path)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if strings.Contains(res.stdout, redacted) || !json.Valid([]byte(res.stdout)) {
		t.Fatalf("--json output bent by hiding settings (valid JSON: %v):\n%s", json.Valid([]byte(res.stdout)), res.stdout)
	}
}

func TestSensitiveEnv(t *testing.T) {
	for name, want := range map[string]bool{
		"API_KEY": true, "GITHUB_TOKEN": true, "DB_PASSWORD": true, "APIKEY": true, "ACCESSTOKEN": true,
		"client-secret": true, "AUTH": true, "GITLAB_PAT": true, "AWS_SECRET_ACCESS_KEY": true, "X_API_CREDENTIALS": true,
		"TOKENIZERS_PARALLELISM": false, "MAX_TOKENS": false, "AUTHOR": false, "PATH": false, "KEYBOARD": false, "HOME": false,
	} {
		if got := sensitiveEnv(name); got != want {
			t.Errorf("sensitiveEnv(%q) = %v, want %v", name, got, want)
		}
	}
	for v, want := range map[string]bool{
		"sk-live-0123456789abcdef": true, "hunter22": true, "true": false, "false": false, "FALSE": false,
		"1000": false, "12345678": false, "short": false, "disabled": false,
	} {
		if got := credentialValue(v); got != want {
			t.Errorf("credentialValue(%q) = %v, want %v", v, got, want)
		}
	}
}
