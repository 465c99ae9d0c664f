package testservers

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// TestConformanceToolsAskThroughInputRequired: with ConformanceTools, a
// stateless server lists the suite's sampling and elicitation tools and
// asks for their input with input_required, under the tool's key and with
// the params the suite checks; the retry completes with the suite's text.
func TestConformanceToolsAskThroughInputRequired(t *testing.T) {
	answers := map[string]json.RawMessage{
		"sampling/createMessage": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","stopReason":"endTurn"}`),
		"elicitation/create":     json.RawMessage(`{"action":"accept","content":{"username":"u"}}`),
	}
	for _, tt := range []struct {
		tool, key, method string
		args              map[string]any
		wantParams        []string // fragments of the input request's params
		want              string
	}{
		{ConformanceSamplingTool, "sampling", "sampling/createMessage", map[string]any{"prompt": "Test prompt"},
			[]string{`"text":"Test prompt"`, `"maxTokens":100`}, "LLM response: hi"},
		{ConformanceElicitationTool, "elicitation", "elicitation/create", map[string]any{"message": "Who?"},
			[]string{`"message":"Who?"`, `"email":{"type":"string"`, `"required":["username","email"]`}, `User response: accept {"username":"u"}`},
		{ConformanceDefaultsTool, "defaults", "elicitation/create", nil,
			[]string{`"default":"John Doe"`, `"default":30`, `"default":95.5`, `"default":"active"`, `"default":true`}, `Elicitation completed: accept {"username":"u"}`},
		{ConformanceEnumsTool, "enums", "elicitation/create", nil,
			[]string{`"enumNames":["Option One"`, `"oneOf":[{"const":"value1"`, `"items":{"anyOf":[{"const":"value1"`, `"untitledMulti":{"type":"array","items":{"type":"string","enum"`}, `Elicitation completed: accept {"username":"u"}`},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			_, w := startStatelessHTTP(t, HTTPOptions{Options: Options{ConformanceTools: true}})
			w.caps = map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{}}
			params := map[string]any{"name": tt.tool, "arguments": tt.args}
			m, _ := w.ok(t, 1, "tools/call", params)
			r := needInput(t, m)
			if got := slices.Collect(maps.Keys(r.InputRequests)); !slices.Equal(got, []string{tt.key}) {
				t.Fatalf("inputRequests %v, want [%s]", got, tt.key)
			}
			req := r.InputRequests[tt.key]
			if req.Method != tt.method {
				t.Errorf("input request method %s, want %s", req.Method, tt.method)
			}
			for _, frag := range tt.wantParams {
				if !strings.Contains(string(req.Params), frag) {
					t.Errorf("input request params %s lack %s", req.Params, frag)
				}
			}
			inputs := map[string]json.RawMessage{tt.key: answers[tt.method]}
			m, _ = w.ok(t, 2, "tools/call", retry(params, inputs, r.RequestState))
			checkStatelessResult(t, m, "complete", -1)
			if text, isErr := toolText(t, m); text != tt.want || isErr {
				t.Errorf("result %q isError=%v, want %q", text, isErr, tt.want)
			}
		})
	}
}

// TestConformanceToolsOnlyWhenAsked: without ConformanceTools the tools
// are neither listed nor callable; with it they are listed after the
// others.
func TestConformanceToolsOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		_, w := startStatelessHTTP(t, HTTPOptions{Options: Options{ConformanceTools: on}})
		w.caps = map[string]any{"sampling": map[string]any{}}
		m, _ := w.ok(t, 1, "tools/list", nil)
		var names []string
		for _, tool := range result[mcp.ListToolsResult](t, m).Tools {
			names = append(names, tool.Name)
		}
		want := StatelessToolNames()
		if on {
			want = append(want, ConformanceToolNames()...)
		}
		if !slices.Equal(names, want) {
			t.Errorf("ConformanceTools=%v: tools/list %v, want %v", on, names, want)
		}
		m, _, _ = w.call(t, 2, "tools/call", map[string]any{"name": ConformanceSamplingTool, "arguments": map[string]any{"prompt": "p"}}, nil)
		if on {
			needInput(t, m)
		} else {
			wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
		}
	}
}
