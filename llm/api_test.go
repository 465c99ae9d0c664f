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
