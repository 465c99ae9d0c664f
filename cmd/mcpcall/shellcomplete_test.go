package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/testservers"
)

// TestCompletionScripts: the scripts generate for each shell.
func TestCompletionScripts(t *testing.T) {
	r := newRunner(t)
	for shell, marker := range map[string]string{
		"bash": "__start_mcpcall",
		"zsh":  "#compdef mcpcall",
		"fish": "complete -c mcpcall",
	} {
		res := r.runOK("completion", shell)
		if !strings.Contains(res.stdout, marker) {
			t.Errorf("%s script lacks %q:\n%.300s", shell, marker, res.stdout)
		}
	}
}

// complete runs cobra's hidden __complete command and returns the
// candidates (without descriptions) and the directive line.
func complete(t *testing.T, r *runner, args ...string) ([]string, string) {
	t.Helper()
	res := r.runOK(append([]string{"__complete"}, args...)...)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	directive := lines[len(lines)-1]
	var out []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		out = append(out, name)
	}
	return out, directive
}

// TestCompletionNames: server names from the config files, and the tools,
// arguments, prompts and resources of a configured server.
func TestCompletionNames(t *testing.T) {
	r := newRunner(t)
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"testsrv": %s, "other": {"url": "http://127.0.0.1:1/mcp"}}}`, stdioEntry("t")))
	writeFile(t, filepath.Join(r.home, ".cursor", "mcp.json"), `{"mcpServers": {"cursor-one": {"url": "http://127.0.0.1:1/mcp"}}}`)
	check := func(got []string, want ...string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("candidates %q, want %q", got, want)
		}
	}
	got, _ := complete(t, r, "tools", "list", "")
	check(got, "other", "testsrv", "cursor-one")
	got, _ = complete(t, r, "ping", "t")
	check(got, "testsrv")
	got, _ = complete(t, r, "tools", "list", "--server", "") // --server is the commands' with a target, not the root's
	check(got, "other", "testsrv", "cursor-one")
	got, _ = complete(t, r, "tools", "call", "echo", "")
	check(got, "other", "testsrv", "cursor-one")
	got, _ = complete(t, r, "--server", "testsrv", "tools", "call", "")
	check(got, testservers.ToolNames()...)
	got, _ = complete(t, r, "--server", "testsrv", "tools", "call", "s")
	check(got, "slow", "sample")
	got, directive := complete(t, r, "--server", "testsrv", "tools", "call", "slow", "")
	check(got, "delayMs=", "steps=")
	if directive != ":6" { // no file completion, no space after "="
		t.Errorf("directive %s", directive)
	}
	got, _ = complete(t, r, "--server", "testsrv", "prompts", "get", "")
	check(got, "greet", "simple")
	got, _ = complete(t, r, "--server", "testsrv", "resources", "read", "test://static/i")
	check(got, "test://static/item/1", "test://static/item/2", "test://static/item/3", "test://static/item/4", "test://static/item/5")
	got, _ = complete(t, r, "ping", "--transport", "")
	check(got, "auto", "http", "sse", "stdio")
	// an unreachable server completes nothing, quietly and quickly
	got, _ = complete(t, r, "--connect-timeout", "300ms", "--server", "other", "tools", "call", "")
	check(got)
}

func TestVersion(t *testing.T) {
	r := newRunner(t)
	res := r.runOK("--version")
	if !strings.HasPrefix(res.stdout, "mcpcall ") || !strings.Contains(res.stdout, "(module "+modulePath+", ") || !strings.Contains(res.stdout, "commit ") {
		t.Errorf("--version: %q", res.stdout)
	}
	saved := commit
	defer func() { commit = saved }()
	commit = "abc1234"
	if got := versionString(); !strings.Contains(got, "commit abc1234") {
		t.Errorf("with -X main.commit: %q", got)
	}
	commit = ""
	if got := buildCommit(); got == "" {
		t.Error("empty commit")
	}
}

// TestHelp: every command has help with examples, and the root's help
// lists the exit codes.
func TestHelp(t *testing.T) {
	r := newRunner(t)
	res := r.runOK("--help")
	for _, want := range []string{"130  interrupted", "3    authentication", "FILE:NAME"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	for _, cmd := range [][]string{
		{"tools", "list"}, {"tools", "call"}, {"resources", "list"}, {"resources", "templates"}, {"resources", "read"},
		{"prompts", "list"}, {"prompts", "get"}, {"complete"}, {"ping"}, {"probe"}, {"call"}, {"servers"},
	} {
		res := r.runOK(append(cmd, "--help")...)
		if !strings.Contains(res.stdout, "Examples:") {
			t.Errorf("%v --help has no examples", cmd)
		}
	}
	if res := r.runOK("servers", "--help"); !strings.Contains(res.stdout, "claude_desktop_config.json") {
		t.Errorf("servers --help does not document the search order")
	}
}
