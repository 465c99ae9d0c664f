package llm_test

import (
	"encoding/json"
	"fmt"

	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/mcp"
)

// A tool converted for OpenAI's strict mode, its report, and the
// arguments a model sends shaped back for the server.
func Example() {
	tool := mcp.Tool{
		Name:        "search",
		Description: "Search the notes.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["q"]}`),
	}
	t := llm.Convert(tool.Name, tool, llm.Target{Provider: llm.OpenAIChat, Strict: true})
	fmt.Println(t.Mode)
	fmt.Println(string(t.Definition))
	for _, c := range t.Changes {
		fmt.Println(c.Action, c.Path)
	}

	// Strict mode made limit required and nullable; the server never said
	// it takes null, so the null is left out.
	args, err := t.Arguments([]byte(`{"q":"llm","limit":null}`))
	fmt.Println(string(args), err)

	_, err = t.Arguments([]byte(`{"q":7}`))
	fmt.Println(err)
	// Output:
	// strict
	// {"type":"function","function":{"name":"search","description":"Search the notes.","parameters":{"additionalProperties":false,"properties":{"limit":{"minimum":1,"type":["integer","null"]},"q":{"type":"string"}},"required":["q","limit"],"type":"object"},"strict":true}}
	// closed #
	// made-required #
	// {"q":"llm"} <nil>
	// the arguments for tool "search" do not fit its input schema; fix these and call it again:
	// - arguments.q: expected string, got number 7
}
