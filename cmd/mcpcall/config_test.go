package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/mcpconfig"
	"github.com/anymcp/anymcp/testservers"
)

// stdioEntry is a config entry that starts this test binary as a stdio
// server named name.
func stdioEntry(name string) string {
	path, _, _ := testservers.StdioCommand()
	b, _ := json.Marshal(map[string]any{
		"command": path,
		"env": map[string]string{
			testservers.EnvVar:  "stdio",
			testservers.EnvName: name,
			"GORACE":            "atexit_sleep_ms=0",
		},
	})
	return string(b)
}

// serverName probes target and returns the serverInfo.name it answered with.
func serverName(t *testing.T, r *runner, args ...string) string {
	t.Helper()
	res := r.runOK(append([]string{"probe", "--json"}, args...)...)
	var p struct {
		ServerInfo struct{ Name string } `json:"serverInfo"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatalf("probe output: %v\n%s", err, res.stdout)
	}
	return p.ServerInfo.Name
}

// configFile is one of the files mcpcall reads, and how to write an entry
// into it.
type configFile struct {
	label string
	path  func(r *runner) string
	doc   func(r *runner, name, entry string) string
}

func mcpServersDoc(_ *runner, name, entry string) string {
	return fmt.Sprintf(`{"mcpServers": {%q: %s}}`, name, entry)
}

// configFiles are in the documented search order.
var configFiles = []configFile{
	{"Claude Code (local scope)", func(r *runner) string { return filepath.Join(r.home, ".claude.json") },
		func(r *runner, name, entry string) string {
			return fmt.Sprintf(`{"numStartups": 3, "projects": {%q: {"mcpServers": {%q: %s}}, "/elsewhere": {"mcpServers": {}}}}`, r.cwd, name, entry)
		}},
	{"Claude Code (project)", func(r *runner) string { return filepath.Join(r.cwd, ".mcp.json") }, mcpServersDoc},
	{"VS Code (workspace)", func(r *runner) string { return filepath.Join(r.cwd, ".vscode", "mcp.json") },
		func(_ *runner, name, entry string) string {
			// VS Code's files are JSON with comments and trailing commas.
			return fmt.Sprintf("{\n  // servers for this workspace\n  \"inputs\": [],\n  \"servers\": {\n    %q: %s, /* the test server */\n  },\n}\n", name, entry)
		}},
	{"Cursor (project)", func(r *runner) string { return filepath.Join(r.cwd, ".cursor", "mcp.json") }, mcpServersDoc},
	{"mcporter (project)", func(r *runner) string { return filepath.Join(r.cwd, "config", "mcporter.json") }, mcpServersDoc},
	{"Claude Code (user)", func(r *runner) string { return filepath.Join(r.home, ".claude.json") }, mcpServersDoc},
	{"Cursor (global)", func(r *runner) string { return filepath.Join(r.home, ".cursor", "mcp.json") }, mcpServersDoc},
	{"VS Code (user)", func(r *runner) string { return filepath.Join(r.home, ".config", "Code", "User", "mcp.json") },
		func(_ *runner, name, entry string) string { return fmt.Sprintf(`{"servers": {%q: %s}}`, name, entry) }},
	{"Claude Desktop", func(r *runner) string {
		return filepath.Join(r.home, ".config", "Claude", "claude_desktop_config.json")
	}, mcpServersDoc},
	{"mcporter (home)", func(r *runner) string { return filepath.Join(r.home, ".mcporter", "mcporter.json") }, mcpServersDoc},
}

// TestConfigFormats reads a server from each kind of file on its own.
func TestConfigFormats(t *testing.T) {
	for _, cf := range configFiles {
		t.Run(cf.label, func(t *testing.T) {
			r := newRunner(t)
			writeFile(t, cf.path(r), cf.doc(r, "test", stdioEntry("from-file")))
			if got := serverName(t, r, "test"); got != "from-file" {
				t.Errorf("server name %q", got)
			}
			res := r.runOK("servers")
			format := "mcpServers"
			switch {
			case strings.HasPrefix(cf.label, "VS Code"):
				format = "servers"
			case strings.HasPrefix(cf.label, "mcporter"):
				format = "mcporter"
			case strings.Contains(cf.label, "local scope"):
				format = "projects.mcpServers"
			}
			if !strings.Contains(res.stdout, cf.label) || !strings.Contains(res.stdout, cf.path(r)) || !strings.Contains(res.stdout, " "+format+" ") {
				t.Errorf("servers does not say where the entry came from, in form %s:\n%s", format, res.stdout)
			}
		})
	}
}

// TestConfigSearchOrder defines one name in every file and checks that the
// first file in the documented order wins, then the next once it is gone.
func TestConfigSearchOrder(t *testing.T) {
	r := newRunner(t)
	// ~/.claude.json holds two places: write it once with both.
	claude := filepath.Join(r.home, ".claude.json")
	writeDocs := func(from int) {
		for i, cf := range configFiles {
			if i < from {
				writeFile(t, cf.path(r), `{}`)
			}
		}
		localAt := 0
		userAt := slices.IndexFunc(configFiles, func(cf configFile) bool { return cf.label == "Claude Code (user)" })
		local, user := "", ""
		if from <= localAt {
			local = fmt.Sprintf(`"projects": {%q: {"mcpServers": {"dup": %s}}},`, r.cwd, stdioEntry("order-0"))
		}
		if from <= userAt {
			user = fmt.Sprintf(`"mcpServers": {"dup": %s},`, stdioEntry(fmt.Sprintf("order-%d", userAt)))
		}
		writeFile(t, claude, "{"+local+user+`"x": 1}`)
		for i, cf := range configFiles {
			if i >= from && cf.path(r) != claude {
				writeFile(t, cf.path(r), cf.doc(r, "dup", stdioEntry(fmt.Sprintf("order-%d", i))))
			}
		}
	}
	for from := range configFiles {
		writeDocs(from)
		if got, want := serverName(t, r, "dup"), fmt.Sprintf("order-%d", from); got != want {
			t.Errorf("with files %d… defining dup: used %s, want %s", from, got, want)
		}
	}
	// $MCPCALL_CONFIG comes before them all.
	writeDocs(0)
	r.env["MCPCALL_CONFIG"] = writeFile(t, filepath.Join(r.home, "extra.json"), mcpServersDoc(r, "dup", stdioEntry("from-env")))
	if got := serverName(t, r, "dup"); got != "from-env" {
		t.Errorf("MCPCALL_CONFIG: used %s", got)
	}
	res := r.runOK("servers", "--json")
	var list struct {
		Servers []mcpconfig.Entry `json:"servers"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Servers) != len(configFiles)+1 || list.Servers[0].Shadowed || !list.Servers[1].Shadowed {
		t.Errorf("servers --json: %+v", list.Servers)
	}
}

