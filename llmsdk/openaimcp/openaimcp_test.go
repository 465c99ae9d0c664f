package openaimcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/internal/fakemodel"
	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/llmsdk/internal/exact"
	"github.com/anymcp/anymcp/llmsdk/internal/sdktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newClient(fm *fakemodel.Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(fm.OpenAIBase()), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

// TestChatToolsExact: every tool of the corpus, converted for Chat
// Completions (loose, strict, compatible servers), goes through the SDK's
// params and out of the real SDK client as the same JSON the core emitted.
func TestChatToolsExact(t *testing.T) {
	corpus := sdktest.Corpus(t)
	for _, target := range []llm.Target{{Provider: llm.OpenAIChat}, {Provider: llm.OpenAIChat, Strict: true}, {Provider: llm.OpenAICompatible}} {
		defs := llm.RequestTools(target, llm.ConvertAll(nil, corpus, target))
		tools, err := ChatTools(defs)
		if err != nil {
			t.Fatal(err)
		}
		typed := 0
		for _, tl := range tools {
			if tl.OfFunction != nil {
				typed++
			}
		}
		fm := fakemodel.New(t, fakemodel.Turn{Text: "ok"})
		oc := newClient(fm)
		_, err = oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		sent := sdktest.Field(t, fm.Requests()[0].Body, "tools")
		if !exact.Equal(sent, defs) {
			t.Errorf("%+v: the SDK sent other tools than the core emitted:\n sent %.600s\n core %.600s", target, sent, defs)
		}
		t.Logf("%+v: %d tools, %d as the SDK's typed params", target, len(tools), typed)
		if typed == 0 {
			t.Errorf("%+v: no tool went as a typed param", target)
		}
	}
}

// TestResponsesToolsExact: the same through the Responses API.
func TestResponsesToolsExact(t *testing.T) {
	corpus := sdktest.Corpus(t)
	for _, strict := range []bool{false, true} {
		target := llm.Target{Provider: llm.OpenAIResponses, Strict: strict}
		defs := llm.RequestTools(target, llm.ConvertAll(nil, corpus, target))
		tools, err := ResponsesTools(defs)
		if err != nil {
			t.Fatal(err)
		}
		fm := fakemodel.New(t, fakemodel.Turn{Text: "ok"})
		oc := newClient(fm)
		_, err = oc.Responses.New(context.Background(), responses.ResponseNewParams{
			Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if sent := sdktest.Field(t, fm.Requests()[0].Body, "tools"); !exact.Equal(sent, defs) {
			t.Errorf("strict %v: the SDK sent other tools than the core emitted:\n sent %.600s\n core %.600s", strict, sent, defs)
		}
	}
}

// TestCalls: the model's tool calls, as the SDK decodes them, come out
// as (id, name, arguments); a result goes back as the core's message.
func TestCalls(t *testing.T) {
	fm := fakemodel.New(t,
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "add", Args: `{"a":1,"b":2}`}, {ID: "c2", Name: "echo", Args: `{"text":"x"}`}}},
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "r1", Name: "add", Args: `{"a":3}`}}},
		fakemodel.Turn{Text: "done"},
	)
	oc := newClient(fm)
	ctx := context.Background()
	comp, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	calls := ChatCalls(comp.Choices[0].Message)
	if len(calls) != 2 || calls[0].ID != "c1" || calls[0].Name != "add" || string(calls[0].Args) != `{"a":1,"b":2}` || calls[1].Name != "echo" {
		t.Fatalf("chat calls %+v", calls)
	}
	resp, err := oc.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	rc := ResponsesCalls(resp)
	if len(rc) != 1 || rc[0].ID != "r1" || rc[0].Name != "add" || string(rc[0].Args) != `{"a":3}` {
		t.Fatalf("responses calls %+v", rc)
	}

	msg := json.RawMessage(`{"role":"tool","tool_call_id":"c1","content":"3"}`)
	follow := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"images"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}`)
	tool, followup, err := ChatMessages(llm.ToolResult{Message: msg, Followup: follow})
	if err != nil || followup == nil {
		t.Fatal(err)
	}
	_, err = oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{comp.Choices[0].Message.ToParam(), tool, *followup}})
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := fm.Requests()[2].Decode(&sent); err != nil || len(sent.Messages) != 3 {
		t.Fatalf("sent %s (%v)", fm.Requests()[2].Body, err)
	}
	if !exact.Equal(sent.Messages[1], msg) || !exact.Equal(sent.Messages[2], follow) {
		t.Errorf("sent %s and %s, want %s and %s", sent.Messages[1], sent.Messages[2], msg, follow)
	}
	item, err := ResponsesItem(llm.ToolResult{Message: json.RawMessage(`{"type":"function_call_output","call_id":"r1","output":"3"}`)})
	if err != nil || item.OfFunctionCallOutput == nil || item.OfFunctionCallOutput.CallID.Value != "r1" {
		t.Errorf("responses item %+v (%v)", item, err)
	}
}

// TestRawFallback: a definition with a field the SDK's type has no room
// for still goes out as the core wrote it.
func TestRawFallback(t *testing.T) {
	defs := json.RawMessage(`[{"type":"function","function":{"name":"f","parameters":{"type":"object"}},"x-extra":{"a":[1,2]}}]`)
	tools, err := ChatTools(defs)
	if err != nil {
		t.Fatal(err)
	}
	fm := fakemodel.New(t, fakemodel.Turn{Text: "ok"})
	oc := newClient(fm)
	if _, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, Tools: tools}); err != nil {
		t.Fatal(err)
	}
	if sent := sdktest.Field(t, fm.Requests()[0].Body, "tools"); !exact.Equal(sent, defs) {
		t.Errorf("sent %s, want %s", sent, defs)
	}
}
