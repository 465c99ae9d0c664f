package llm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/mcp"
)

func hardTool(t *testing.T, name string) mcp.Tool {
	t.Helper()
	for _, ct := range loadCorpus(t) {
		if ct.server == "hard" && ct.tool.Name == name {
			return ct.tool
		}
	}
	t.Fatalf("no hard tool %q", name)
	return mcp.Tool{}
}

// params returns the parameters schema of a definition, whatever the
// provider's wrapper.
func params(t *testing.T, tl Tool) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(tl.Definition, &obj); err != nil {
		t.Fatalf("%s: %v", tl.Definition, err)
	}
	if f, ok := obj["function"].(map[string]any); ok {
		obj = f
	}
	for _, k := range []string{"parameters", "input_schema", "parametersJsonSchema"} {
		if p, ok := obj[k].(map[string]any); ok {
			return p
		}
	}
	return nil
}

func find(changes []Change, a Action, path string) *Change {
	for i := range changes {
		if changes[i].Action == a && (path == "" || changes[i].Path == path) {
			return &changes[i]
		}
	}
	return nil
}

func at(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// TestConvertReports: hand-picked cases, each asserting the definition's
// shape and the change the report names for it.
func TestConvertReports(t *testing.T) {
	type check func(t *testing.T, tl Tool)
	cases := []struct {
		tool   string
		target Target
		mode   Mode
		check  check
	}{
		{"recursive_tree", Target{OpenAIChat, true}, ModeStrict, func(t *testing.T, tl Tool) {
			p := params(t, tl)
			if at(p, "properties", "root", "$ref") != "#/$defs/node" || at(p, "$defs", "node", "additionalProperties") != false {
				t.Errorf("recursion not kept in $defs: %s", tl.Definition)
			}
			if find(tl.Changes, MadeRequired, "#/$defs/node") == nil || find(tl.Changes, Closed, "#/$defs/node") == nil {
				t.Errorf("changes %+v", tl.Changes)
			}
		}},
		{"recursive_tree", Target{GeminiOpenAPI, false}, ModeLoose, func(t *testing.T, tl Tool) {
			c := find(tl.Changes, RecursionBounded, "")
			if c == nil || !strings.Contains(c.Path, "/children/items/properties/children/items") {
				t.Errorf("recursion not bounded at the third level: %+v", tl.Changes)
			}
			if strings.Contains(string(tl.Definition), "$ref") {
				t.Errorf("a $ref left for a target without them: %s", tl.Definition)
			}
		}},
		{"recursive_tree", Target{Anthropic, true}, ModeStrict, func(t *testing.T, tl Tool) {
			if find(tl.Changes, RecursionBounded, "") == nil || strings.Contains(string(tl.Definition), "$ref") {
				t.Errorf("Anthropic strict takes no recursion: %s %+v", tl.Definition, tl.Changes)
			}
		}},
		{"anyof_root", Target{OpenAIChat, true}, ModeStrict, func(t *testing.T, tl Tool) {
			p := params(t, tl)
			if p["anyOf"] != nil || at(p, "properties", "id") == nil || at(p, "properties", "email") == nil {
				t.Errorf("root alternatives not merged: %s", tl.Definition)
			}
			if find(tl.Changes, Merged, "#/anyOf") == nil {
				t.Errorf("changes %+v", tl.Changes)
			}
		}},
		{"maps", Target{OpenAIChat, true}, ModeLoose, func(t *testing.T, tl Tool) {
			if c := find(tl.Changes, FellBack, ""); c == nil || !strings.Contains(c.Why, "/properties/anything lists no properties") {
				t.Errorf("no fell-back naming the free-form object: %+v", tl.Changes)
			}
		}},
		{"maps", Target{GeminiOpenAPI, false}, ModeLoose, func(t *testing.T, tl Tool) {
			if at(params(t, tl), "properties", "headers", "type") != "string" || find(tl.Changes, Rewritten, "#/properties/headers") == nil {
				t.Errorf("a map not taken as JSON text: %s %+v", tl.Definition, tl.Changes)
			}
		}},
		{"tuples", Target{OpenAIChat, true}, ModeStrict, func(t *testing.T, tl Tool) {
			if at(params(t, tl), "properties", "point", "prefixItems") != nil || find(tl.Changes, Rewritten, "#/properties/point/prefixItems") == nil {
				t.Errorf("tuple not rewritten: %s %+v", tl.Definition, tl.Changes)
			}
		}},
		{"tuples", Target{Gemini, false}, ModeLoose, func(t *testing.T, tl Tool) {
			if at(params(t, tl), "properties", "pair", "prefixItems") == nil {
				t.Errorf("draft-7 tuple not written as prefixItems: %s", tl.Definition)
			}
		}},
		{"mixed_enum", Target{GeminiOpenAPI, false}, ModeLoose, func(t *testing.T, tl Tool) {
			p := params(t, tl)
			if at(p, "properties", "size", "enum") != nil || !strings.Contains(at(p, "properties", "size", "description").(string), "one of: [1,2,3]") {
				t.Errorf("integer enum not moved into the description: %s", tl.Definition)
			}
			if at(p, "properties", "color", "enum") == nil || find(tl.Changes, Moved, "#/properties/size/enum") == nil {
				t.Errorf("%s %+v", tl.Definition, tl.Changes)
			}
		}},
		{"a_tool_with_a_name_far_longer_than_any_provider_allows_for_its_functions_x80_cha", Target{Anthropic, false}, ModeLoose, func(t *testing.T, tl Tool) {
			if len(tl.Name) != 64 || find(tl.Changes, Renamed, "") == nil {
				t.Errorf("name %q (%d), changes %+v", tl.Name, len(tl.Name), tl.Changes)
			}
		}},
		{"long_description", Target{OpenAIResponses, false}, ModeLoose, func(t *testing.T, tl Tool) {
			var obj struct{ Description string }
			_ = json.Unmarshal(tl.Definition, &obj)
			if n := len([]rune(obj.Description)); n != 1024 || !strings.HasSuffix(obj.Description, "…") || find(tl.Changes, Truncated, "") == nil {
				t.Errorf("description of %d characters, changes %+v", n, tl.Changes)
			}
		}},
		{"long_description", Target{Anthropic, false}, ModeLoose, func(t *testing.T, tl Tool) {
			if find(tl.Changes, Truncated, "") != nil {
				t.Errorf("Anthropic has no documented limit: %+v", tl.Changes)
			}
		}},
		{"refs_everywhere", Target{OpenAICompatible, false}, ModeLoose, func(t *testing.T, tl Tool) {
			p := params(t, tl)
			if at(p, "properties", "b", "type") != "string" || !strings.HasPrefix(at(p, "properties", "d", "description").(string), "Another id (pattern") {
				t.Errorf("refs not inlined: %s", tl.Definition)
			}
			if find(tl.Changes, Inlined, "#/properties/b") == nil {
				t.Errorf("%+v", tl.Changes)
			}
		}},
		{"refs_everywhere", Target{OpenAIChat, true}, ModeStrict, func(t *testing.T, tl Tool) {
			if at(params(t, tl), "properties", "b", "anyOf") == nil { // optional → nullable $ref
				t.Errorf("%s", tl.Definition)
			}
			if find(tl.Changes, Rewritten, "#/properties/a") == nil { // #/properties/a kept as a $defs entry
				t.Errorf("%+v", tl.Changes)
			}
		}},
		{"allof_conflict", Target{Anthropic, false}, ModeLoose, func(t *testing.T, tl Tool) {
			c := find(tl.Changes, Merged, "#/allOf")
			if c == nil || !strings.Contains(c.Why, "lossy") || !strings.Contains(c.Why, "share nothing") {
				t.Errorf("lossy merge not said: %+v", tl.Changes)
			}
			if at(params(t, tl), "properties", "m") == nil {
				t.Errorf("%s", tl.Definition)
			}
		}},
		{"type_arrays", Target{GeminiOpenAPI, false}, ModeLoose, func(t *testing.T, tl Tool) {
			p := params(t, tl)
			if at(p, "properties", "a", "nullable") != true || at(p, "properties", "a", "type") != "string" {
				t.Errorf("nullable not spelled: %s", tl.Definition)
			}
			if at(p, "properties", "b", "anyOf") == nil || at(p, "properties", "c", "nullable") != true {
				t.Errorf("%s", tl.Definition)
			}
		}},
		{"const_values", Target{GeminiOpenAPI, false}, ModeLoose, func(t *testing.T, tl Tool) {
			if e, _ := at(params(t, tl), "properties", "s", "enum").([]any); len(e) != 1 || e[0] != "fixed" {
				t.Errorf("const not an enum of one: %s", tl.Definition)
			}
		}},
		{"nested_oneof", Target{OpenAIChat, true}, ModeStrict, func(t *testing.T, tl Tool) {
			if at(params(t, tl), "properties", "target", "anyOf") == nil || find(tl.Changes, Rewritten, "#/properties/target/oneOf") == nil {
				t.Errorf("%s %+v", tl.Definition, tl.Changes)
			}
		}},
		{"not_if_then_else", Target{OpenAIChat, true}, ModeStrict, func(t *testing.T, tl Tool) {
			for _, k := range []string{"#/if", "#/then", "#/else", "#/properties/mode/not"} {
				if find(tl.Changes, Dropped, k) == nil {
					t.Errorf("%s not reported dropped: %+v", k, tl.Changes)
				}
			}
		}},
		{"empty_schema", Target{OpenAIChat, false}, ModeLoose, func(t *testing.T, tl Tool) {
			if p := params(t, tl); p["type"] != "object" || p["properties"] == nil {
				t.Errorf("%s", tl.Definition)
			}
		}},
		{"empty_schema", Target{GeminiOpenAPI, false}, ModeLoose, func(t *testing.T, tl Tool) {
			if string(tl.Definition) != `{"name":"empty_schema","description":"An empty schema."}` {
				t.Errorf("no parameters should be left out: %s", tl.Definition)
			}
		}},
		{"string_root", Target{OpenAIChat, false}, ModeOmitted, func(t *testing.T, tl Tool) {
			if c := find(tl.Changes, Omitted, ""); c == nil || !strings.Contains(c.Why, "not an object") {
				t.Errorf("%+v", tl.Changes)
			}
		}},
		{"constraints", Target{OpenAIChat, true}, ModeStrict, func(t *testing.T, tl Tool) {
			s := at(params(t, tl), "properties", "s").(map[string]any)
			if s["maxLength"] != nil || !strings.Contains(s["description"].(string), "maxLength: 100000") || s["pattern"] != "^a+$" {
				t.Errorf("%v", s)
			}
			if find(tl.Changes, Moved, "#/properties/s/maxLength") == nil || find(tl.Changes, Dropped, "#/$schema") == nil {
				t.Errorf("%+v", tl.Changes)
			}
		}},
		{"constraints", Target{OpenAICompatible, false}, ModeLoose, func(t *testing.T, tl Tool) {
			s := at(params(t, tl), "properties", "s").(map[string]any)
			if s["maxLength"] != nil || s["minLength"] == nil || s["pattern"] != nil {
				t.Errorf("a grammar-breaking bound kept, or a small one dropped: %v", s)
			}
		}},
		{"deep_nesting", Target{OpenAIChat, true}, ModeLoose, func(t *testing.T, tl Tool) {
			if c := find(tl.Changes, FellBack, ""); c == nil || !strings.Contains(c.Why, "nested deeper than 10") {
				t.Errorf("%+v", tl.Changes)
			}
		}},
		{"big_enum", Target{OpenAIChat, true}, ModeLoose, func(t *testing.T, tl Tool) {
			if c := find(tl.Changes, FellBack, ""); c == nil || !strings.Contains(c.Why, "15000") {
				t.Errorf("%+v", tl.Changes)
			}
		}},
		{"bad.name with spaces/and:colons", Target{Gemini, false}, ModeLoose, func(t *testing.T, tl Tool) {
			if tl.Name != "bad.name_with_spaces_and_colons" {
				t.Errorf("name %q", tl.Name)
			}
		}},
		{"no_schema_root", Target{Anthropic, true}, ModeStrict, func(t *testing.T, tl Tool) {
			if params(t, tl)["type"] != "object" || find(tl.Changes, Rewritten, "#") == nil {
				t.Errorf("%s %+v", tl.Definition, tl.Changes)
			}
		}},
		{"anyof_required_root", Target{OpenAIChat, true}, ModeStrict, func(t *testing.T, tl Tool) {
			if params(t, tl)["anyOf"] != nil || find(tl.Changes, Moved, "#/anyOf") == nil {
				t.Errorf("%s %+v", tl.Definition, tl.Changes)
			}
		}},
		{"anyof_required_nested", Target{Anthropic, true}, ModeStrict, func(t *testing.T, tl Tool) {
			if at(params(t, tl), "properties", "who", "anyOf") != nil || find(tl.Changes, Moved, "#/properties/who/anyOf") == nil {
				t.Errorf("%s %+v", tl.Definition, tl.Changes)
			}
		}},
		{"anyof_required_nested", Target{Anthropic, false}, ModeLoose, func(t *testing.T, tl Tool) {
			if at(params(t, tl), "properties", "who", "anyOf") == nil {
				t.Errorf("a loose target that takes anyOf lost it: %s", tl.Definition)
			}
		}},
		{"unresolvable_ref", Target{OpenAIChat, true}, ModeLoose, func(t *testing.T, tl Tool) {
			if find(tl.Changes, Dropped, "#/properties/x/$ref") == nil || find(tl.Changes, FellBack, "") == nil {
				t.Errorf("%+v", tl.Changes)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.tool+"/"+string(tc.target.Provider), func(t *testing.T) {
			tl := Convert(tc.tool, hardTool(t, tc.tool), tc.target)
			if tl.Mode != tc.mode {
				t.Fatalf("mode %s, want %s: %+v", tl.Mode, tc.mode, tl.Changes)
			}
			if tl.Mode != ModeOmitted {
				if err := Check(Target{tc.target.Provider, tl.Mode == ModeStrict}, tl.Definition); err != nil {
					t.Fatal(err)
				}
			}
			tc.check(t, tl)
		})
	}
}

// TestConvertDeterministic: the same tool gives the same bytes every
// time, so a prompt cache holds.
func TestConvertDeterministic(t *testing.T) {
	for _, ct := range loadCorpus(t) {
		for _, target := range allTargets {
			a, b := Convert(ct.tool.Name, ct.tool, target), Convert(ct.tool.Name, ct.tool, target)
			if string(a.Definition) != string(b.Definition) {
				t.Fatalf("%v %s: two conversions differ", target, ct.tool.Name)
			}
		}
	}
}

// TestConvertAllUnique: names that fit to the same thing are kept apart,
// and the report says each rename.
func TestConvertAllUnique(t *testing.T) {
	tools := []mcp.Tool{{Name: "a.b"}, {Name: "a_b"}, {Name: "a b"}, {Name: strings.Repeat("x", 70)}, {Name: strings.Repeat("x", 70) + "y"}}
	got := ConvertAll(nil, tools, Target{Provider: OpenAIChat})
	seen := map[string]bool{}
	for i, tl := range got {
		if seen[tl.Name] || len(tl.Name) > 64 {
			t.Errorf("%d: name %q repeated or too long", i, tl.Name)
		}
		seen[tl.Name] = true
		if tl.Name != tools[i].Name && find(tl.Changes, Renamed, "") == nil {
			t.Errorf("%d: renamed %q → %q without a report", i, tools[i].Name, tl.Name)
		}
	}
	if got[1].Name != "a_b_2" || got[2].Name != "a_b_3" {
		t.Errorf("names %q %q", got[1].Name, got[2].Name)
	}
}

// TestRequestTools: the array a request takes, Gemini's wrapped.
func TestRequestTools(t *testing.T) {
	tools := []mcp.Tool{{Name: "a", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)}, {Name: "s", InputSchema: json.RawMessage(`{"type":"string"}`)}}
	if got := string(RequestTools(Target{Provider: Anthropic}, ConvertAll(nil, tools, Target{Provider: Anthropic}))); got != `[{"name":"a","input_schema":{"properties":{"x":{"type":"string"}},"type":"object"}}]` {
		t.Errorf("anthropic: %s", got)
	}
	if got := string(RequestTools(Target{Provider: Gemini}, ConvertAll(nil, tools, Target{Provider: Gemini}))); got != `[{"functionDeclarations":[{"name":"a","parametersJsonSchema":{"properties":{"x":{"type":"string"}},"type":"object"}}]}]` {
		t.Errorf("gemini: %s", got)
	}
	if got := string(RequestTools(Target{Provider: Gemini}, nil)); got != "[]" {
		t.Errorf("empty: %s", got)
	}
}
