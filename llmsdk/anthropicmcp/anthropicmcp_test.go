package anthropicmcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/fakemodel"
	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/llmsdk/internal/exact"
	"github.com/anymcp/anymcp/llmsdk/internal/sdktest"
	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newClient(fm *fakemodel.Server) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(fm.AnthropicBase()), option.WithAPIKey("sk-ant-test"), option.WithMaxRetries(0))
}

// TestToolsExact: every tool of the corpus, converted for the Messages
// API (loose and strict), goes through the SDK's params and out of the
// real SDK client as the same JSON the core emitted.
func TestToolsExact(t *testing.T) {
	corpus := sdktest.Corpus(t)
	for _, strict := range []bool{false, true} {
		target := llm.Target{Provider: llm.Anthropic, Strict: strict}
		defs := llm.RequestTools(target, llm.ConvertAll(nil, corpus, target))
		tools, err := Tools(defs)
		if err != nil {
			t.Fatal(err)
		}
		typed := 0
		for _, tl := range tools {
			if tl.OfTool != nil {
				typed++
			}
		}
		fm := fakemodel.New(t, fakemodel.Turn{Text: "ok"})
		ac := newClient(fm)
		_, err = ac.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if sent := sdktest.Field(t, fm.Requests()[0].Body, "tools"); !exact.Equal(sent, defs) {
			t.Errorf("strict %v: the SDK sent other tools than the core emitted:\n sent %.600s\n core %.600s", strict, sent, defs)
		}
		t.Logf("strict %v: %d tools, %d as the SDK's typed params", strict, len(tools), typed)
	}
}

// TestCallsAndBlocks: the model's tool_use blocks come out as (id, name,
// input); a result goes back as the core's tool_result block.
func TestCallsAndBlocks(t *testing.T) {
	fm := fakemodel.New(t,
		fakemodel.Turn{Text: "adding", ToolCalls: []fakemodel.ToolCall{{ID: "toolu_1", Name: "add", Args: `{"a":1,"b":2}`}}},
		fakemodel.Turn{Text: "3"},
	)
	ac := newClient(fm)
	ctx := context.Background()
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("1+2?"))}
	msg, err := ac.Messages.New(ctx, anthropic.MessageNewParams{Model: "m", MaxTokens: 100, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	calls := Calls(msg)
	if len(calls) != 1 || calls[0].ID != "toolu_1" || calls[0].Name != "add" || !exact.Equal(calls[0].Args, []byte(`{"a":1,"b":2}`)) {
		t.Fatalf("calls %+v", calls)
	}
	result := json.RawMessage(`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"3"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}],"is_error":true}`)
	b, err := Block(llm.ToolResult{Message: result})
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, msg.ToParam(), anthropic.NewUserMessage(b))
	if _, err := ac.Messages.New(ctx, anthropic.MessageNewParams{Model: "m", MaxTokens: 100, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Messages []struct {
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := fm.Requests()[1].Decode(&sent); err != nil || len(sent.Messages) != 3 {
		t.Fatalf("sent %s (%v)", fm.Requests()[1].Body, err)
	}
	if got := sent.Messages[2].Content[0]; !exact.Equal(got, result) {
		t.Errorf("sent %s, want %s", got, result)
	}
}

// TestToolLoop: a whole loop with the real SDK client: the model calls a
// test server's add tool, Answer runs it through a Toolbox, and the next
// request carries its tool_result.
func TestToolLoop(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tb, err := llm.NewToolbox(ctx, llm.FromConn(conn), llm.Target{Provider: llm.Anthropic}, llm.ToolboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := Tools(tb.Definitions())
	if err != nil {
		t.Fatal(err)
	}
	fm := fakemodel.New(t,
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "toolu_1", Name: "add", Args: `{"a":2,"b":3}`}}},
		fakemodel.Turn{Text: "5"},
	)
	ac := newClient(fm)
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("2+3?"))}
	var final string
	for range 3 {
		msg, err := ac.Messages.New(ctx, anthropic.MessageNewParams{Model: "m", MaxTokens: 100, Messages: msgs, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if len(Calls(msg)) == 0 {
			final = msg.Content[0].Text
			break
		}
		answer, err := Answer(ctx, tb, msg)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, msg.ToParam(), answer)
	}
	if final != "5" {
		t.Errorf("final answer %q", final)
	}
	var sent struct {
		Messages []struct {
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := fm.Requests()[1].Decode(&sent); err != nil || len(sent.Messages) != 3 {
		t.Fatalf("sent %s (%v)", fm.Requests()[1].Body, err)
	}
	if got := sent.Messages[2].Content[0]; !exact.Equal(got, []byte(`{"type":"tool_result","tool_use_id":"toolu_1","content":"2+3=5"}`)) {
		t.Errorf("the second request carried %s", got)
	}
}
