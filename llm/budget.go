package llm

import (
	"bytes"
	"encoding/json"

	"github.com/anymcp/anymcp/mcp"
)

// The model-facing tools a Toolbox offers when the tools do not fit its
// budget. They are MCP tools, converted like any other, so that a
// gateway can serve the same ones.
const (
	SearchToolsName  = "search_tools"
	DescribeToolName = "describe_tool"
	CallToolName     = "call_tool"
)

// MetaTools returns search_tools, describe_tool and call_tool as MCP
// tools.
func MetaTools() []mcp.Tool {
	yes, no := true, false
	ro := &mcp.ToolAnnotations{ReadOnlyHint: &yes, IdempotentHint: &yes, OpenWorldHint: &no}
	return []mcp.Tool{{
		Name:  SearchToolsName,
		Title: "Search the tools",
		Description: "Finds the tools that can do a task, among more tools than are listed here. " +
			"Returns the best matches, best first, with their descriptions. " +
			"Then call describe_tool for a tool's parameters, and call it.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"what the tool should do, in a few words"},` +
			`"k":{"type":"integer","minimum":1,"maximum":20,"description":"how many tools to return (5 if absent)"}},` +
			`"required":["query"],"additionalProperties":false}`),
		Annotations: ro,
	}, {
		Name:  DescribeToolName,
		Title: "Describe a tool",
		Description: "Returns a tool's full definition: its description and the JSON schema of its arguments. " +
			"When there is room, the tool is also added to your tools, to call directly; otherwise call it with call_tool.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"the tool's name, as search_tools gave it"}},` +
			`"required":["name"],"additionalProperties":false}`),
		Annotations: ro,
	}, {
		Name:  CallToolName,
		Title: "Call a tool",
		Description: "Calls a tool found with search_tools, with its arguments. " +
			"The arguments must fit the schema describe_tool returns. Returns the tool's result.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"the tool's name"},` +
			`"arguments":{"type":"object","description":"the tool's arguments"}},` +
			`"required":["name","arguments"],"additionalProperties":false}`),
	}}
}

// Deferred loading: the providers' own forms of tools the model loads
// on demand (docs/llm-results.md says where each comes from).
var deferredSearchTool = map[Provider]json.RawMessage{
	// Anthropic's tool search tool (server side, BM25), with
	// defer_loading on the tools it searches.
	Anthropic: json.RawMessage(`{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`),
	// The Responses API's tool_search, with defer_loading on functions
	// (gpt-5.4 and later).
	OpenAIResponses: json.RawMessage(`{"type":"tool_search"}`),
}

// HasDeferredLoading says whether the provider has its own form of tools
// loaded on demand (Anthropic's tool search tool, the Responses API's
// tool_search).
func HasDeferredLoading(p Provider) bool { return deferredSearchTool[p] != nil }

// deferred returns a definition with "defer_loading": true added.
func deferred(def json.RawMessage) json.RawMessage {
	def = bytes.TrimSpace(def)
	if len(def) < 2 || def[0] != '{' {
		return def
	}
	out := make([]byte, 0, len(def)+22)
	out = append(out, `{"defer_loading":true`...)
	if rest := bytes.TrimSpace(def[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, def[1:]...)
}

// definitionsTokens estimates what a tools array costs.
func definitionsTokens(e Estimator, target Target, tools []Tool) int {
	return e.Tokens(string(RequestTools(target, tools)))
}
