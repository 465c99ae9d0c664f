package jsonschema

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestKeywords checks each keyword the checker covers, accepted and refused.
func TestKeywords(t *testing.T) {
	cases := []struct {
		schema, value string
		want          []string // "path: message", "path missing", "path unknown"
	}{
		{`{"type":"string"}`, `"a"`, nil},
		{`{"type":"string"}`, `5`, []string{": expected string, got number 5"}},
		{`{"type":["string","null"]}`, `null`, nil},
		{`{"type":"integer"}`, `2.0`, nil},
		{`{"type":"integer"}`, `2.5`, []string{": expected integer, got number 2.5"}},
		{`{"enum":["a",1]}`, `1.0`, nil},
		{`{"const":{"k":true}}`, `{"k":false}`, []string{`: must be {"k":true}, got {"k":false}`}},
		{`{"required":["a"],"properties":{"a":{}}}`, `{}`, []string{"a missing"}},
		{`{"properties":{"a":{}},"additionalProperties":false}`, `{"b":1}`, []string{"b unknown"}},
		{`{"additionalProperties":{"type":"number"}}`, `{"b":"x"}`, []string{`b: expected number, got string "x"`}},
		{`{"patternProperties":{"^x_":{"type":"number"}},"additionalProperties":false}`, `{"x_a":1}`, nil},
		{`{"patternProperties":{"^x_":{"type":"number"}},"additionalProperties":false}`, `{"x_a":"s","y":1}`, []string{`x_a: expected number, got string "s"`, "y unknown"}},
		{`{"prefixItems":[{"type":"string"},{"type":"number"}],"items":false}`, `["a",1]`, nil},
		{`{"prefixItems":[{"type":"string"}],"items":false}`, `["a",1]`, []string{": must have at most 1 items, got 2"}},
		{`{"items":[{"type":"string"}],"additionalItems":{"type":"number"}}`, `["a",1,"b"]`, []string{`[2]: expected number, got string "b"`}},
		{`{"items":{"type":"string"},"minItems":2}`, `["a"]`, []string{": must have at least 2 items, got 1"}},
		{`{"anyOf":[{"type":"string"},{"type":"number"}]}`, `true`, []string{": matches none of the schema's anyOf alternatives"}},
		{`{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `1`, []string{": must match exactly one of the schema's oneOf alternatives"}},
		{`{"not":{"type":"string"}}`, `"a"`, []string{`: must not match the schema under "not"`}},
		{`{"not":{"type":"string"}}`, `1`, nil},
		{`{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}}`, `{"k":"a"}`, []string{"x missing"}},
		{`{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}}`, `{"k":"b"}`, []string{"y missing"}},
		{`{"$defs":{"n":{"type":"number"}},"properties":{"a":{"$ref":"#/$defs/n"},"b":{"$ref":"#/properties/a"}}}`, `{"a":1,"b":"x"}`, []string{`b: expected number, got string "x"`}},
		{`{"allOf":[{"minimum":1},{"maximum":3}]}`, `4`, []string{": must be ≤ 3, got 4"}},
		{`{"pattern":"^[a-z]+$","maxLength":3}`, `"abcd"`, []string{": must be at most 3 characters long"}},
		{`{"pattern":"(?<=x)"}`, `"y"`, nil}, // a pattern Go cannot compile is not checked
	}
	for _, tc := range cases {
		var got []string
		for _, p := range Parse([]byte(tc.schema)).Validate(decode(t, tc.value)) {
			switch {
			case p.Missing:
				got = append(got, p.Path+" missing")
			case p.Unknown:
				got = append(got, p.Path+" unknown")
			default:
				got = append(got, p.Path+": "+p.Message)
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s with %s:\n got %q\nwant %q", tc.schema, tc.value, got, tc.want)
		}
	}
}

// TestBounded: a schema that refers to itself for the same value, or whose
// alternatives fan out level after level, is checked within the budget and
// then accepts the value, instead of recursing until the stack overflows.
func TestBounded(t *testing.T) {
	var fan strings.Builder
	fan.WriteString(`{"allOf":[{"$ref":"#/$defs/d0"}],"$defs":{`)
	for i := range 40 {
		if i > 0 {
			fan.WriteString(",")
		}
		n := strconv.Itoa(i + 1)
		fan.WriteString(`"d` + strconv.Itoa(i) + `":{"allOf":[{"$ref":"#/$defs/d` + n + `"},{"$ref":"#/$defs/d` + n + `"}]}`)
	}
	fan.WriteString(`,"d40":{"required":["x"]}}}`)
	for _, s := range []string{
		`{"allOf":[{"$ref":"#"}],"required":["x"]}`,
		`{"anyOf":[{"$ref":"#"}],"required":["y"]}`,
		fan.String(),
	} {
		if got := Parse([]byte(s)).Validate(map[string]any{}); got != nil {
			t.Errorf("%.60s: %v, want accepted (budget exhausted)", s, got)
		}
	}
}
