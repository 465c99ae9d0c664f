package main

import (
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// The flag sets, written out here apart from flags.go: a flag that moves
// between commands must move here too.
var (
	wantOutput  = []string{"help", "json", "verbose"}
	wantConnOne = []string{"config", "server", "transport", "header", "bearer-env", "env", "cwd", "inherit-env",
		"era", "protocol-version", "connect-timeout", "timeout", "max-time"}
	wantConn   = append(slices.Clone(wantConnOne), "trace", "log-level", "session")
	wantOAuth  = []string{"client-id", "client-secret-env", "client-issuer", "client-metadata-url", "grant", "assertion-file", "scope"}
	wantAnswer = []string{"root", "elicit", "sampling-cmd", "sampling-llm", "sampling-model"}
)

func flagSet(sets ...[]string) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// wantFlags are the flags each command's help lists: the ones it uses.
var wantFlags = map[string][]string{
	"tools list":          flagSet(wantOutput, wantConn, wantOAuth, wantAnswer, []string{"all"}),
	"tools call":          flagSet(wantOutput, wantConn, wantOAuth, wantAnswer, []string{"all", "args", "task", "no-validate"}),
	"tools export":        flagSet(wantOutput, wantConn, wantOAuth, wantAnswer, []string{"all", "format", "strict", "max-tokens"}),
	"tools search":        flagSet(wantOutput, []string{"config", "era", "protocol-version", "connect-timeout", "timeout", "max-time", "log-level"}, wantAnswer, []string{"all", "limit"}),
	"resources list":      flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"resources templates": flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"resources read":      flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"prompts list":        flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"prompts get":         flagSet(wantOutput, wantConn, wantOAuth, wantAnswer, []string{"args"}),
	"complete":            flagSet(wantOutput, wantConn, wantOAuth, wantAnswer, []string{"prompt", "resource", "context"}),
	"ping":                flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"probe":               flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"call":                flagSet(wantOutput, wantConn, wantOAuth, wantAnswer, []string{"params", "notification"}),
	"tasks get":           flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"tasks result":        flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"tasks cancel":        flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"tasks list":          flagSet(wantOutput, wantConn, wantOAuth, wantAnswer),
	"bridge": flagSet(wantOutput, wantConnOne, wantOAuth,
		[]string{"listen", "allow-remote", "auth-token-file", "state-key-file", "replica-id", "allow-origin", "allow-host", "all", "gateway", "view"}),
	"pins list":         flagSet(wantOutput, []string{"file"}),
	"pins approve":      flagSet(wantOutput, []string{"file", "all-held", "config", "era", "protocol-version", "connect-timeout", "timeout", "max-time"}),
	"pins forget":       flagSet(wantOutput, []string{"file"}),
	"servers":           flagSet(wantOutput, []string{"config"}),
	"demo":              flagSet(wantOutput, []string{"connect-timeout", "max-time", "serve"}),
	"demo stdio-server": flagSet(wantOutput, []string{"eras"}), // hidden: demo's own stdio child
	"auth login":        flagSet(wantOutput, []string{"config", "server", "trace", "connect-timeout", "max-time", "no-browser", "wait", "callback-port"}, wantOAuth),
	"auth status":       flagSet(wantOutput, []string{"config", "server"}),
	"auth logout":       flagSet(wantOutput, []string{"config", "server", "max-time", "forget-client"}),
	"session start":     flagSet(wantOutput, wantConnOne, wantOAuth, []string{"idle", "all", "gateway"}),
	"session list":      flagSet(wantOutput),
	"session stop":      flagSet(wantOutput),
	"session-gateway":   flagSet(wantOutput, wantConnOne, wantOAuth, []string{"session-dir", "idle", "spec", "display", "all", "gateway"}), // hidden: a session's gateway
}

// runnable is every command of the tree that runs, by path without the
// root's name.
func runnable(t *testing.T) map[string]*cobra.Command {
	t.Helper()
	root := newCLI(strings.NewReader(""), &strings.Builder{}, &strings.Builder{}, newRunner(t).lookup, nil).rootCommand()
	out := map[string]*cobra.Command{}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Runnable() && cmd != root {
			out[strings.TrimPrefix(cmd.CommandPath(), "mcpcall ")] = cmd
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

var helpFlag = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z][a-z-]*)`)

// TestHelpListsOnlyUsedFlags: each command's help lists the flags it uses
// and no other (servers has no --transport, auth status no --bearer-env).
func TestHelpListsOnlyUsedFlags(t *testing.T) {
	r := newRunner(t)
	cmds := runnable(t)
	for path := range cmds {
		if _, ok := wantFlags[path]; !ok {
			t.Errorf("%s: a command this test does not know: add its flags to wantFlags", path)
		}
	}
	for path, want := range wantFlags {
		if cmds[path] == nil {
			t.Errorf("%s: no such command", path)
			continue
		}
		help := r.runOK(append(strings.Fields(path), "--help")...).stdout
		i := strings.Index(help, "\nFlags:\n")
		if i < 0 {
			t.Errorf("%s --help lists no flags:\n%s", path, help)
			continue
		}
		var got []string
		for _, m := range helpFlag.FindAllStringSubmatch(help[i:], -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s --help lists\n  %v\nwant\n  %v", path, got, want)
		}
	}
}

// TestTargetCommandsTakeConnFlags: every command with a target takes the
// connection flags, and they reach the connection: a refused connection
// exits 4, not 2 for an unknown flag.
func TestTargetCommandsTakeConnFlags(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens: every connection is refused
	own := map[string][]string{
		"tools call": {"echo"}, "resources read": {"test://x"}, "prompts get": {"p"},
		"complete": {"--prompt", "p", "a=b"}, "call": {"ping"},
		"tasks get": {"t1"}, "tasks result": {"t1"}, "tasks cancel": {"t1"}, "tools export": {"--format", "openai"},
	}
	conn := []string{
		"--transport", "http", "-H", "X-Test: 1", "--era", "initialize", "--protocol-version", "2025-06-18",
		"--connect-timeout", "5s", "--timeout", "5s", "--max-time", "30s", "--log-level", "info",
		"--client-id", "app", "--scope", "mcp", "--elicit", "decline",
	}
	r := newRunner(t)
	n := 0
	for path, cmd := range runnable(t) {
		if !strings.Contains(cmd.Use, "TARGET") || path == "bridge" || strings.HasPrefix(path, "auth ") || strings.HasPrefix(path, "session") {
			continue // the bridge's, auth's and the sessions' are checked by their help above
		}
		n++
		for _, name := range wantConn {
			if cmd.Flags().Lookup(name) == nil {
				t.Errorf("%s has no --%s", path, name)
			}
		}
		args := append(append(append(strings.Fields(path), own[path]...), conn...), url)
		if res := r.run(args...); res.code != exitConnect {
			t.Errorf("mcpcall %s: exit %d, want %d (connection refused)\n%s", strings.Join(args, " "), res.code, exitConnect, res.stderr)
		}
	}
	if n != 16 {
		t.Errorf("checked %d commands with a target, want 16", n)
	}
}

// TestArgCounts: every command counts its arguments with cobra's Args,
// before connecting: a wrong count exits 2 with the usage, not 4 from
// the refused connection.
func TestArgCounts(t *testing.T) {
	for path, cmd := range runnable(t) {
		if cmd.Args == nil {
			t.Errorf("%s has no Args", path)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	r := newRunner(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ping", "extra", url}, "mcpcall ping: wrong number of arguments before the target (usage: mcpcall ping TARGET [flags])"},
		{[]string{"tools", "call", url}, "mcpcall tools call: wrong number of arguments before the target"},
		{[]string{"resources", "read", "a", "b", url}, "mcpcall resources read: wrong number of arguments before the target"},
		{[]string{"tasks", "list", "x", url}, "mcpcall tasks list: wrong number of arguments before the target"},
		{[]string{"complete", "--prompt", "p", url}, "mcpcall complete: wrong number of arguments before the target"},
		{[]string{"bridge", "extra", url}, "mcpcall bridge: wrong number of arguments before the target"},
		{[]string{"auth", "login", "extra", url}, `mcpcall auth login: unexpected arguments ["extra"] before the target`},
		{[]string{"auth", "status", "extra", url}, `mcpcall auth status: unexpected arguments ["extra"] before the target`},
		{[]string{"tools", "list", "--all", "extra"}, `mcpcall tools list --all takes no target: "extra"`},
		{[]string{"tools", "search", "--all"}, "mcpcall tools search: wrong number of arguments (usage:"},
		{[]string{"tools", "list", "--all", "--transport", "http"}, "--transport sets one server's connection"},
		{[]string{"servers", "extra"}, `unknown command "extra" for "mcpcall servers"`},
		{[]string{"ping", "--server", "x", "--", "cmd"}, "give either --server or `-- command`, not both"},
	} {
		res := r.run(tc.args...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("mcpcall %s: exit %d, want %d and %q\n%s", strings.Join(tc.args, " "), res.code, exitUsage, tc.want, res.stderr)
		}
	}
}
