package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// A host hands a server's tools to Claude and answers its tool calls.
func ExampleNewToolbox() {
	srv := testservers.StartStreamable(testservers.HTTPOptions{}) // stands in for any MCP server
	defer srv.Close()
	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	tb, err := llm.NewToolbox(ctx, llm.FromConn(conn), llm.Target{Provider: llm.Anthropic}, llm.ToolboxOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var tools []struct{ Name string }
	_ = json.Unmarshal(tb.Definitions(), &tools) // the request's "tools", as is
	fmt.Println(len(tools), "tools; the first:", tools[0].Name)

	// The model answered with a tool_use block: answer it with a tool_result.
	res, err := tb.Call(ctx, llm.ToolCall{ID: "toolu_01", Name: "add"}, []byte(`{"a":2,"b":3}`))
	if err != nil {
		log.Fatal(err) // nothing could be answered: the server is gone, or the outcome is unknown
	}
	fmt.Println(string(res.Message))

	// Arguments that do not fit the schema come back as a result the model can act on.
	res, _ = tb.Call(ctx, llm.ToolCall{ID: "toolu_02", Name: "add"}, []byte(`{"a":"two","b":3}`))
	fmt.Println(string(res.Message))
	// Output:
	// 14 tools; the first: echo
	// {"type":"tool_result","tool_use_id":"toolu_01","content":"2+3=5"}
	// {"type":"tool_result","tool_use_id":"toolu_02","content":"the arguments for tool \"add\" do not fit its input schema; fix these and call it again:\n- arguments.a: expected number, got string \"two\"","is_error":true}
}

// Over a budget, the model gets three tools to find, read and call the
// others; a tool it reads is appended to its tools.
func ExampleToolbox_budget() {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	tb, err := llm.NewToolbox(ctx, llm.FromConn(conn), llm.Target{Provider: llm.OpenAIChat}, llm.ToolboxOptions{Budget: 500})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("budgeted:", tb.Budgeted(), "; costs less than half:", tb.Tokens() < tb.AllTokens()/2)

	found, _ := tb.Call(ctx, llm.ToolCall{ID: "call_1", Name: "search_tools"}, []byte(`{"query":"sum of two numbers","k":1}`))
	var msg struct{ Content string }
	_ = json.Unmarshal(found.Message, &msg)
	fmt.Println(msg.Content)

	_, _ = tb.Call(ctx, llm.ToolCall{ID: "call_2", Name: "describe_tool"}, []byte(`{"name":"add"}`))
	var tools []struct{ Function struct{ Name string } }
	_ = json.Unmarshal(tb.Definitions(), &tools)
	for _, t := range tools {
		fmt.Print(t.Function.Name, " ")
	}
	fmt.Println()
	// Output:
	// budgeted: true ; costs less than half: true
	// 1. add: Adds two numbers; the sum is also in structuredContent.
	// Call describe_tool with a name for its parameters.
	// search_tools describe_tool call_tool add
}

// A result with an image, for the OpenAI Responses API: the image goes
// as an input_image, never as base64 text.
func ExampleResult() {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		mcp.TextContent("the chart:"),
		{Type: mcp.ContentImage, MimeType: "image/png", Data: "iVBORw0KGgo="},
		{Type: mcp.ContentAudio, MimeType: "audio/wav", Data: "UklGRg=="},
	}}
	out, err := llm.Result(context.Background(), res, llm.ToolCall{ID: "call_1", Name: "chart"}, llm.Target{Provider: llm.OpenAIResponses}, llm.ResultOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out.Message))
	for _, c := range out.Changes {
		fmt.Println(c.Path, c.Action, c.Why)
	}
	// Output:
	// {"type":"function_call_output","call_id":"call_1","output":[{"text":"the chart:","type":"input_text"},{"detail":"auto","image_url":"data:image/png;base64,iVBORw0KGgo=","type":"input_image"},{"text":"[audio, audio/wav, 4 bytes: not shown, the target takes no audio in a tool result]","type":"input_text"}]}
	// /content/2 placeholder audio, audio/wav, 4 bytes: the target takes no audio in a tool result
}