// TestConfigExplicit covers --config FILE NAME, --config FILE --server
// NAME, --server NAME and FILE:NAME.
func TestConfigExplicit(t *testing.T) {
	r := newRunner(t)
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), mcpServersDoc(r, "a", stdioEntry("searched")))
	file := writeFile(t, filepath.Join(r.home, "mine.json"), `{"servers": {"a": `+stdioEntry("explicit-a")+`}, "mcpServers": {"b": `+stdioEntry("explicit-b")+`}}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"a"}, "searched"},
		{[]string{"--server", "a"}, "searched"},
		{[]string{"--config", file, "a"}, "explicit-a"},
		{[]string{"--config", file, "--server", "b"}, "explicit-b"},
		{[]string{file + ":b"}, "explicit-b"},
	} {
		if got := serverName(t, r, tc.args...); got != tc.want {
			t.Errorf("%v: used %s, want %s", tc.args, got, tc.want)
		}
	}
	res := r.run("ping", "--config", file, "a-typo")
	if res.code != exitUsage || !strings.Contains(res.stderr, `did you mean "a"`) {
		t.Errorf("unknown name in --config: exit %d, %s", res.code, res.stderr)
	}
	res = r.run("ping", "--config", filepath.Join(r.home, "missing.json"), "a")
	if res.code != exitUsage || !strings.Contains(res.stderr, "missing.json") {
		t.Errorf("missing --config file: exit %d, %s", res.code, res.stderr)
	}
}

// TestConfigUnknownName suggests close names and never connects to one.
func TestConfigUnknownName(t *testing.T) {
	r := newRunner(t)
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), `{"mcpServers": {"github": `+stdioEntry("gh")+`, "gitlab": `+stdioEntry("gl")+`}}`)
	res := r.run("tools", "list", "githb")
	if res.code != exitUsage || !strings.Contains(res.stderr, `did you mean "github"`) {
		t.Errorf("exit %d, stderr %s", res.code, res.stderr)
	}
	res = newRunner(t).run("tools", "list", "anything")
	if res.code != exitUsage || !strings.Contains(res.stderr, "no config file defines servers") {
		t.Errorf("no config at all: exit %d, stderr %s", res.code, res.stderr)
	}
}

// TestConfigExpansion expands ${VAR}, ${VAR:-default} and ${env:VAR} in
// command, env, url and headers, and refuses an unset variable.
func TestConfigExpansion(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	srv := testservers.StartStreamable(testservers.HTTPOptions{OnRequest: func(r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
	}})
	defer srv.Close()
	port := strings.TrimSuffix(strings.TrimPrefix(srv.URL, "http://127.0.0.1:"), "/mcp")
	path, _, _ := testservers.StdioCommand()

	r := newRunner(t)
	r.env["TEST_PORT"] = port
	r.env["TEST_TOKEN"] = "tok-123"
	r.env["TEST_BIN"] = path
	r.env["TEST_NAME"] = "expanded-name"
	r.env["TEST_EMPTY"] = ""
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), `{"mcpServers": {
		"remote": {"type": "http", "url": "http://127.0.0.1:${TEST_PORT}/${TEST_PATH:-mcp}",
			"headers": {"Authorization": "Bearer ${TEST_TOKEN}", "X-Team": "${TEST_TEAM:-core}", "X-Empty": "${TEST_EMPTY:-fallback}"}},
		"local": {"command": "${env:TEST_BIN}", "args": [],
			"env": {"ANYMCP_TESTSERVER": "${TEST_MODE:-stdio}", "ANYMCP_TESTSERVER_NAME": "${TEST_NAME}", "GORACE": "atexit_sleep_ms=0"}},
		"broken": {"command": "${TEST_NOT_SET}/server"}
	}}`)
	r.runOK("ping", "remote")
	mu.Lock()
	if got := seen.Get("Authorization"); got != "Bearer tok-123" {
		t.Errorf("Authorization %q", got)
	}
	if got := seen.Get("X-Team"); got != "core" {
		t.Errorf("X-Team %q", got)
	}
	if got := seen.Get("X-Empty"); got != "fallback" {
		t.Errorf("X-Empty %q", got)
	}
	mu.Unlock()
	if got := serverName(t, r, "local"); got != "expanded-name" {
		t.Errorf("stdio env not expanded: %q", got)
	}
	res := r.run("ping", "broken")
	if res.code != exitUsage || !strings.Contains(res.stderr, "TEST_NOT_SET") {
		t.Errorf("unset variable: exit %d, stderr %s", res.code, res.stderr)
	}
	// servers shows entries as written: no token, no expansion.
	out := r.runOK("servers").stdout
	if strings.Contains(out, "tok-123") || !strings.Contains(out, "${TEST_PORT}") {
		t.Errorf("servers output:\n%s", out)
	}
}

// TestConfigTypes maps entry types to transport policies.
func TestConfigTypes(t *testing.T) {
	hybrid := testservers.StartHybrid(testservers.HybridOptions{})
	defer hybrid.Close()
	legacy := testservers.StartLegacy(testservers.LegacyOptions{})
	defer legacy.Close()
	r := newRunner(t)
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
		"streamable": {"type": "streamable-http", "url": %q},
		"plainhttp": {"type": "http", "url": %q},
		"legacy-sse": {"type": "sse", "url": %q},
		"guess": {"url": %q},
		"stdio-typed": {"type": "stdio", "command": %q, "env": {"ANYMCP_TESTSERVER": "stdio", "GORACE": "atexit_sleep_ms=0"}},
		"weird": {"type": "carrier-pigeon", "url": "http://x"}
	}}`, hybrid.URL, legacy.URL, hybrid.SSEURL, legacy.URL, func() string { p, _, _ := testservers.StdioCommand(); return p }()))
	transport := func(name string) string {
		res := r.runOK("probe", "--json", name)
		var p probeResult
		if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
			t.Fatal(err)
		}
		return p.Transport
	}
	for name, want := range map[string]string{"streamable": "streamable-http", "legacy-sse": "sse", "guess": "sse", "stdio-typed": "stdio"} {
		if got := transport(name); got != want {
			t.Errorf("%s: transport %s, want %s", name, got, want)
		}
	}
	if res := r.run("ping", "plainhttp"); res.code != exitConnect {
		t.Errorf("type http at an initialize-era server must not fall back: exit %d %s", res.code, res.stderr)
	}
	if res := r.run("ping", "weird"); res.code != exitUsage || !strings.Contains(res.stderr, "carrier-pigeon") {
		t.Errorf("unknown type: exit %d %s", res.code, res.stderr)
	}
	// --transport overrides the entry's type.
	if res := r.runOK("probe", "--json", "--transport", "auto", "plainhttp"); !strings.Contains(res.stdout, `"transport": "sse"`) {
		t.Errorf("--transport auto over type http:\n%s", res.stdout)
	}
}

