package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/testservers"
)

const typedSchema = `{
  "type": "object",
  "properties": {
    "n": {"type": "number"},
    "i": {"type": "integer"},
    "b": {"type": "boolean"},
    "s": {"type": "string"},
    "arr": {"type": "array", "items": {"type": "integer"}},
    "tags": {"type": "array", "items": {"type": "string"}},
    "obj": {"type": "object"},
    "maybe": {"type": ["number", "null"]},
    "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
    "count": {"$ref": "#/$defs/Count"},
    "free": {}
  },
  "$defs": {"Count": {"type": "integer", "minimum": 0}}
}`

// TestPairsTyped checks key=value typing by the schema, and key:=json.
func TestPairsTyped(t *testing.T) {
	sch := parseSchema(json.RawMessage(typedSchema))
	cases := []struct {
		pairs []string
		want  string // the arguments as JSON
	}{
		{[]string{"n=1.5", "i=3", "b=true", "s=123"}, `{"b":true,"i":3,"n":1.5,"s":"123"}`},
		{[]string{"n=12345678901234567890"}, `{"n":12345678901234567890}`},
		{[]string{"arr=1", "arr=2"}, `{"arr":[1,2]}`},
		{[]string{"arr=[3,4]"}, `{"arr":[3,4]}`},
		{[]string{"tags=a,b", "tags=c"}, `{"tags":["a,b","c"]}`},
		{[]string{`obj={"k":[1]}`}, `{"obj":{"k":[1]}}`},
		{[]string{"maybe=null", "either=false", "count=7"}, `{"count":7,"either":false,"maybe":null}`},
		{[]string{"free=5", "unknown=true"}, `{"free":"5","unknown":"true"}`},
		{[]string{"s:=5", `free:={"x":null}`, "b:=false"}, `{"b":false,"free":{"x":null},"s":5}`},
		{[]string{"i=abc", "b=yes"}, `{"b":"yes","i":"abc"}`}, // left for validation to name
		{[]string{"s=a=b", "s2=http://x?y=z"}, `{"s":"a=b","s2":"http://x?y=z"}`},
	}
	for _, tc := range cases {
		pairs, err := parsePairs(tc.pairs)
		if err != nil {
			t.Fatalf("%v: %v", tc.pairs, err)
		}
		_, raw, err := callArgs(nil, pairs, sch)
		if err != nil {
			t.Fatalf("%v: %v", tc.pairs, err)
		}
		if string(raw) != tc.want {
			t.Errorf("%v → %s, want %s", tc.pairs, raw, tc.want)
		}
	}
	for _, bad := range []string{"novalue", "=x", ":=1"} {
		if _, err := parsePairs([]string{bad}); err == nil {
			t.Errorf("parsePairs(%q) accepted", bad)
		}
	}
	if p, _ := parsePairs([]string{"j:=nope"}); p != nil {
		if _, _, err := callArgs(nil, p, sch); err == nil {
			t.Error("j:=nope accepted")
		}
	}
}

// TestPairsOverArgs: pairs apply over --args; --args alone is sent as written.
func TestPairsOverArgs(t *testing.T) {
	sch := parseSchema(json.RawMessage(typedSchema))
	base := json.RawMessage(`{"s": "keep", "n": 1.50}`)
	_, raw, err := callArgs(base, nil, sch)
	if err != nil || string(raw) != string(base) {
		t.Errorf("--args alone: %s, %v", raw, err)
	}
	p, _ := parsePairs([]string{"n=2"})
	_, raw, err = callArgs(base, p, sch)
	if err != nil || string(raw) != `{"n":2,"s":"keep"}` {
		t.Errorf("--args + pair: %s, %v", raw, err)
	}
}

