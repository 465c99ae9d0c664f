package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/negotiate"
)

// load writes doc as the project's .mcp.json and returns its entries by
// name.
func load(t *testing.T, p Places, doc string) map[string]Entry {
	t.Helper()
	writeFile(t, filepath.Join(p.Cwd, ".mcp.json"), doc)
	entries, problems := p.Load(p.SearchOrder())
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	out := map[string]Entry{}
	for _, e := range entries {
		out[e.Name] = e
	}
	return out
}

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestResolveStdio(t *testing.T) {
	p := testPlaces(t)
	e := load(t, p, `{"mcpServers": {"local": {"command": "${env:BIN}", "args": ["--root", "${workspaceFolder}", "${userHome}/x"],
		"env": {"Z": "${MODE:-stdio}", "A": "${NAME}", "N": 3}, "cwd": "${workspaceFolder}/sub"}}}`)["local"]
	r, err := e.Resolve(lookupIn(map[string]string{"BIN": "/bin/srv", "NAME": "n"}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindStdio || r.Command != "/bin/srv" || !slices.Equal(r.Args, []string{"--root", p.Cwd, p.Home + "/x"}) ||
		!slices.Equal(r.Env, []string{"A=n", "N=3", "Z=stdio"}) || r.Dir != p.Cwd+"/sub" || r.Source != e.Source || r.Name != "local" {
		t.Errorf("%+v", r)
	}
	if got, want := r.Target().String(), fmt.Sprint([]string{"/bin/srv", "--root", p.Cwd, p.Home + "/x"}); got != want {
		t.Errorf("Target %s, want %s", got, want)
	}
	if opts := r.Options(); opts != nil {
		t.Errorf("a stdio entry has %d options", len(opts))
	}
}

func TestResolveHTTP(t *testing.T) {
	p := testPlaces(t)
	entries := load(t, p, `{"mcpServers": {
		"streamable": {"type": "streamable-http", "url": "http://127.0.0.1:${PORT}/${P:-mcp}", "headers": {"Authorization": "Bearer ${TOKEN}", "X-Team": "${TEAM:-core}"}},
		"plain": {"type": "http", "url": "https://h.example/mcp"},
		"legacy": {"type": "sse", "url": "https://h.example/sse"},
		"guess": {"url": "https://h.example/"},
		"windsurf": {"serverUrl": "https://h.example/"},
		"gemini": {"httpUrl": "https://h.example/mcp"},
		"vscode": {"type": "stdio", "command": "x"}}}`)
	for name, want := range map[string]negotiate.TransportPolicy{"streamable": negotiate.StreamableOnly, "plain": negotiate.StreamableOnly,
		"legacy": negotiate.SSEOnly, "guess": negotiate.TransportAuto, "windsurf": negotiate.TransportAuto, "gemini": negotiate.StreamableOnly} {
		e := entries[name]
		r, err := e.Resolve(lookupIn(map[string]string{"PORT": "8080", "TOKEN": "tok"}))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if r.Policy != want {
			t.Errorf("%s: policy %v, want %v", name, r.Policy, want)
		}
		if got := r.Target().String(); got != r.URL {
			t.Errorf("%s: target %s, URL %s", name, got, r.URL)
		}
		if n := len(r.Options()); n != len(r.Headers)+1 {
			t.Errorf("%s: %d options for %d headers", name, n, len(r.Headers))
		}
	}
	r, _ := entries["streamable"].Resolve(lookupIn(map[string]string{"PORT": "8080", "TOKEN": "tok"}))
	if r.URL != "http://127.0.0.1:8080/mcp" || r.Headers["Authorization"] != "Bearer tok" || r.Headers["X-Team"] != "core" {
		t.Errorf("%+v", r)
	}
	if e := entries["vscode"]; e.Kind() != KindStdio {
		t.Errorf("type stdio: kind %q", e.Kind())
	}
}

// TestResolveErrors names the server, the file and the field; an unset
// variable is an *UnsetVariableError.
func TestResolveErrors(t *testing.T) {
	p := testPlaces(t)
	entries := load(t, p, `{"mcpServers": {
		"cmd": {"command": "${NOPE}/srv"},
		"args": {"command": "x", "args": ["${NOPE}"]},
		"env": {"command": "x", "env": {"K": "${NOPE}"}},
		"cwd": {"command": "x", "cwd": "${NOPE}"},
		"url": {"url": "https://${NOPE}/"},
		"headers": {"url": "https://h/", "headers": {"X-Key": "${NOPE}"}},
		"id": {"url": "https://h/", "oauth": {"clientId": "${NOPE}"}},
		"secret": {"url": "https://h/", "auth": {"CLIENT_ID": "i", "CLIENT_SECRET": "${NOPE}"}},
		"issuer": {"url": "https://h/", "oauth": {"clientId": "i", "issuer": "${NOPE}"}},
		"scheme": {"url": "ftp://h/"},
		"input": {"command": "x", "env": {"T": "${input:token}"}},
		"pigeon": {"type": "carrier-pigeon", "url": "http://x"}}}`)
	file := filepath.Join(p.Cwd, ".mcp.json")
	for name, field := range map[string]string{"cmd": "command", "args": "args", "env": "env", "cwd": "cwd", "url": "url", "headers": "headers",
		"id": "oauth client id", "secret": "oauth client secret", "issuer": "oauth issuer"} {
		e := entries[name]
		_, err := e.Resolve(lookupIn(nil))
		var ee *EntryError
		var unset *UnsetVariableError
		if !errors.As(err, &ee) || ee.Server != name || ee.File != file || ee.Field != field || !errors.As(err, &unset) || unset.Name != "NOPE" {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want := fmt.Sprintf("server %q in %s: %s: ", name, file, field); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: message %q, want it to start %q", name, err, want)
		}
	}
	for name, want := range map[string]string{"scheme": "is not an http(s) URL", "input": "${input:token}", "pigeon": "carrier-pigeon"} {
		e := entries[name]
		var ee *EntryError
		if _, err := e.Resolve(lookupIn(nil)); !errors.As(err, &ee) || ee.Server != name || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an *EntryError saying %q", name, err, want)
		}
	}
}

// TestOAuthSettings reads both forms, expands them, and never prints the
// secret.
func TestOAuthSettings(t *testing.T) {
	p := testPlaces(t)
	entries := load(t, p, `{"mcpServers": {
		"claude": {"type": "http", "url": "https://h/", "oauth": {"clientId": "cid", "callbackPort": 8123, "scopes": "read write", "issuer": "https://as.example"}},
		"cursor": {"url": "https://h/", "auth": {"CLIENT_ID": "${ID}", "CLIENT_SECRET": "${SECRET}", "scopes": ["a"], "issuer": "https://as.example"}},
		"literal": {"url": "https://h/", "auth": {"CLIENT_ID": "i", "CLIENT_SECRET": "literal-secret-value"}}}}`)
	env := lookupIn(map[string]string{"ID": "cursor-id", "SECRET": "expanded-secret-value"})
	c, err := entries["claude"].Resolve(env)
	if err != nil || c.OAuth == nil || c.OAuth.ClientID != "cid" || c.OAuth.CallbackPort != 8123 || !slices.Equal(c.OAuth.Scopes, []string{"read", "write"}) || c.OAuth.HasSecret() {
		t.Fatalf("claude: %v %v", c.OAuth, err)
	}
	r, err := entries["cursor"].Resolve(env)
	if err != nil || r.OAuth.ClientID != "cursor-id" || r.OAuth.ClientSecret() != "expanded-secret-value" || r.OAuth.Issuer != "https://as.example" {
		t.Fatalf("cursor: %v %v", r.OAuth, err)
	}
	var cfg auth.Config
	r.OAuth.ApplyTo(&cfg)
	if cfg.ClientID != "cursor-id" || cfg.ClientSecret != "expanded-secret-value" || cfg.ClientIssuer != "https://as.example" || !slices.Equal(cfg.Scopes, []string{"a"}) {
		t.Errorf("ApplyTo: %+v", cfg)
	}
	lit := entries["literal"]
	lr, _ := lit.Resolve(env)
	js, _ := json.Marshal(lit)
	for _, s := range []string{
		fmt.Sprintf("%v", lit), fmt.Sprintf("%+v", lit), fmt.Sprintf("%#v", lit), fmt.Sprint(*lit.OAuth), fmt.Sprintf("%#v", *lit.OAuth),
		fmt.Sprintf("%+v", lit.OAuth), fmt.Sprintf("%v", lr), fmt.Sprintf("%+v", *lr), fmt.Sprintf("%#v", *lr), fmt.Sprint(*r.OAuth), string(js),
	} {
		if strings.Contains(s, "literal-secret-value") || strings.Contains(s, "expanded-secret-value") {
			t.Errorf("a client secret was printed: %s", s)
		}
	}
	if !strings.Contains(string(js), `"clientSecret":true`) {
		t.Errorf("JSON does not say there is a secret: %s", js)
	}
}
