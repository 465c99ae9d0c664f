package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

func dialTestserver(t *testing.T) *client.Conn {
	t.Helper()
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	t.Cleanup(srv.Close)
	c, err := client.Dial(context.Background(), client.URL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// definitionNames are the tool names in a tools array, in order.
func definitionNames(t *testing.T, p Provider, defs json.RawMessage) []string {
	t.Helper()
	var arr []map[string]any
	if err := json.Unmarshal(defs, &arr); err != nil {
		t.Fatalf("definitions are not an array: %v", err)
	}
	if p == Gemini || p == GeminiOpenAPI {
		var g []struct {
			FunctionDeclarations []map[string]any `json:"functionDeclarations"`
		}
		json.Unmarshal(defs, &g)
		arr = g[0].FunctionDeclarations
	}
	var names []string
	for _, d := range arr {
		if f, ok := d["function"].(map[string]any); ok {
			d = f
		}
		name, _ := d["name"].(string)
		if name == "" {
			name, _ = d["type"].(string)
		}
		names = append(names, name)
	}
	return names
}

func call(t *testing.T, tb *Toolbox, name, args string) (ToolResult, string) {
	t.Helper()
	tr, err := tb.Call(context.Background(), ToolCall{ID: "c1", Name: name}, []byte(args))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var m map[string]any
	json.Unmarshal(tr.Message, &m)
	return tr, modelText(t, tb.target.Provider, m)
}

// TestToolboxConn runs a Toolbox over a testservers Conn, for Anthropic:
// every tool defined, calls answered, bad arguments and unknown names
// answered as errors the model can act on, big results cut and read back.
func TestToolboxConn(t *testing.T) {
	ctx := context.Background()
	c := dialTestserver(t)
	store := NewMemoryStore(0)
	tb, err := NewToolbox(ctx, FromConn(c), Target{Provider: Anthropic}, ToolboxOptions{Result: ResultOptions{Store: store, MaxBytes: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	names := definitionNames(t, Anthropic, tb.Definitions())
	for _, want := range append(testservers.ToolNames(), ReadResultName) {
		if !slices.Contains(names, want) {
			t.Errorf("definitions lack %s: %v", want, names)
		}
	}
	if tb.Budgeted() || len(tb.Report()) < len(testservers.ToolNames()) {
		t.Errorf("no budget wants every tool; report %d", len(tb.Report()))
	}

	if tr, text := call(t, tb, "add", `{"a":2,"b":3}`); text != "2+3=5" || string(tr.Structured) != `{"sum":5}` {
		t.Errorf("add: %q %s", text, tr.Structured)
	}
	tr, text := call(t, tb, "add", `{"a":"two"}`)
	if !tr.IsError || !strings.Contains(text, "arguments.a") || !strings.Contains(text, "arguments.b") || !strings.Contains(string(tr.Message), `"is_error":true`) {
		t.Errorf("bad arguments want an error result naming each fault: %s", tr.Message)
	}
	if tr, text := call(t, tb, "fail", `{"message":"boom"}`); !tr.IsError || !strings.Contains(text, "boom") {
		t.Errorf("fail: %s", tr.Message)
	}
	if tr, text := call(t, tb, "no_such_tool", `{}`); !tr.IsError || !strings.Contains(text, "no tool is named") {
		t.Errorf("unknown: %s", tr.Message)
	}
	if tr, _ := call(t, tb, "content_types", `{}`); !strings.Contains(string(tr.Message), `"type":"image"`) {
		t.Errorf("content_types: %s", tr.Message)
	}
	tr, text = call(t, tb, "big", `{"mib":1}`)
	if len(tr.Handles) != 1 || len(text) > 4096+400 {
		t.Fatalf("big: %d bytes, handles %v", len(text), tr.Handles)
	}
	args := regexp.MustCompile(`\{"handle":.*?\}`).FindString(text)
	if tr, text := call(t, tb, ReadResultName, args); tr.IsError || !strings.Contains(text, "xxxxxxxx") || !strings.Contains(text, "of 1048576;") {
		t.Errorf("read_result %s: %.200s", args, text)
	}
}

// staticSource is a Source of tools listed once, whose calls say what
// they were called with (or answer with call).
type staticSource struct {
	tools []SourceTool
	call  func(name string, args json.RawMessage) (*mcp.CallToolResult, error)
}

func (s staticSource) ListTools(context.Context) ([]SourceTool, error) { return s.tools, nil }
func (s staticSource) CallTool(_ context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if s.call == nil {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("called " + name + " with " + string(args))}}, nil
	}
	return s.call(name, args)
}

// corpusSource is the tools of the real servers in testdata/servers.json
// (102 tools of six servers, docs/llm.md), named as a fleet names them.
func corpusSource(t testing.TB) staticSource {
	t.Helper()
	var data struct {
		Servers []struct {
			Server string     `json:"server"`
			Tools  []mcp.Tool `json:"tools"`
		} `json:"servers"`
	}
	b, err := os.ReadFile("testdata/servers.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	var src staticSource
	for _, s := range data.Servers {
		prefix := strings.ReplaceAll(strings.Fields(s.Server)[0], "-", "_")
		for _, tl := range s.Tools {
			src.tools = append(src.tools, SourceTool{Name: prefix + "__" + tl.Name, Tool: tl})
		}
	}
	return src
}

// TestToolboxBudget checks the budget over the largest tool set here: all
// fit under a large budget; under a small one the model gets the
// meta-tools, search finds the tool, describe reveals it by appending
// (the bytes before stay the same), and calls go through either way.
func TestToolboxBudget(t *testing.T) {
	ctx := context.Background()
	src := corpusSource(t)
	for _, p := range allProviders {
		target := Target{Provider: p}
		all, err := NewToolbox(ctx, src, target, ToolboxOptions{Budget: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		if all.Budgeted() || len(definitionNames(t, p, all.Definitions())) != len(src.tools) {
			t.Fatalf("%s: a large budget wants every tool", p)
		}
		tb, err := NewToolbox(ctx, src, target, ToolboxOptions{Budget: 1500})
		if err != nil {
			t.Fatal(err)
		}
		before := tb.Definitions()
		if !tb.Budgeted() || !slices.Equal(definitionNames(t, p, before), []string{SearchToolsName, DescribeToolName, CallToolName}) {
			t.Fatalf("%s: want the meta-tools, got %v", p, definitionNames(t, p, before))
		}
		t.Logf("%s: %d tools, all %d tokens; budgeted %d tokens (%.0f%% saved)", p, len(src.tools), tb.AllTokens(), tb.Tokens(), 100-100*float64(tb.Tokens())/float64(tb.AllTokens()))
		if tb.Tokens() > tb.AllTokens()/5 {
			t.Errorf("%s: budgeted %d tokens of %d", p, tb.Tokens(), tb.AllTokens())
		}

		_, text := call(t, tb, SearchToolsName, `{"query":"read the contents of a file","k":3}`)
		if !strings.HasPrefix(text, "1. server_filesystem__read") {
			t.Errorf("%s: search: %s", p, text)
		}
		_, text = call(t, tb, DescribeToolName, `{"name":"testservers__add"}`)
		if !strings.Contains(text, `"a":{"type":"number"}`) || !strings.Contains(text, "call it directly") {
			t.Errorf("%s: describe: %s", p, text)
		}
		after := tb.Definitions()
		names := definitionNames(t, p, after)
		if names[len(names)-1] != "testservers__add" || len(names) != 4 {
			t.Errorf("%s: the revealed tool wants appending: %v", p, names)
		}
		if open := before[:len(before)-closing(p)]; !bytes.HasPrefix(after, open) {
			t.Errorf("%s: a reveal changed the bytes before it:\n%s\n%s", p, before, after)
		}
		if _, text := call(t, tb, "testservers__add", `{"a":1,"b":2}`); !strings.Contains(text, `called testservers__add with {"a":1,"b":2}`) {
			t.Errorf("%s: direct call after reveal: %s", p, text)
		}
		if _, text := call(t, tb, CallToolName, `{"name":"server_memory__read_graph","arguments":{}}`); !strings.HasPrefix(text, "called server_memory__read_graph") {
			t.Errorf("%s: call_tool: %s", p, text)
		}
		if tr, text := call(t, tb, CallToolName, `{"name":"testservers__add","arguments":{"a":"x","b":1}}`); !tr.IsError || !strings.Contains(text, "arguments.a") {
			t.Errorf("%s: call_tool with bad arguments: %s", p, text)
		}
	}
}

// closing is how many bytes end a tools array: "]" or "]}]" for Gemini.
func closing(p Provider) int {
	if p == Gemini || p == GeminiOpenAPI {
		return 3
	}
	return 1
}

// TestToolboxBudgetFull checks that a reveal the budget has no room for
// leaves the definitions alone and sends the model to call_tool.
func TestToolboxBudgetFull(t *testing.T) {
	ctx := context.Background()
	src := corpusSource(t)
	tb, err := NewToolbox(ctx, src, Target{Provider: OpenAIChat}, ToolboxOptions{Budget: 1})
	if err != nil {
		t.Fatal(err)
	}
	before := string(tb.Definitions())
	_, text := call(t, tb, DescribeToolName, `{"name":"server_memory__read_graph"}`)
	if !strings.Contains(text, "Call it with call_tool") || string(tb.Definitions()) != before {
		t.Errorf("%s", text)
	}
}

// TestToolboxDeferred checks the providers' own deferred loading: their
// search tool first, every tool marked defer_loading.
func TestToolboxDeferred(t *testing.T) {
	ctx := context.Background()
	src := corpusSource(t)
	for p, first := range map[Provider]string{Anthropic: `{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`, OpenAIResponses: `{"type":"tool_search"}`} {
		tb, err := NewToolbox(ctx, src, Target{Provider: p}, ToolboxOptions{Budget: 100, Deferred: true})
		if err != nil {
			t.Fatal(err)
		}
		var defs []json.RawMessage
		json.Unmarshal(tb.Definitions(), &defs)
		if len(defs) != len(src.tools)+1 || string(defs[0]) != first {
			t.Fatalf("%s: %d definitions, first %s", p, len(defs), defs[0])
		}
		for _, d := range defs[1:] {
			var m map[string]any
			if json.Unmarshal(d, &m) != nil || m["defer_loading"] != true || m["name"] == nil {
				t.Fatalf("%s: %s", p, d)
			}
		}
	}
	if tb, _ := NewToolbox(ctx, src, Target{Provider: Gemini}, ToolboxOptions{Budget: 100, Deferred: true}); !strings.Contains(string(tb.Definitions()), SearchToolsName) {
		t.Error("Gemini has no deferred loading: the meta-tools")
	}
}

// TestToolboxErrors checks which failures reach the host as Go errors:
// an unknown outcome (visible through errors.Is), an unreachable server;
// and which the model gets as results: a server's refusal.
func TestToolboxErrors(t *testing.T) {
	ctx := context.Background()
	tools := []SourceTool{{Name: "pay", Tool: mcp.Tool{Name: "pay", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	for _, tc := range []struct {
		err     error
		goError bool
	}{
		{fmt.Errorf("call lost: %w", jsonrpc.ErrOutcomeUnknown), true},
		{errors.New("connection refused"), true},
		{jsonrpc.NewError(jsonrpc.CodeInternalError, "the upstream's answer was lost").WithOutcome(jsonrpc.OutcomeUnknown), true},
		{&jsonrpc.Error{Code: -32602, Message: "amount must be positive"}, false},
		{&fleet.UnknownToolError{Name: "pay"}, false},
	} {
		src := staticSource{tools: tools, call: func(string, json.RawMessage) (*mcp.CallToolResult, error) { return nil, tc.err }}
		tb, err := NewToolbox(ctx, src, Target{Provider: OpenAIResponses}, ToolboxOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := tb.Call(ctx, ToolCall{ID: "c", Name: "pay"}, []byte(`{}`))
		var tce *ToolCallError
		switch {
		case tc.goError && (!errors.As(err, &tce) || !errors.Is(err, tc.err)):
			t.Errorf("%v: want a *ToolCallError wrapping it, got %v", tc.err, err)
		case tc.goError && errors.Is(tc.err, jsonrpc.ErrOutcomeUnknown) && !errors.Is(err, jsonrpc.ErrOutcomeUnknown):
			t.Errorf("outcome unknown lost: %v", err)
		case !tc.goError && (err != nil || !tr.IsError):
			t.Errorf("%v: want an error result, got %v %s", tc.err, err, tr.Message)
		}
	}
}

// TestToolboxFleet runs a Toolbox over a fleet of two servers and a broken
// one: fleet names, a call through the fleet, and the broken one in Missing.
func TestToolboxFleet(t *testing.T) {
	ctx := context.Background()
	a := testservers.StartStreamable(testservers.HTTPOptions{})
	defer a.Close()
	b := testservers.StartLegacy(testservers.LegacyOptions{})
	defer b.Close()
	broken := testservers.StartStatus(testservers.StatusOptions{PostStatus: 500})
	defer broken.Close()
	f, err := fleet.New([]fleet.Server{
		{Name: "math", Target: client.URL(a.URL), Allow: []string{"add"}},
		{Name: "old", Target: client.URL(b.URL), Allow: []string{"echo"}},
		{Name: "broken", Target: client.URL(broken.URL)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tb, err := NewToolbox(ctx, FromFleet(f), Target{Provider: Gemini}, ToolboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names := definitionNames(t, Gemini, tb.Definitions()); !slices.Equal(names, []string{"math__add", "old__echo"}) {
		t.Errorf("names %v", names)
	}
	if _, text := call(t, tb, "old__echo", `{"text":"hi"}`); text != "hi" {
		t.Errorf("echo: %q", text)
	}
	// the server that could not list is not silently missing
	if m := tb.Missing(); len(m) != 1 || m["broken"] == nil {
		t.Errorf("Missing() = %v, want the broken server", m)
	}
}

// TestToolboxConcurrentReveals describes tools from many goroutines at
// once, as parallel tool calls do: each tool is revealed once, and the
// definitions stay the meta-tools followed by the revealed ones.
func TestToolboxConcurrentReveals(t *testing.T) {
	ctx := context.Background()
	src := corpusSource(t)
	tb, err := NewToolbox(ctx, src, Target{Provider: OpenAIResponses}, ToolboxOptions{Budget: 6000})
	if err != nil {
		t.Fatal(err)
	}
	if !tb.Budgeted() {
		t.Fatal("the corpus wants to be over this budget")
	}
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 12 {
				name := src.tools[(g*3+i)%24].Name
				if _, err := tb.Call(ctx, ToolCall{ID: "c", Name: DescribeToolName}, []byte(`{"name":"`+name+`"}`)); err != nil {
					t.Error(err)
				}
				_ = tb.Definitions()
			}
		}()
	}
	for range 8 {
		<-done
	}
	names := definitionNames(t, OpenAIResponses, tb.Definitions())
	if !slices.Equal(names[:3], []string{SearchToolsName, DescribeToolName, CallToolName}) {
		t.Fatalf("%v", names)
	}
	seen := map[string]bool{}
	for _, n := range names[3:] {
		if seen[n] {
			t.Errorf("%s revealed twice", n)
		}
		seen[n] = true
	}
	if len(seen) == 0 || tb.Tokens() > 6000 {
		t.Errorf("%d revealed, %d tokens", len(seen), tb.Tokens())
	}
}