// TestSchemaValidate names the field of every problem.
func TestSchemaValidate(t *testing.T) {
	sch := parseSchema(json.RawMessage(`{
	  "type": "object",
	  "properties": {
	    "name": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
	    "age": {"type": "integer", "minimum": 0, "maximum": 150},
	    "level": {"enum": ["low", "high"]},
	    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
	    "inner": {"type": "object", "properties": {"depth": {"type": "number", "exclusiveMaximum": 10}}, "required": ["depth"]},
	    "kind": {"const": "fixed"},
	    "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
	  },
	  "required": ["name"],
	  "additionalProperties": false
	}`))
	decode := func(s string) map[string]any {
		m, err := decodeObject(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := []struct {
		args string
		want []string
	}{
		{`{"name": "ada", "age": 36, "level": "low", "tags": ["a"], "inner": {"depth": 1.5}, "kind": "fixed", "pick": 3}`, nil},
		{`{}`, []string{`argument "name" is required`}},
		{`{"name": 5}`, []string{`argument "name": expected string, got number 5`}},
		{`{"name": "a"}`, []string{`argument "name": must be at least 2 characters long`}},
		{`{"name": "Ada"}`, []string{`argument "name": must match the pattern ^[a-z]+$`}},
		{`{"name": "ada", "age": 3.5}`, []string{`argument "age": expected integer, got number 3.5`}},
		{`{"name": "ada", "age": 200}`, []string{`argument "age": must be ≤ 150, got 200`}},
		{`{"name": "ada", "level": "mid"}`, []string{`argument "level": must be one of ["low","high"], got "mid"`}},
		{`{"name": "ada", "tags": ["a", 2, "c"]}`, []string{`argument "tags": must have at most 2 items, got 3`, `argument "tags[1]": expected string, got number 2`}},
		{`{"name": "ada", "inner": {}}`, []string{`argument "inner.depth" is required`}},
		{`{"name": "ada", "inner": {"depth": 10}}`, []string{`argument "inner.depth": must be < 10, got 10`}},
		{`{"name": "ada", "kind": "other"}`, []string{`argument "kind": must be "fixed", got "other"`}},
		{`{"name": "ada", "pick": true}`, []string{`argument "pick": must match exactly one of the schema's oneOf alternatives`}},
		{`{"name": "ada", "nmae": "x"}`, []string{`argument "nmae": not accepted by the schema; did you mean "name"?`}},
	}
	for _, tc := range cases {
		got := sch.validate(decode(tc.args))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	if errs := parseSchema(nil).validate(map[string]any{"x": 1}); errs != nil {
		t.Errorf("no schema: %v", errs)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"echo", "add", "slow", "fail", "sample", "content_types", "get_weather", "get_forecast"}
	for in, want := range map[string][]string{
		"ech":         {"echo"},
		"ECHO":        {"echo"},
		"ad":          {"add"},
		"sampel":      {"sample"},
		"content":     {"content_types"},
		"get_wether":  {"get_weather"},
		"get":         {"get_weather", "get_forecast"},
		"zzzzzzzzzzz": {},
	} {
		if got := closest(in, names, 3); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestArgsSources covers --args JSON, @file and -, JSON on stdin, and
// key=value pairs, end to end over each transport.
func TestArgsSources(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target(t)
			r := newRunner(t)
			call := func(stdin string, args ...string) result {
				r.stdin = strings.NewReader(stdin)
				return r.run(append(append([]string{"tools", "call"}, args...), target...)...)
			}
			file := writeFile(t, filepath.Join(r.home, "args.json"), `{"text": "from a file"}`)
			for _, c := range []struct {
				stdin string
				args  []string
				want  string
			}{
				{"", []string{"echo", "--args", `{"text":"inline"}`}, "inline\n"},
				{"", []string{"echo", "--args", "@" + file}, "from a file\n"},
				{`{"text":"dash"}`, []string{"echo", "--args", "-"}, "dash\n"},
				{`  {"text":"piped"}` + "\n", []string{"echo"}, "piped\n"},
				{`{"text":"ignored"}`, []string{"echo", "text=pair wins"}, "pair wins\n"},
				{"", []string{"echo", "--args", `{"text":"base"}`, "text=override"}, "override\n"},
				{"", []string{"add", "a=1", "b=2.5"}, "1+2.5=3.5\n{\n  \"sum\": 3.5\n}\n"},
				{"", []string{"add", "a:=40", "b:=2"}, "40+2=42\n{\n  \"sum\": 42\n}\n"},
			} {
				res := call(c.stdin, c.args...)
				if res.code != 0 || res.stdout != c.want {
					t.Errorf("%v (stdin %q): exit %d, stdout %q, want %q; stderr %s", c.args, c.stdin, res.code, res.stdout, c.want, res.stderr)
				}
			}
			for _, c := range []struct {
				stdin, arg, errText string
			}{
				{`{"text":`, "echo", "arguments on stdin"},
				{`[1,2]`, "echo", "want a JSON object"},
				{`{"a":1} {"b":2}`, "echo", "more than one JSON value"},
			} {
				res := call(c.stdin, c.arg)
				if res.code != exitUsage || !strings.Contains(res.stderr, c.errText) {
					t.Errorf("stdin %q: exit %d, stderr %s", c.stdin, res.code, res.stderr)
				}
			}
		})
	}
}

// TestValidationAndSuggestions: a bad argument is named and nothing is
// sent; an unknown tool gets suggestions and is never called in its place.
func TestValidationAndSuggestions(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	res := r.run("tools", "call", "add", "a=one", "b=2", srv.URL)
	if res.code != exitRPC || !strings.Contains(res.stderr, `argument "a": expected number, got string "one"`) {
		t.Errorf("exit %d, stderr %s", res.code, res.stderr)
	}
	res = r.run("tools", "call", "add", "b=2", srv.URL)
	if res.code != exitRPC || !strings.Contains(res.stderr, `argument "a" is required`) {
		t.Errorf("exit %d, stderr %s", res.code, res.stderr)
	}
	res = r.run("tools", "call", "slow", "steps=-1", "delayMs=0", srv.URL)
	if res.code != exitRPC || !strings.Contains(res.stderr, `argument "steps": must be ≥ 0, got -1`) {
		t.Errorf("exit %d, stderr %s", res.code, res.stderr)
	}
	res = r.run("tools", "call", "ech", "text=hi", srv.URL)
	if res.code != exitRPC || !strings.Contains(res.stderr, `unknown tool "ech"; did you mean "echo"?`) {
		t.Errorf("exit %d, stderr %s", res.code, res.stderr)
	}
	res = r.run("prompts", "get", "greet", "nmae=Ada", srv.URL)
	if res.code != exitRPC || !strings.Contains(res.stderr, `argument "name" is required`) || !strings.Contains(res.stderr, `did you mean "name"?`) {
		t.Errorf("exit %d, stderr %s", res.code, res.stderr)
	}
	st := srv.Server().Stats()
	if st.Requests["tools/call"] != 0 || st.Requests["prompts/get"] != 0 {
		t.Errorf("refused calls reached the server: %v", st.Requests)
	}
	// --no-validate sends as is, and the server's own error exits 5.
	res = r.run("tools", "call", "--no-validate", "add", "a=1", "b=2", srv.URL)
	if res.code != exitToolError || !strings.Contains(res.stdout, "invalid arguments") {
		t.Errorf("--no-validate: exit %d, stdout %s, stderr %s", res.code, res.stdout, res.stderr)
	}
}

// TestPromptArgs: prompts get takes key=value (strings) and --args.
func TestPromptArgs(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	res := r.runOK("prompts", "get", "greet", "--args", `{"name":"Grace","style":"funny"}`, srv.URL)
	if !strings.Contains(res.stdout, "Please greet Grace in a funny style.") {
		t.Errorf("stdout %s", res.stdout)
	}
	res = r.runOK("prompts", "get", "greet", "--args", `{"name":"Grace"}`, "style=42", srv.URL)
	if !strings.Contains(res.stdout, "in a 42 style") {
		t.Errorf("stdout %s", res.stdout)
	}
}

// failingReader fails the test if anything reads it.
type failingReader struct{ t *testing.T }

func (f failingReader) Read([]byte) (int, error) {
	f.t.Error("stdin was read")
	return 0, io.EOF
}

// TestStdinLeftAlone: stdin is not read when the line gives arguments, or
// when the tool takes none (a stdin that stays open must not block it).
func TestStdinLeftAlone(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	r.stdin = failingReader{t}
	r.runOK("tools", "call", "counter", srv.URL)
	r.runOK("tools", "call", "echo", "text=x", srv.URL)
	r.runOK("tools", "call", "echo", "--args", `{"text":"x"}`, srv.URL)
	r.runOK("ping", srv.URL)
}

// TestHeaderOverride: -H and --bearer-env replace a config entry's headers
// of the same name.
func TestHeaderOverride(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	srv := testservers.StartStreamable(testservers.HTTPOptions{OnRequest: func(r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
	}})
	defer srv.Close()
	r := newRunner(t)
	r.env["TOK"] = "from-env"
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), `{"mcpServers": {"s": {"url": "`+srv.URL+`",
		"headers": {"Authorization": "Bearer from-config", "X-Team": "config", "X-Keep": "kept"}}}}`)
	r.runOK("ping", "-H", "x-team: flag", "--bearer-env", "TOK", "s")
	mu.Lock()
	defer mu.Unlock()
	if got := seen.Values("Authorization"); len(got) != 1 || got[0] != "Bearer from-env" {
		t.Errorf("Authorization %q", got)
	}
	if got := seen.Values("X-Team"); len(got) != 1 || got[0] != "flag" {
		t.Errorf("X-Team %q", got)
	}
	if got := seen.Get("X-Keep"); got != "kept" {
		t.Errorf("X-Keep %q", got)
	}
}