// TestServersGolden keeps the output of `mcpcall servers`.
func TestServersGolden(t *testing.T) {
	r := newRunner(t)
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), `{"mcpServers": {
		"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
		"remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer literal-secret", "X-Org": "${ORG}"}}
	}}`)
	writeFile(t, filepath.Join(r.home, ".cursor", "mcp.json"), `{"mcpServers": {
		"remote": {"url": "https://other.example.com/sse"},
		"nothing": {"args": ["x"]}
	}}`)
	writeFile(t, filepath.Join(r.home, ".mcporter", "mcporter.json"), `{"mcpServers": {
		"linear": {"description": "Linear issues", "baseUrl": "https://mcp.linear.app/mcp", "bearerTokenEnv": "LINEAR_API_KEY", "lifecycle": "keep-alive"},
		"chrome": {"command": "npx -y chrome-devtools-mcp@latest", "env": {"API_KEY": "sk-literal-0123456789"}}
	}}`)
	for _, mode := range []string{"", "--json"} {
		args := []string{"servers"}
		name := "servers"
		if mode != "" {
			args = append(args, mode)
			name += ".json"
		}
		res := r.runOK(args...)
		if strings.Contains(res.stdout, "literal-secret") || strings.Contains(res.stdout, "sk-literal") {
			t.Errorf("servers printed a credential:\n%s", res.stdout)
		}
		out := strings.ReplaceAll(res.stdout, filepath.Dir(r.home), "$TMP")
		golden(t, name, out)
	}
}

