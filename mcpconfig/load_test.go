package mcpconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testPlaces is a fake home and project under t's temporary directory.
func testPlaces(t *testing.T) Places {
	t.Helper()
	dir := t.TempDir()
	p := Places{Home: filepath.Join(dir, "home"), Cwd: filepath.Join(dir, "project"), GOOS: "linux", Getenv: func(string) string { return "" }}
	for _, d := range []string{p.Home, p.Cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// configFile is one file of the search order and how an entry is written
// in it.
type configFile struct {
	label string
	path  func(p Places) string
	doc   func(p Places, name, entry string) string
}

func mcpServersDoc(_ Places, name, entry string) string {
	return fmt.Sprintf(`{"mcpServers": {%q: %s}}`, name, entry)
}

// configFiles are in the documented search order.
var configFiles = []configFile{
	{"Claude Code (local scope)", func(p Places) string { return filepath.Join(p.Home, ".claude.json") },
		func(p Places, name, entry string) string {
			return fmt.Sprintf(`{"numStartups": 3, "projects": {%q: {"mcpServers": {%q: %s}}, "/elsewhere": {"mcpServers": {"other": {"command": "x"}}}}}`, p.Cwd, name, entry)
		}},
	{"Claude Code (project)", func(p Places) string { return filepath.Join(p.Cwd, ".mcp.json") }, mcpServersDoc},
	{"VS Code (workspace)", func(p Places) string { return filepath.Join(p.Cwd, ".vscode", "mcp.json") },
		func(_ Places, name, entry string) string {
			// VS Code's files are JSON with comments and trailing commas.
			return fmt.Sprintf("{\n  // servers for this workspace\n  \"inputs\": [],\n  \"servers\": {\n    %q: %s, /* the server */\n  },\n}\n", name, entry)
		}},
	{"Cursor (project)", func(p Places) string { return filepath.Join(p.Cwd, ".cursor", "mcp.json") }, mcpServersDoc},
	{"mcporter (project)", func(p Places) string { return filepath.Join(p.Cwd, "config", "mcporter.json") }, mcpServersDoc},
	{"Claude Code (user)", func(p Places) string { return filepath.Join(p.Home, ".claude.json") }, mcpServersDoc},
	{"Cursor (global)", func(p Places) string { return filepath.Join(p.Home, ".cursor", "mcp.json") }, mcpServersDoc},
	{"VS Code (user)", func(p Places) string { return filepath.Join(p.Home, ".config", "Code", "User", "mcp.json") },
		func(_ Places, name, entry string) string { return fmt.Sprintf(`{"servers": {%q: %s}}`, name, entry) }},
	{"Claude Desktop", func(p Places) string { return filepath.Join(p.Home, ".config", "Claude", "claude_desktop_config.json") }, mcpServersDoc},
	{"mcporter (home)", func(p Places) string { return filepath.Join(p.Home, ".mcporter", "mcporter.json") }, mcpServersDoc},
}

// formats is the form each file's entries are in.
var formats = map[string]string{
	"Claude Code (local scope)": FormatLocal, "VS Code (workspace)": FormatServers, "VS Code (user)": FormatServers,
	"mcporter (project)": FormatMCPorter, "mcporter (home)": FormatMCPorter,
}

// TestConfigFormats reads a server from each kind of file on its own.
func TestConfigFormats(t *testing.T) {
	for _, cf := range configFiles {
		t.Run(cf.label, func(t *testing.T) {
			p := testPlaces(t)
			writeFile(t, cf.path(p), cf.doc(p, "test", `{"command": "srv", "args": ["--flag"]}`))
			entries, problems := p.Load(p.SearchOrder())
			if len(problems) > 0 || len(entries) != 1 {
				t.Fatalf("entries %+v, problems %v", entries, problems)
			}
			e := entries[0]
			format := formats[cf.label]
			if format == "" {
				format = FormatMCPServers
			}
			if e.Name != "test" || e.Command != "srv" || e.Label != cf.label || e.Source != cf.path(p) || e.Kind() != KindStdio || e.Format != format {
				t.Errorf("entry %+v", e)
			}
		})
	}
}

// TestSearchOrder defines one name in every file: the first file in the
// documented order wins and the rest are shadowed; $MCPCALL_CONFIG comes
// before them all.
func TestSearchOrder(t *testing.T) {
	p := testPlaces(t)
	claude := filepath.Join(p.Home, ".claude.json")
	user := slices.IndexFunc(configFiles, func(cf configFile) bool { return cf.label == "Claude Code (user)" })
	writeFile(t, claude, fmt.Sprintf(`{"projects": {%q: {"mcpServers": {"dup": {"command": "order-0"}}}}, "mcpServers": {"dup": {"command": "order-%d"}}}`, p.Cwd, user))
	for i, cf := range configFiles {
		if cf.path(p) != claude {
			writeFile(t, cf.path(p), cf.doc(p, "dup", fmt.Sprintf(`{"command": "order-%d"}`, i)))
		}
	}
	extra := writeFile(t, filepath.Join(p.Home, "extra.json"), `{"servers": {"dup": {"command": "from-env"}}}`)
	p.Getenv = func(k string) string {
		if k == "MCPCALL_CONFIG" {
			return extra
		}
		return ""
	}
	entries, problems := p.Load(p.SearchOrder())
	if len(problems) > 0 || len(entries) != len(configFiles)+1 {
		t.Fatalf("%d entries, problems %v", len(entries), problems)
	}
	want := []string{"from-env"}
	for i := range configFiles {
		want = append(want, fmt.Sprintf("order-%d", i))
	}
	for i, e := range entries {
		if e.Command != want[i] || e.Shadowed != (i > 0) {
			t.Errorf("entry %d: command %s shadowed %v; want %s", i, e.Command, e.Shadowed, want[i])
		}
	}
	if e, err := p.Find(p.SearchOrder(), "dup"); err != nil || e.Command != "from-env" {
		t.Errorf("Find: %+v, %v", e, err)
	}
}

func TestAppConfigDir(t *testing.T) {
	env := map[string]string{}
	p := Places{Home: "/h", Getenv: func(k string) string { return env[k] }}
	for _, tc := range []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"darwin", nil, filepath.Join("/h", "Library", "Application Support")},
		{"windows", nil, filepath.Join("/h", "AppData", "Roaming")},
		{"windows", map[string]string{"APPDATA": "/appdata"}, "/appdata"},
		{"linux", nil, filepath.Join("/h", ".config")},
		{"linux", map[string]string{"XDG_CONFIG_HOME": "/xdg"}, "/xdg"},
	} {
		env = tc.env
		p.GOOS = tc.goos
		if got := p.AppConfigDir(); got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.goos, tc.env, got, tc.want)
		}
	}
}

