package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// goldenCase is one command whose human and JSON output are kept in
// testdata/NAME.golden and testdata/NAME.json.golden.
type goldenCase struct {
	name string
	args []string // before the target
	code int
}

var goldenCases = []goldenCase{
	{"tools_list", []string{"tools", "list"}, 0},
	{"tools_call_add", []string{"tools", "call", "add", "a=1", "b=2.5"}, 0},
	{"tools_call_echo_args", []string{"tools", "call", "echo", "--args", `{"text":"hi there"}`}, 0},
	{"tools_call_content_types", []string{"tools", "call", "content_types"}, 0},
	{"tools_call_fail", []string{"tools", "call", "fail", "message=out of coffee"}, 1},
	{"resources_list", []string{"resources", "list"}, 0},
	{"resources_templates", []string{"resources", "templates"}, 0},
	{"resources_read_text", []string{"resources", "read", "test://static/text"}, 0},
	{"resources_read_blob", []string{"resources", "read", "test://static/blob"}, 0},
	{"resources_read_template", []string{"resources", "read", "test://items/7"}, 0},
	{"prompts_list", []string{"prompts", "list"}, 0},
	{"prompts_get", []string{"prompts", "get", "greet", "name=Ada", "style=formal"}, 0},
	{"complete_prompt", []string{"complete", "--prompt", "greet", "style=f"}, 0},
	{"complete_resource", []string{"complete", "--resource", "test://items/{id}", "id=1"}, 0},
	{"ping", []string{"ping"}, 0},
	{"call_raw", []string{"call", "prompts/get", "--params", `{"name":"simple"}`}, 0},
	{"call_raw_tool_error", []string{"call", "tools/call", "--params", `{"name":"fail","arguments":{"message":"out of coffee"}}`}, 1},
}

// TestGolden runs every command against the test servers over each
// transport, in human and JSON mode, and compares the output with the
// golden files (written from the Streamable HTTP run with -update). The
// transport and revision in "meta" are masked: the rest must not differ
// from one transport to another.
func TestGolden(t *testing.T) {
	for i, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := tc.target(t)
			r := newRunner(t)
			for _, gc := range goldenCases {
				for _, asJSON := range []bool{false, true} {
					name := gc.name
					args := append([]string(nil), gc.args...)
					if asJSON {
						name += ".json"
						args = append([]string{"--json"}, args...)
					}
					res := r.run(append(args, target...)...)
					if res.code != gc.code {
						t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, res.code, gc.code, res.stdout, res.stderr)
						continue
					}
					if asJSON {
						checkOneJSON(t, name, res.stdout)
						checkStderrJSONLines(t, name, res.stderr)
					} else if gc.code == 0 && res.stderr != "" {
						t.Errorf("%s: stderr not empty:\n%s", name, res.stderr)
					}
					got := normaliseMeta(res.stdout)
					if *update && i != 0 {
						continue // only the first transport writes
					}
					golden(t, name, got)
				}
			}
		})
	}
}

// checkOneJSON fails unless out is exactly one JSON document with meta.
func checkOneJSON(t *testing.T, name, out string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Errorf("%s: stdout is not JSON: %v\n%s", name, err, out)
		return
	}
	if dec.More() {
		t.Errorf("%s: stdout holds more than one JSON document:\n%s", name, out)
	}
	meta, ok := doc["meta"].(map[string]any)
	if !ok {
		t.Errorf("%s: no meta object:\n%s", name, out)
		return
	}
	for _, k := range []string{"transport", "protocolVersion", "serverInfo"} {
		if _, ok := meta[k]; !ok {
			t.Errorf("%s: meta has no %s", name, k)
		}
	}
}

// checkStderrJSONLines fails unless every stderr line is a JSON object.
func checkStderrJSONLines(t *testing.T, name, stderr string) {
	t.Helper()
	for _, line := range bytes.Split([]byte(strings.TrimSpace(stderr)), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Errorf("%s: stderr line is not JSON: %q", name, line)
		}
	}
}
