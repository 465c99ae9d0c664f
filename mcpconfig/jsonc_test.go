package mcpconfig

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestStripJSONC(t *testing.T) {
	in := `{
  // a comment with "quotes" and a , comma
  "a": "http://x//y", /* block
  comment */ "b": [1, 2,],
  "c": "a,}",
  "d": "esc\"aped // not a comment",
  "e": [3, // after a comma
  ],
}`
	var v map[string]any
	if err := json.Unmarshal(stripJSONC([]byte(in)), &v); err != nil {
		t.Fatalf("%v\n%s", err, stripJSONC([]byte(in)))
	}
	if v["a"] != "http://x//y" || v["c"] != "a,}" || len(v["b"].([]any)) != 2 || v["d"] != `esc"aped // not a comment` || len(v["e"].([]any)) != 1 {
		t.Errorf("%v", v)
	}
}

// FuzzParse feeds a config file's parser arbitrary bytes, as a project's
// .mcp.json from a cloned repository may hold: it never panics; a document
// that is plain JSON means the same once stripped; every entry is usable
// or says why not.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"a": {"command": "x", "args": ["-y"], "env": {"K": 1, "N": null}}}}`,
		"{\n // c\n \"servers\": {\"b\": {\"type\": \"sse\", \"url\": \"http://h/\",},},\n}",
		`{"projects": {"/p": {"mcpServers": {"c": {"url": "https://h", "oauth": {"clientId": "i", "scopes": "a b"}}}}}}`,
		`{"mcpServers": {"d": {"serverUrl": "https://h", "auth": {"CLIENT_ID": "i", "CLIENT_SECRET": "s"}, "includeTools": ["t"], "disabledTools": ["u"]}}}`,
		`{"mcpServers": {"e": {"type": "pigeon"}, "f": 3}}`,
		// mcporter's form
		`{"mcpServers": {"g": {"baseUrl": "https://h/mcp", "auth": "oauth", "lifecycle": {"mode": "keep-alive", "idleTimeoutMs": 5}, "bearerTokenEnv": "T"}}, "imports": []}`,
		`{"mcpServers": {"h": {"command": "npx -y 'a b' \\\" c", "env": {"K": "$env:V"}, "cwd": "~/x", "allowed_tools": ["t"]}, "i": {"command": ["x", 1]}, "j": {"executable": "e", "oauthScope": "a b"}}}`,
		`/* unterminated`, `"str // x"`, `[1,]`, `{"a":"\\"}`,
	} {
		f.Add([]byte(s))
	}
	p := Places{Home: "/h", Cwd: "/p"}
	loc := Location{Path: "fuzz.json", Label: "fuzz"}
	mcporterLoc := Location{Path: "/p/config/mcporter.json", Label: "mcporter", mcporter: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want any
		if json.Valid(data) && json.Unmarshal(data, &want) == nil { // 1e700 is valid JSON, and no float64
			var got any
			if err := json.Unmarshal(stripJSONC(data), &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("stripping valid JSON %q changed it: %q, %v", data, stripJSONC(data), err)
			}
		}
		entries, err := p.parse(data, loc)
		if err != nil {
			return
		}
		// The same document as mcporter's own file reads in its form.
		asMCPorter, err := p.parse(data, mcporterLoc)
		if err != nil || len(asMCPorter) != len(entries) {
			t.Fatalf("as mcporter's file: %d entries, %v; %d otherwise", len(asMCPorter), err, len(entries))
		}
		for _, e := range append(entries, asMCPorter...) {
			if e.Problem == "" && e.Kind() == "" {
				t.Fatalf("entry %q of unknown kind %q has no problem", e.Name, e.Type)
			}
			if e.Problem == "" {
				if _, err := e.Resolve(func(string) (string, bool) { return "v", true }); err != nil {
					var ee *EntryError
					if !errors.As(err, &ee) {
						t.Fatalf("Resolve(%q): %T %v, want an *EntryError", e.Name, err, err)
					}
				}
			}
		}
	})
}