// TestLoadKeepsGoing reads the good files when one is broken, and skips
// missing files unless Required.
func TestLoadKeepsGoing(t *testing.T) {
	p := testPlaces(t)
	writeFile(t, filepath.Join(p.Cwd, ".mcp.json"), `{"mcpServers": {"a": {"command": "x"}`)
	writeFile(t, filepath.Join(p.Home, ".cursor", "mcp.json"), `{"mcpServers": {"b": {"url": "https://b.example/mcp"}}}`)
	entries, problems := p.Load(p.SearchOrder())
	if len(entries) != 1 || entries[0].Name != "b" {
		t.Errorf("entries %+v", entries)
	}
	var fe *FileError
	if len(problems) != 1 || !errors.As(problems[0], &fe) || fe.Path != filepath.Join(p.Cwd, ".mcp.json") {
		t.Fatalf("problems %v, want one *FileError for .mcp.json", problems)
	}
	if msg := problems[0].Error(); !strings.HasPrefix(msg, fe.Path+": ") {
		t.Errorf("message %q does not start with the file", msg)
	}

	missing := filepath.Join(p.Home, "missing.json")
	_, problems = p.Load([]Location{p.File(missing)})
	if len(problems) != 1 || !errors.Is(problems[0], fs.ErrNotExist) || !errors.As(problems[0], &fe) ||
		strings.Count(problems[0].Error(), missing) != 1 {
		t.Errorf("a missing named file: %v", problems)
	}
	loc := p.File(missing)
	loc.Required = false
	if entries, problems := p.Load([]Location{loc}); len(entries) != 0 || len(problems) != 0 {
		t.Errorf("a missing file not required: %v %v", entries, problems)
	}
}

// TestFileReadsEveryPart reads mcpServers, servers and the project's local
// scope of a file named by hand, and a Location written by hand.
func TestFileReadsEveryPart(t *testing.T) {
	p := testPlaces(t)
	file := writeFile(t, filepath.Join(p.Home, "mine.json"), fmt.Sprintf(`{"servers": {"a": {"command": "x"}}, "mcpServers": {"b": {"command": "y"}},
		"projects": {%q: {"mcpServers": {"c": {"command": "z"}}}, "/other": {"mcpServers": {"d": {"command": "w"}}}}}`, p.Cwd))
	for _, loc := range []Location{p.File(file), {Path: file}} {
		entries, problems := p.Load([]Location{loc})
		var got []string
		for _, e := range entries {
			got = append(got, e.Name)
		}
		if len(problems) > 0 || strings.Join(got, ",") != "c,b,a" {
			t.Errorf("%+v: entries %v, problems %v", loc, got, problems)
		}
	}
}

