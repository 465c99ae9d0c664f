package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// asSentTools are tools as mcp.Tool would never encode them (issue 37,
// item 4): members out of its order, annotations in server-filesystem's
// order, _meta keys unsorted, members mcp.Tool lacks, characters that
// encoding/json escapes for HTML.
var asSentTools = []string{
	`{"inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"name":"write_file","annotations":{"readOnlyHint":false,"idempotentHint":true,"destructiveHint":false,"openWorldHint":false},"description":"Create or overwrite a <file> & say so.","_meta":{"zeta/last":1,"alpha/first":{"b":2,"a":1}},"x-vendor-extension":{"since":"2.1"}}`,
	`{ "title" : "Read a file", "name":"read_file", "inputSchema":{"type":"object"}, "futureMember":[1,2,3] }`,
}

// compact is a JSON value without its whitespace: what the indented
// output of --json is byte for byte, once its indentation is taken out.
func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return b.String()
}

// tools list --json prints each tool as the server sent it, for one
// server and with --all (under "tool", beside its fleet name), and so
// does tools search --all --json: the same members in the same order,
// the same bytes once the indentation is taken out.
func TestToolsListedAsSent(t *testing.T) {
	url, _ := rawServer(t, "["+strings.Join(asSentTools, ",")+"]", `{}`)
	r := newRunner(t)
	config := writeFile(t, filepath.Join(r.cwd, "fleet.json"), `{"mcpServers":{"fs":{"url":"`+url+`"}}}`)
	check := func(what string, got []json.RawMessage) {
		t.Helper()
		if len(got) != len(asSentTools) {
			t.Fatalf("%s: %d tools, want %d", what, len(got), len(asSentTools))
		}
		for i, raw := range got {
			if c, want := compact(t, raw), compact(t, []byte(asSentTools[i])); c != want {
				t.Errorf("%s: tool %d\n%s\nwant as the server sent it\n%s", what, i, c, want)
			}
		}
	}

	res := r.runOK("--json", "tools", "list", url)
	var one struct{ Tools []json.RawMessage }
	if err := json.Unmarshal([]byte(res.stdout), &one); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	check("tools list --json URL", one.Tools)

	res = r.runOK("--json", "tools", "list", "--all", "--config", config)
	var all struct {
		Tools []struct {
			Name, Server string
			Tool         json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &all); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	var got []json.RawMessage
	for i, tl := range all.Tools {
		got = append(got, tl.Tool)
		if want := []string{"fs__read_file", "fs__write_file"}[i]; tl.Name != want || tl.Server != "fs" {
			t.Errorf("--all: tool %d named %q of %q, want %q of fs", i, tl.Name, tl.Server, want)
		}
	}
	got[0], got[1] = got[1], got[0] // sorted by fleet name
	check("tools list --all --json", got)

	res = r.runOK("--json", "tools", "search", "file", "--all", "--config", config)
	var found struct {
		Matches []struct {
			Name string
			Tool json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &found); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	if len(found.Matches) != 2 {
		t.Fatalf("tools search: %d matches, want 2\n%s", len(found.Matches), res.stdout)
	}
	got = nil
	for _, m := range found.Matches {
		got = append(got, m.Tool)
	}
	if found.Matches[0].Name == "fs__read_file" {
		got[0], got[1] = got[1], got[0]
	}
	check("tools search --all --json", got)
}
