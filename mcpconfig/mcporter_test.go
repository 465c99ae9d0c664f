package mcpconfig

import (
	"path/filepath"
	"reflect"
	"testing"
)

// Entries in mcporter's form (its README and docs/config.md): baseUrl is
// the url, a command line is split as mcporter splits it, $env:NAME is
// ${NAME}, cwd starts at the file's folder, and the bearer token, OAuth
// client, tool filters and lifecycle are read; auth "oauth" is no
// Cursor auth object.
func TestMCPorterForm(t *testing.T) {
	p := testPlaces(t)
	path := filepath.Join(p.Cwd, "config", "mcporter.json")
	dir := filepath.Dir(path)
	writeFile(t, path, `{
  "$schema": "https://raw.githubusercontent.com/steipete/mcporter/main/mcporter.schema.json",
  "mcpServers": {
    "linear": {"description": "Linear issues", "baseUrl": "https://mcp.linear.app/mcp",
      "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}, "auth": "oauth", "lifecycle": "keep-alive",},
    "context7": {"base_url": "https://mcp.context7.com/mcp", "headers": {"Authorization": "$env:CONTEXT7_API_KEY"},
      "lifecycle": {"mode": "ephemeral", "idleTimeoutMs": 60000}},
    "line": {"command": "npx -y \"@scope/my server\" --root '~/a b'", "env": {"TOKEN": "$env:MY_TOKEN"}, "cwd": "tools"},
    "list": {"command": ["bun", "run", "./server.ts"], "args": ["ignored"], "cwd": "~/srv", "blockedTools": ["delete"]},
    "exe": {"executable": "/usr/local/bin/srv", "args": ["--stdio"], "allowed_tools": ["read"]},
    "token": {"url": "https://h/mcp", "bearerTokenEnv": "H_TOKEN", "headers": {"authorization": "old", "X-Org": "o"},
      "oauthClientId": "cid", "oauthClientSecretEnv": "CID_SECRET", "oauthScope": "read write"},
    "none": {"description": "nothing to run"},
  },
  "imports": ["cursor"],
}`)
	entries, problems := p.Load(p.SearchOrder())
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	got := map[string]Entry{}
	for _, e := range entries {
		if e.Format != FormatMCPorter || e.Label != "mcporter (project)" || e.Source != path {
			t.Errorf("%s: format %q, label %q, source %q", e.Name, e.Format, e.Label, e.Source)
		}
		e.workspace, e.home = "", ""
		got[e.Name] = e
	}
	want := map[string]Entry{
		"linear": {Name: "linear", URL: "https://mcp.linear.app/mcp", Headers: map[string]string{"Authorization": "Bearer ${LINEAR_API_KEY}"},
			Description: "Linear issues", Lifecycle: "keep-alive"},
		"context7": {Name: "context7", URL: "https://mcp.context7.com/mcp", Headers: map[string]string{"Authorization": "${CONTEXT7_API_KEY}"}, Lifecycle: "ephemeral"},
		"line": {Name: "line", Command: "npx", Args: []string{"-y", "@scope/my server", "--root", "~/a b"},
			Env: map[string]string{"TOKEN": "${MY_TOKEN}"}, Cwd: filepath.Join(dir, "tools")},
		"list": {Name: "list", Command: "bun", Args: []string{"run", "./server.ts"}, Cwd: filepath.Join(p.Home, "srv"), Deny: []string{"delete"}},
		"exe":  {Name: "exe", Command: "/usr/local/bin/srv", Args: []string{"--stdio"}, Cwd: dir, Allow: []string{"read"}},
		"token": {Name: "token", URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer ${H_TOKEN}", "X-Org": "o"},
			OAuth: &OAuth{ClientID: "cid", secret: "${CID_SECRET}", Scopes: []string{"read", "write"}}},
		"none": {Name: "none", Description: "nothing to run", Problem: "an entry needs a command (stdio) or a baseUrl (HTTP)"},
	}
	for name, w := range want {
		g := got[name]
		w.Format, w.Label, w.Source = FormatMCPorter, "mcporter (project)", path
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %#v\nwant %#v", name, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d entries, want %d", len(got), len(want))
	}
	// The variables expand as in every other file.
	env := map[string]string{"CONTEXT7_API_KEY": "k7", "MY_TOKEN": "t1", "H_TOKEN": "h1", "CID_SECRET": "s1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if r, err := got["context7"].Resolve(lookup); err != nil || r.Headers["Authorization"] != "k7" || r.Kind != KindAuto {
		t.Errorf("context7: %+v, %v", r, err)
	}
	if r, err := got["line"].Resolve(lookup); err != nil || !reflect.DeepEqual(r.Env, []string{"TOKEN=t1"}) || r.Dir != filepath.Join(dir, "tools") {
		t.Errorf("line: %+v, %v", r, err)
	}
	if r, err := got["token"].Resolve(lookup); err != nil || r.Headers["Authorization"] != "Bearer h1" || r.OAuth.ClientSecret() != "s1" {
		t.Errorf("token: %+v, %v", r, err)
	}
}

