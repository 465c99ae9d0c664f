package llm

import (
	"errors"
	"github.com/anymcp/anymcp/mcp"
	"testing"
)

// FuzzSamplingAnswer: a model endpoint's answer is untrusted input. Either
// parser returns a result an MCP server can take (role assistant, at least
// one content block, tool_use inputs that are JSON objects) or a
// *SamplingResponseError; it never panics.
func FuzzSamplingAnswer(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","choices":[{"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"model":"m","choices":[{"message":{"content":null,"refusal":"no"},"finish_reason":"stop"}]}`,
		`{"model":"m","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t","name":"f","input":{"a":[1]}}],"stop_reason":"tool_use"}`,
		`{"content":[{"type":"thinking"}],"stop_reason":"pause_turn"}`,
		`{"choices":[]}`, `null`, `[]`, `{"choices":[{"message":{"tool_calls":[{"type":"function","function":{"arguments":"[1]"}}]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for name, parse := range map[string]func([]byte) (any, error){
			"chat":      func(b []byte) (any, error) { return chatResult(b, OpenAIChat) },
			"anthropic": func(b []byte) (any, error) { return anthropicResult(b) },
		} {
			v, err := parse(raw)
			if err != nil {
				var re *SamplingResponseError
				if !errors.As(err, &re) {
					t.Fatalf("%s: error %T %v", name, err, err)
				}
				continue
			}
			res := mustResult(t, v)
			if res.Role != "assistant" || len(res.Content) == 0 {
				t.Fatalf("%s: result %+v", name, res)
			}
			for _, c := range res.Content {
				if c.Type == "tool_use" && (len(c.Input) == 0 || c.Input[0] != '{') {
					t.Fatalf("%s: tool_use input %q", name, c.Input)
				}
			}
		}
	})
}

func mustResult(t *testing.T, v any) *mcpResult {
	t.Helper()
	r, ok := v.(*mcpResult)
	if !ok || r == nil {
		t.Fatalf("result %T", v)
	}
	return r
}

type mcpResult = mcp.CreateMessageResult
