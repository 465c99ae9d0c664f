package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/mcp"
)

// TestArgumentsShapeBack: nulls strict mode forced on optional properties
// are removed, a JSON string where an object belongs is parsed, and what
// is still wrong comes back as an *ArgumentError naming each place.
func TestArgumentsShapeBack(t *testing.T) {
	tool := Convert("t", mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object",
		"properties":{"q":{"type":"string"},"limit":{"type":"integer"},"opts":{"type":"object","properties":{"deep":{"type":"boolean"}}},"n":{"type":["number","null"]}},
		"required":["q"]}`)}, Target{Provider: OpenAIChat, Strict: true})
	s, err := tool.Shape([]byte(`{"q":"x","limit":null,"opts":"{\"deep\":true}","n":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.Arguments); got != `{"n":null,"opts":{"deep":true},"q":"x"}` {
		t.Errorf("arguments %s", got)
	}
	if len(s.Repairs) != 2 || s.Repairs[0].Path != "/limit" || s.Repairs[0].Action != RemovedNull || s.Repairs[1].Path != "/opts" || s.Repairs[1].Action != ParsedString {
		t.Errorf("repairs %+v", s.Repairs)
	}
	_, err = tool.Arguments([]byte(`{"q":5,"opts":{"deep":"yes"},"extra":1}`))
	var ae *ArgumentError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v, want *ArgumentError", err)
	}
	for _, want := range []string{`arguments.q: expected string, got number 5`, `arguments.opts.deep: expected boolean, got string "yes"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	for _, bad := range []string{`{"q":`, `[1]`, `{"q":"a"} {}`} {
		if _, err := tool.Arguments([]byte(bad)); !errors.As(err, &ae) || ae.Problems[0].Path != "arguments" {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestShapeRepairsOnlyWhatIsUnambiguous: a string is parsed only where
// the schema refuses strings and wants what it holds; nulls stay where the
// schema takes them or requires the property.
func TestShapeRepairsOnlyWhatIsUnambiguous(t *testing.T) {
	tool := &Tool{Name: "t", Original: mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object",
		"properties":{
			"o":{"type":"object"},
			"s":{"type":["string","object"]},
			"l":{"type":"array","items":{"type":"array"}},
			"req":{"type":"string"},
			"m":{"type":"object","additionalProperties":{"type":"object"}}},
		"required":["req"],"additionalProperties":false}`)}}
	cases := []struct {
		args, want string
		repairs    int
		problem    string
	}{
		{`{"req":"x","o":"{\"a\":1}"}`, `{"o":{"a":1},"req":"x"}`, 1, ""},
		{`{"req":"x","s":"{\"a\":1}"}`, `{"req":"x","s":"{\"a\":1}"}`, 0, ""}, // takes a string: kept
		{`{"req":"x","o":"[1]"}`, ``, 0, "arguments.o: expected object, got string"},
		{`{"req":"x","o":"{} {}"}`, ``, 0, "arguments.o: expected object"},
		{`{"req":"x","l":["[1]","[2,3]"]}`, `{"l":[[1],[2,3]],"req":"x"}`, 2, ""},
		{`{"req":"x","m":{"k":"{}"}}`, `{"m":{"k":{}},"req":"x"}`, 1, ""},
		{`{"req":null}`, ``, 0, "arguments.req: expected string, got null"},
		{`"{\"req\":\"x\"}"`, `{"req":"x"}`, 0, ""}, // the whole object as a string
		{``, ``, 0, "arguments.req: required, but missing"},
		{`{"req":"x","rq":1}`, ``, 0, "arguments.rq: not a parameter of this tool; remove it (this object takes l, m, o, req, s)"},
	}
	for _, tc := range cases {
		s, err := tool.Shape([]byte(tc.args))
		if tc.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("%s: error %v, want %q", tc.args, err, tc.problem)
			}
			continue
		}
		if err != nil || string(s.Arguments) != tc.want || len(s.Repairs) != tc.repairs {
			t.Errorf("%s: %s %+v %v, want %s with %d repairs", tc.args, s.Arguments, s.Repairs, err, tc.want, tc.repairs)
		}
	}
}
