package main

import (
	"strings"
	"testing"

	"github.com/anymcp/anymcp/testservers"
)

// shellFront puts a shell in front of the stdio test server that runs
// script (which may write to stderr) and then becomes the server.
func shellFront(script string) []string {
	target := stdioTarget(testservers.Options{})
	dash := len(target) - 2
	return append(target[:dash:dash], "--", "sh", "-c", script+`; exec "$0"`, target[dash+1])
}

// TestStdioFlags: --cwd sets the server's directory, -e adds to its
// environment, and only --inherit-env passes the whole environment.
func TestStdioFlags(t *testing.T) {
	t.Setenv("MCPCALL_TEST_INHERITED", "from-parent")
	r := newRunner(t)
	script := `echo "dir=$(pwd) inherited=$MCPCALL_TEST_INHERITED extra=$EXTRA" >&2`
	res := r.runOK(append([]string{"ping", "--cwd", r.home, "-e", "EXTRA=given"}, shellFront(script)...)...)
	if want := "dir=" + r.home + " inherited= extra=given\n"; res.stderr != want {
		t.Errorf("stderr %q, want %q", res.stderr, want)
	}
	res = r.runOK(append([]string{"ping", "--inherit-env"}, shellFront(script)...)...)
	if !strings.Contains(res.stderr, "inherited=from-parent") {
		t.Errorf("--inherit-env: stderr %q", res.stderr)
	}
	if res := r.run(append([]string{"ping", "-e", "NOEQUALS"}, shellFront("true")...)...); res.code != exitUsage {
		t.Errorf("-e NOEQUALS: exit %d", res.code)
	}
}

// TestConfigCwdAndEnv: a stdio entry's cwd and env apply, and -e overrides env.
func TestConfigCwdAndEnv(t *testing.T) {
	r := newRunner(t)
	path, _, _ := testservers.StdioCommand()
	writeFile(t, r.cwd+"/.mcp.json", `{"mcpServers": {"s": {
		"command": "sh", "args": ["-c", "echo \"dir=$(pwd) v=$V\" >&2; exec \"$0\"", "`+path+`"],
		"cwd": "${userHome}", "env": {"V": "from-config", "ANYMCP_TESTSERVER": "stdio", "GORACE": "atexit_sleep_ms=0"}}}}`)
	res := r.runOK("ping", "s")
	if want := "dir=" + r.home + " v=from-config\n"; res.stderr != want {
		t.Errorf("stderr %q, want %q", res.stderr, want)
	}
	res = r.runOK("ping", "-e", "V=from-flag", "s")
	if !strings.Contains(res.stderr, "v=from-flag") {
		t.Errorf("-e over the entry's env: %q", res.stderr)
	}
}

// TestRawCallAndComplete covers call --notification and complete --context.
func TestRawCallAndComplete(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	res := r.runOK("call", "notifications/roots/list_changed", "--notification", srv.URL)
	if res.stdout != "" {
		t.Errorf("a notification printed %q", res.stdout)
	}
	if n := srv.Server().Stats().RootsListChanged; n != 1 {
		t.Errorf("server saw %d roots/list_changed", n)
	}
	r.stdin = strings.NewReader(`{"uri": "test://static/text"}`)
	res = r.runOK("call", "resources/read", "--params", "-", srv.URL)
	if !strings.Contains(res.stdout, `"text": "hello"`) {
		t.Errorf("call --params -: %s", res.stdout)
	}
	res = r.runOK("complete", "--prompt", "greet", "style=", "--context", "name=Ada", srv.URL)
	if res.stdout != "formal\nfriendly\nfunny\n" {
		t.Errorf("complete: %q", res.stdout)
	}
	if res := r.run("complete", "style=f", srv.URL); res.code != exitUsage {
		t.Errorf("complete without a ref: exit %d", res.code)
	}
}