// A server defined only in mcporter's files, in mcporter's form, is
// called by name: an HTTP one by its baseUrl, with a header taken from
// $env:NAME, from the home file; a stdio one written as a command list,
// from the project's config/mcporter.json. "baseUrl" used to be refused:
// "an entry needs a command (stdio) or a url (HTTP)".
func TestMCPorterConfigCall(t *testing.T) {
	var mu sync.Mutex
	var team string
	srv := testservers.StartStreamable(testservers.HTTPOptions{OnRequest: func(r *http.Request) {
		mu.Lock()
		team = r.Header.Get("X-Team")
		mu.Unlock()
	}})
	t.Cleanup(srv.Close)
	r := newRunner(t)
	r.env["TEAM"] = "core"
	writeFile(t, filepath.Join(r.home, ".mcporter", "mcporter.json"), fmt.Sprintf(`{
  // mcporter's home file
  "mcpServers": {
    "web": {"description": "the test server", "baseUrl": %q, "headers": {"X-Team": "$env:TEAM"}, "lifecycle": "keep-alive", "auth": "oauth",},
  },
}`, srv.URL))
	path, _, _ := testservers.StdioCommand()
	local, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"local": map[string]any{
		"command": []string{path, "--unused-by-the-server"},
		"env":     map[string]string{testservers.EnvVar: "stdio", testservers.EnvName: "from-mcporter", "GORACE": "atexit_sleep_ms=0"},
	}}})
	writeFile(t, filepath.Join(r.cwd, "config", "mcporter.json"), string(local))

	res := r.runOK("tools", "call", "echo", "text=via mcporter", "web")
	mu.Lock()
	sent := team
	mu.Unlock()
	if !strings.Contains(res.stdout, "via mcporter") || sent != "core" {
		t.Errorf("web: stdout %q, X-Team %q", res.stdout, sent)
	}
	if got := serverName(t, r, "local"); got != "from-mcporter" {
		t.Errorf("local: server %q", got)
	}
	out := r.runOK("servers").stdout
	for _, want := range []string{"mcporter (home) " + filepath.Join(r.home, ".mcporter", "mcporter.json"), "mcporter (project) " + filepath.Join(r.cwd, "config", "mcporter.json")} {
		if !strings.Contains(out, want) {
			t.Errorf("servers does not show %q:\n%s", want, out)
		}
	}
}
