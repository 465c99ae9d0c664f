package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestCheckRules: each written rule refuses a definition that breaks it,
// and accepts the same definition with the fault fixed.
func TestCheckRules(t *testing.T) {
	oa := func(params string) string {
		return `{"type":"function","function":{"name":"t","parameters":` + params + `}}`
	}
	oaStrict := func(params string) string {
		return `{"type":"function","function":{"name":"t","strict":true,"parameters":` + params + `}}`
	}
	gem := func(params string) string { return `{"name":"t","parameters":` + params + `}` }
	cases := []struct {
		provider  Provider
		bad, good string
		rule      string
	}{
		{OpenAIChat, `{"type":"function","function":{"name":"a b","parameters":{"type":"object","properties":{}}}}`, oa(`{"type":"object","properties":{}}`), "holds ' '"},
		{OpenAIChat, `{"type":"function","function":{"name":"` + strings.Repeat("n", 65) + `","parameters":{"type":"object","properties":{}}}}`, oa(`{"type":"object","properties":{}}`), "longer than 64"},
		{OpenAIChat, `{"type":"function","function":{"name":"t","description":"` + strings.Repeat("é", 1025) + `","parameters":{"type":"object","properties":{}}}}`, `{"type":"function","function":{"name":"t","description":"` + strings.Repeat("é", 1024) + `","parameters":{"type":"object","properties":{}}}}`, "more than 1024"},
		{OpenAIChat, oa(`{"type":"object"}`), oa(`{"type":"object","properties":{}}`), "list its properties"},
		{OpenAIChat, oa(`{"anyOf":[{"type":"object"}]}`), oa(`{"type":"object","properties":{}}`), `"type": "object"`},
		{OpenAIChat, oa(`{"type":"object","properties":{"a":{"type":"array"}}}`), oa(`{"type":"object","properties":{"a":{"type":"array","items":{}}}}`), "must have items"},
		{OpenAIChat, oaStrict(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`), oaStrict(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`), "additionalProperties: false"},
		{OpenAIChat, oaStrict(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`), oaStrict(`{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"],"additionalProperties":false}`), "must be required"},
		{OpenAIChat, oaStrict(`{"type":"object","properties":{"a":{"type":"string","minLength":1}},"required":["a"],"additionalProperties":false}`), oaStrict(`{"type":"object","properties":{"a":{"type":"string","pattern":"^x"}},"required":["a"],"additionalProperties":false}`), `"minLength" is not taken`},
		{OpenAIChat, oaStrict(`{"type":"object","properties":{"a":{"type":"string","format":"uri"}},"required":["a"],"additionalProperties":false}`), oaStrict(`{"type":"object","properties":{"a":{"type":"string","format":"email"}},"required":["a"],"additionalProperties":false}`), `format "uri"`},
		{OpenAIChat, oaStrict(`{"type":"object","properties":{"a":{}},"required":["a"],"additionalProperties":false}`), oaStrict(`{"type":"object","properties":{"a":{"type":"null"}},"required":["a"],"additionalProperties":false}`), "must say what it takes"},
		{OpenAIChat, oaStrict(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"required":["a"],"additionalProperties":false}`), oaStrict(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"required":["a"],"additionalProperties":false,"$defs":{"x":{"type":"string"}}}`), "does not name a definition"},
		{OpenAIChat, oaStrict(nest(11)), oaStrict(nest(10)), "nested deeper than 10"},
		{Anthropic, `{"name":"t","input_schema":{"type":"object","oneOf":[{}]}}`, `{"name":"t","input_schema":{"type":"object"}}`, "may not hold oneOf"},
		{Anthropic, `{"name":"t","strict":true,"input_schema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"minItems":2}},"additionalProperties":false}}`, `{"name":"t","strict":true,"input_schema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"minItems":1}},"additionalProperties":false}}`, "minItems above 1"},
		{Anthropic, `{"name":"t","strict":true,"input_schema":{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"additionalProperties":false,"$defs":{"n":{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}},"additionalProperties":false}}}}`, `{"name":"t","strict":true,"input_schema":{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"additionalProperties":false,"$defs":{"n":{"type":"object","properties":{"n":{"type":"string"}},"additionalProperties":false}}}}`, "recursive definitions"},
		{Gemini, `{"name":"1t","parametersJsonSchema":{"type":"object","properties":{}}}`, `{"name":"_1t","parametersJsonSchema":{"type":"object","properties":{}}}`, "must start with a letter"},
		{Gemini, `{"name":"t","parametersJsonSchema":{"type":"object","properties":{"a":{"type":"string","pattern":"x"}}}}`, `{"name":"t","parametersJsonSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`, `"pattern" is not taken`},
		{GeminiOpenAPI, gem(`{"type":"object","properties":{"a":{"type":["string","null"]}}}`), gem(`{"type":"object","properties":{"a":{"type":"string","nullable":true}}}`), "single type"},
		{GeminiOpenAPI, gem(`{"type":"object","properties":{"a":{"type":"integer","enum":[1,2]}}}`), gem(`{"type":"object","properties":{"a":{"type":"string","enum":["1","2"]}}}`), "enum values must be strings"},
		{GeminiOpenAPI, gem(`{"type":"object","properties":{"a":{"type":"object"}}}`), gem(`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}}}`), "at least one property"},
		{GeminiOpenAPI, gem(`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`), gem(`{"type":"object","properties":{"a":{"type":"string","format":"date-time"}}}`), `format "email"`},
		{GeminiOpenAPI, gem(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`), gem(`{"type":"object","properties":{"a":{"type":"string"}}}`), `"additionalProperties" is not taken`},
		{OpenAICompatible, oa(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`), oa(`{"type":"object","properties":{"a":{"type":"string"}}}`), "$defs is not taken"},
		{OpenAICompatible, oa(`{"type":"object","properties":{"a":{"type":"string","maxLength":5000}}}`), oa(`{"type":"object","properties":{"a":{"type":"string","maxLength":500}}}`), "maxLength above 1000"},
	}
	for _, tc := range cases {
		err := Check(Target{Provider: tc.provider}, json.RawMessage(tc.bad))
		var ce *CheckError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("%s: %s\n got %v, want an error naming %q", tc.provider, tc.bad, err, tc.rule)
		}
		if err := Check(Target{Provider: tc.provider}, json.RawMessage(tc.good)); err != nil {
			t.Errorf("%s: %s\n refused: %v", tc.provider, tc.good, err)
		}
	}
}

// nest is a strict object schema n object levels deep.
func nest(n int) string {
	s := `{"type":"string"}`
	for range n - 1 {
		s = `{"type":"object","properties":{"l":` + s + `},"required":["l"],"additionalProperties":false}`
	}
	return `{"type":"object","properties":{"l":` + s + `},"required":["l"],"additionalProperties":false}`
}

// TestLimits: the limits a host needs to size a tool set come from the
// same table as the checker.
func TestLimits(t *testing.T) {
	if l := (Target{Provider: OpenAIResponses}).Limits(); l != (Limits{MaxTools: 128, MaxName: 64, MaxDescription: 1024}) {
		t.Errorf("openai-responses: %+v", l)
	}
	if l := (Target{Provider: Anthropic}).Limits(); l.MaxTools != 0 || l.MaxDescription != 0 || l.MaxName != 64 {
		t.Errorf("anthropic: %+v", l)
	}
}