// TestTextAfterJSONRefused: --args, --params, arguments on stdin and
// key:=json take exactly one JSON value: a stray ] or } after it is a
// usage error, and nothing is sent, where it was dropped unseen (text
// after it was refused already).
func TestTextAfterJSONRefused(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	cases := []struct {
		stdin string
		args  []string
	}{
		{"", []string{"tools", "call", "echo", "--args", `{"text":"a"}]`}},
		{"", []string{"tools", "call", "echo", "--args", `{"text":"a"}}`}},
		{"", []string{"tools", "call", "echo", "--args", `{"text":"a"} x`}},
		{`{"text":"a"}]` + "\n", []string{"tools", "call", "echo"}},
		{"", []string{"call", "tools/call", "--params", `{"name":"echo","arguments":{"text":"a"}}}`}},
		{"", []string{"tools", "call", "add", "a:=1]", "b:=2"}},
	}
	for _, c := range cases {
		r := newRunner(t)
		r.stdin = strings.NewReader(c.stdin)
		res := r.run(append(c.args, srv.URL)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, "more than one JSON value, or text after it") {
			t.Errorf("%v (stdin %q): exit %d, want %d\nstdout %s\nstderr %s", c.args, c.stdin, res.code, exitUsage, res.stdout, res.stderr)
		}
	}
	if n := len(srv.Server().Stats().ToolCalls); n != 0 {
		t.Errorf("%d tools were called", n)
	}
}