func TestMaxFileSize(t *testing.T) {
	p := testPlaces(t)
	defer func(n int64) { maxFileSize = n }(maxFileSize)
	maxFileSize = 64
	path := writeFile(t, filepath.Join(p.Cwd, ".mcp.json"), `{"mcpServers": {"a": {"command": "x"}}, "padding": "`+strings.Repeat("x", 64)+`"}`)
	entries, problems := p.Load(p.SearchOrder())
	var fe *FileError
	if len(entries) != 0 || len(problems) != 1 || !errors.As(problems[0], &fe) || fe.Path != path || !strings.Contains(fe.Error(), "larger than") {
		t.Errorf("entries %v problems %v", entries, problems)
	}
}

func TestFind(t *testing.T) {
	p := testPlaces(t)
	writeFile(t, filepath.Join(p.Cwd, ".mcp.json"), `{"mcpServers": {
		"github": {"command": "gh"}, "gitlab": {"url": "https://gl.example/mcp", "disabled": true},
		"broken": {"type": "carrier-pigeon", "url": "http://x"}}}`)
	locs := p.SearchOrder()
	if e, err := p.Find(locs, "gitlab"); err != nil || !e.Disabled {
		t.Errorf("a disabled entry is found: %+v, %v", e, err)
	}
	var ee *EntryError
	if _, err := p.Find(locs, "broken"); !errors.As(err, &ee) || ee.Server != "broken" || !strings.Contains(err.Error(), "carrier-pigeon") || !strings.Contains(err.Error(), ".mcp.json") {
		t.Errorf("broken: %v", err)
	}
	var nf *NotFoundError
	if _, err := p.Find(locs, "githb"); !errors.As(err, &nf) || strings.Join(nf.Known, ",") != "broken,github,gitlab" {
		t.Errorf("not found: %v (%+v)", err, nf)
	}
	named := writeFile(t, filepath.Join(p.Home, "bad.json"), `{`)
	var fe *FileError
	if _, err := p.Find([]Location{p.File(named)}, "github"); !errors.As(err, &fe) || fe.Path != named {
		t.Errorf("a named file that does not parse: %v", err)
	}
	writeFile(t, filepath.Join(p.Home, ".cursor", "mcp.json"), `{`)
	if _, err := p.Find(p.SearchOrder(), "nope"); !errors.As(err, &nf) || len(nf.Problems) != 1 {
		t.Errorf("a searched file that does not parse: %v", err)
	}
}

// TestToolFilters reads the allow and deny lists the hosts write, and not
// the approval lists.
func TestToolFilters(t *testing.T) {
	p := testPlaces(t)
	writeFile(t, filepath.Join(p.Cwd, ".mcp.json"), `{"mcpServers": {
		"gemini": {"command": "x", "includeTools": ["read", "write", "delete"], "excludeTools": ["delete"]},
		"roo": {"command": "x", "disabledTools": ["delete", "drop"], "excludeTools": ["drop", "nuke"], "alwaysAllow": ["read"]},
		"cline": {"command": "x", "autoApprove": ["read"]}}}`)
	entries, _ := p.Load(p.SearchOrder())
	got := map[string]Entry{}
	for _, e := range entries {
		got[e.Name] = e
	}
	for _, tc := range []struct {
		server, tool string
		want         bool
	}{
		{"gemini", "read", true}, {"gemini", "delete", false}, {"gemini", "other", false},
		{"roo", "read", true}, {"roo", "other", true}, {"roo", "delete", false}, {"roo", "drop", false}, {"roo", "nuke", false},
		{"cline", "read", true}, {"cline", "other", true},
	} {
		e := got[tc.server]
		if e.ToolAllowed(tc.tool) != tc.want {
			t.Errorf("%s: ToolAllowed(%s) = %v (allow %v deny %v)", tc.server, tc.tool, !tc.want, e.Allow, e.Deny)
		}
	}
	if d := strings.Join(got["roo"].Deny, ","); d != "drop,nuke,delete" {
		t.Errorf("roo deny list %s, want excludeTools then disabledTools, each name once", d)
	}
	if e := got["cline"]; e.Allow != nil || e.Deny != nil {
		t.Errorf("an approval list read as a filter: allow %v deny %v", e.Allow, e.Deny)
	}
}