// A file named by hand (--config, $MCPCALL_CONFIG) is read in mcporter's
// form when it says it is mcporter's ("imports") or for an entry that
// uses a key only mcporter's form has (baseUrl); otherwise a command with
// spaces stays one path, as Claude and Cursor read it.
func TestMCPorterFormDetected(t *testing.T) {
	p := testPlaces(t)
	for _, tc := range []struct {
		doc, format, command string
		args                 []string
	}{
		{`{"mcpServers": {"s": {"command": "/opt/My App/srv"}}}`, FormatMCPServers, "/opt/My App/srv", nil},
		{`{"mcpServers": {"s": {"command": "npx -y srv"}}, "imports": []}`, FormatMCPorter, "npx", []string{"-y", "srv"}},
		{`{"mcpServers": {"s": {"command": ["npx", "-y", "srv"]}}}`, FormatMCPorter, "npx", []string{"-y", "srv"}},
		{`{"mcpServers": {"s": {"baseUrl": "https://h/mcp"}}}`, FormatMCPorter, "", nil},
	} {
		f := writeFile(t, filepath.Join(p.Home, "named.json"), tc.doc)
		e, err := p.Find([]Location{p.File(f)}, "s")
		if err != nil || e.Format != tc.format || e.Command != tc.command || !reflect.DeepEqual(e.Args, tc.args) {
			t.Errorf("%s: %+v, %v; want format %s, command %q %q", tc.doc, e, err, tc.format, tc.command, tc.args)
		}
	}
}

// mcporter's own file locations: the project's config/mcporter.json, and
// at home $XDG_CONFIG_HOME/mcporter (absolute only) then ~/.mcporter,
// mcporter.json before mcporter.jsonc, the first that exists;
// $MCPORTER_CONFIG stands for both.
func TestMCPorterLocations(t *testing.T) {
	mcporterPaths := func(p Places) []string {
		var out []string
		for _, l := range p.SearchOrder() {
			if l.mcporter {
				out = append(out, l.Path)
			}
		}
		return out
	}
	p := testPlaces(t)
	project := filepath.Join(p.Cwd, "config", "mcporter.json")
	legacy := filepath.Join(p.Home, ".mcporter")
	xdg := filepath.Join(p.Home, "xdg")
	env := map[string]string{}
	p.Getenv = func(k string) string { return env[k] }
	check := func(what string, want ...string) {
		t.Helper()
		if got := mcporterPaths(p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	check("nothing there", project, filepath.Join(legacy, "mcporter.json"))
	writeFile(t, filepath.Join(legacy, "mcporter.jsonc"), `{"mcpServers": {}}`)
	check("a .jsonc at home", project, filepath.Join(legacy, "mcporter.jsonc"))
	env["XDG_CONFIG_HOME"] = xdg
	check("XDG set, nothing in it", project, filepath.Join(legacy, "mcporter.jsonc"))
	writeFile(t, filepath.Join(xdg, "mcporter", "mcporter.json"), `{"mcpServers": {}}`)
	check("XDG set", project, filepath.Join(xdg, "mcporter", "mcporter.json"))
	env["XDG_CONFIG_HOME"] = "relative/xdg"
	check("a relative XDG is not used", project, filepath.Join(legacy, "mcporter.jsonc"))
	env["MCPORTER_CONFIG"] = "~/team/mcporter.json"
	check("$MCPORTER_CONFIG", filepath.Join(p.Home, "team", "mcporter.json"))
}

// The project's mcporter file wins over the home one, comes after the
// other project files and before the user's.
func TestMCPorterPrecedence(t *testing.T) {
	p := testPlaces(t)
	writeFile(t, filepath.Join(p.Home, ".mcporter", "mcporter.json"), `{"mcpServers": {"a": {"command": "home"}, "b": {"command": "home"}}}`)
	writeFile(t, filepath.Join(p.Cwd, "config", "mcporter.json"), `{"mcpServers": {"a": {"command": "project"}, "c": {"command": "mcporter"}}}`)
	writeFile(t, filepath.Join(p.Cwd, ".mcp.json"), `{"mcpServers": {"c": {"command": "claude-project"}}}`)
	writeFile(t, filepath.Join(p.Home, ".cursor", "mcp.json"), `{"mcpServers": {"b": {"command": "cursor-global"}}}`)
	for name, want := range map[string]string{"a": "project", "b": "cursor-global", "c": "claude-project"} {
		if e, err := p.Find(p.SearchOrder(), name); err != nil || e.Command != want {
			t.Errorf("%s: %q, %v; want %q", name, e.Command, err, want)
		}
	}
}

func TestSplitCommandLine(t *testing.T) {
	for in, want := range map[string][]string{
		`npx -y srv`:                 {"npx", "-y", "srv"},
		`  a   "b c"  'd "e"' f\ g `: {"a", "b c", `d "e"`, "f g"},
		`x "" y`:                     {"x", "y"},
		`end\`:                       {`end\`},
		``:                           nil,
	} {
		if got := splitCommandLine(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitCommandLine(%q) = %q, want %q", in, got, want)
		}
	}
}
