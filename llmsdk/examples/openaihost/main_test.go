package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/internal/fakemodel"
	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// chatRequest is what the test reads of a Chat Completions request.
type chatRequest struct {
	Model string `json:"model"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

// TestToolLoop: the real openai-go client talks to the scripted model
// server; the model calls a test server's add tool, the host calls it
// through the Toolbox and sends the result back, and prints the model's
// final answer. Over one Conn, and over a fleet from a config file.
func TestToolLoop(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	cfgFile := filepath.Join(t.TempDir(), "mcp.json")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"calc": map[string]any{"type": "http", "url": srv.URL}}})
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tool string
		c          config
	}{
		{"conn", "add", config{server: srv.URL}},
		{"fleet", "calc__add", config{configFile: cfgFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := fakemodel.New(t,
				fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: tc.tool, Args: `{"a":2,"b":3}`}}},
				fakemodel.Turn{Text: "2 + 3 = 5"},
			)
			c := tc.c
			c.baseURL, c.key, c.model, c.maxTurns, c.prompt = fm.OpenAIBase(), "sk-test", "test-model", 5, "What is 2+3?"
			var out, log bytes.Buffer
			if err := run(context.Background(), c, &out, &log); err != nil {
				t.Fatalf("run: %v\nlog: %s", err, log.String())
			}
			if out.String() != "2 + 3 = 5\n" {
				t.Errorf("printed %q", out.String())
			}
			reqs := fm.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests", len(reqs))
			}
			var first, second chatRequest
			if err := reqs[0].Decode(&first); err != nil {
				t.Fatal(err)
			}
			if err := reqs[1].Decode(&second); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, tl := range first.Tools {
				found = found || tl.Function.Name == tc.tool
			}
			if !found || first.Model != "test-model" {
				t.Errorf("the first request offered no %q: %s", tc.tool, reqs[0].Body)
			}
			m := second.Messages
			if len(m) != 3 || m[0].Role != "user" || m[1].Role != "assistant" || len(m[1].ToolCalls) != 1 || m[1].ToolCalls[0].ID != "call_1" ||
				m[2].Role != "tool" || m[2].ToolCallID != "call_1" || m[2].Content != "2+3=5" {
				t.Errorf("the second request did not carry the call and its result: %s", reqs[1].Body)
			}
			if !strings.Contains(log.String(), "→ "+tc.tool+` {"a":2,"b":3}`) {
				t.Errorf("log %q", log.String())
			}
		})
	}
}

// TestToolLoopBadArguments: arguments that do not fit the schema go back
// to the model as an error result it can act on, and the loop goes on.
func TestToolLoopBadArguments(t *testing.T) {
	fm := fakemodel.New(t,
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "add", Args: `{"a":"two","b":3}`}}},
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_2", Name: "add", Args: `{"a":2,"b":3}`}}},
		fakemodel.Turn{Text: "5"},
	)
	var out, log bytes.Buffer
	c := config{baseURL: fm.OpenAIBase(), model: "m", maxTurns: 5, prompt: "2+3?"}
	if err := run(context.Background(), c, &out, &log); err != nil || out.String() != "5\n" {
		t.Fatalf("run: %v, printed %q", err, out.String())
	}
	var second chatRequest
	if err := fm.Requests()[1].Decode(&second); err != nil {
		t.Fatal(err)
	}
	last := second.Messages[len(second.Messages)-1]
	if text, _ := last.Content.(string); last.ToolCallID != "call_1" || !strings.Contains(text, "arguments.a: expected number") {
		t.Errorf("the model was told %+v", last)
	}
}
