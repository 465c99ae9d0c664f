package llm

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/fakemodel"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

const testKey = "sk-test-0123456789abcdef"

func f64(f float64) *float64 { return &f }

// fullParams is a sampling request that uses every field the mapping reads.
func fullParams() *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{
		SystemPrompt:  "be brief",
		MaxTokens:     200,
		Temperature:   f64(0.5),
		StopSequences: []string{"END"},
		Messages: []mcp.SamplingMessage{
			{Role: "user", Content: mcp.Contents{mcp.TextContent("what is in the picture?"), {Type: mcp.ContentImage, Data: "iVBORw0=", MimeType: "image/png"}}},
			{Role: "assistant", Content: mcp.Contents{{Type: mcp.ContentToolUse, ID: "tu1", Name: "lookup", Input: json.RawMessage(`{"q":"cat"}`)}}},
			{Role: "user", Content: mcp.Contents{{Type: mcp.ContentToolResult, ToolUseID: "tu1", IsError: true, Content: []mcp.Content{mcp.TextContent("no such animal"), {Type: mcp.ContentImage, Data: "R0lG", MimeType: "image/gif"}}}}},
		},
		Tools:      []mcp.Tool{{Name: "lookup", Description: "looks up", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)}},
		ToolChoice: json.RawMessage(`{"mode":"required"}`),
	}
}

// body decodes a recorded request body into a generic value.
func body(t *testing.T, r fakemodel.Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := r.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// wantJSON compares got with the JSON text want, both as generic values.
func wantJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	var g any
	json.Unmarshal(gb, &g)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, gb, want)
	}
}

// TestSamplingChatCompletions: every field of a sampling request reaches
// the Chat Completions API as it spells it, the key as a bearer token, and
// the model's tool calls come back as tool_use blocks.
func TestSamplingChatCompletions(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Turn{Text: "a cat", ToolCalls: []fakemodel.ToolCall{{ID: "c9", Name: "lookup", Args: `{"q":"dog"}`}}})
	s, err := NewSampler(SamplingConfig{Provider: OpenAIChat, BaseURL: fm.OpenAIBase(), APIKey: testKey, Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CreateMessage(context.Background(), fullParams())
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "result", res, `{"role":"assistant","model":"gpt-test","stopReason":"toolUse","content":[
		{"type":"text","text":"a cat"},{"type":"tool_use","id":"c9","name":"lookup","input":{"q":"dog"}}]}`)
	reqs := fm.Requests()
	if len(reqs) != 1 || reqs[0].API != fakemodel.OpenAIChat {
		t.Fatalf("requests %v", reqs)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization %q", got)
	}
	wantJSON(t, "request", body(t, reqs[0]), `{
		"model":"gpt-test","max_completion_tokens":200,"temperature":0.5,"stop":["END"],"tool_choice":"required",
		"tools":[{"type":"function","function":{"name":"lookup","description":"looks up","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}],
		"messages":[
			{"role":"system","content":"be brief"},
			{"role":"user","content":[{"type":"text","text":"what is in the picture?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0="}}]},
			{"role":"assistant","tool_calls":[{"id":"tu1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"cat\"}"}}]},
			{"role":"tool","tool_call_id":"tu1","content":"[the tool reported an error]\nno such animal\n[image content, image/gif, 4 bytes of base64, not shown: a Chat Completions tool message takes text only]"}
		]}`)
}

// TestSamplingCompatible: an OpenAI-compatible endpoint gets max_tokens
// (what local model servers read), audio as input_audio, and no key
// header when none is configured.
func TestSamplingCompatible(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Turn{Text: "heard", Stop: fakemodel.StopMaxTokens})
	s, err := NewSampler(SamplingConfig{Provider: OpenAICompatible, BaseURL: fm.OpenAIBase(), Model: "llama"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CreateMessage(context.Background(), &mcp.CreateMessageParams{MaxTokens: 10, Messages: []mcp.SamplingMessage{
		{Role: "user", Content: mcp.Contents{{Type: mcp.ContentAudio, Data: "UklG", MimeType: "audio/wav"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "maxTokens" || res.Content[0].Text != "heard" {
		t.Errorf("result %+v", res)
	}
	r := fm.Requests()[0]
	if _, ok := r.Header["Authorization"]; ok {
		t.Errorf("sent Authorization without a key")
	}
	wantJSON(t, "request", body(t, r), `{"model":"llama","max_tokens":10,"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklG","format":"wav"}}]}]}`)
}

// TestSamplingAnthropic: the same request through the Messages API:
// x-api-key and anthropic-version, tool results with their images and
// error flag, toolChoice required as "any".
func TestSamplingAnthropic(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "toolu_9", Name: "lookup", Args: `{"q":"dog"}`}}})
	s, err := NewSampler(SamplingConfig{Provider: Anthropic, BaseURL: fm.AnthropicBase(), APIKey: testKey, Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CreateMessage(context.Background(), fullParams())
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "result", res, `{"role":"assistant","model":"claude-test","stopReason":"toolUse","content":{"type":"tool_use","id":"toolu_9","name":"lookup","input":{"q":"dog"}}}`)
	r := fm.Requests()[0]
	if r.API != fakemodel.Anthropic || r.Header.Get("x-api-key") != testKey || r.Header.Get("anthropic-version") != "2023-06-01" || r.Header.Get("Authorization") != "" {
		t.Errorf("request %s %v", r.Path, r.Header)
	}
	wantJSON(t, "request", body(t, r), `{
		"model":"claude-test","max_tokens":200,"system":"be brief","temperature":0.5,"stop_sequences":["END"],"tool_choice":{"type":"any"},
		"tools":[{"name":"lookup","description":"looks up","input_schema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}],
		"messages":[
			{"role":"user","content":[{"type":"text","text":"what is in the picture?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0="}}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"lookup","input":{"q":"cat"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","is_error":true,"content":[{"type":"text","text":"no such animal"},{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lG"}}]}]}
		]}`)
}

// TestSamplingRefused: content an API cannot take is a
// *SamplingContentError, and nothing is sent.
func TestSamplingRefused(t *testing.T) {
	fm := fakemodel.New(t)
	audio := mcp.SamplingMessage{Role: "user", Content: mcp.Contents{{Type: mcp.ContentAudio, Data: "AA==", MimeType: "audio/ogg"}}}
	for _, tc := range []struct {
		prov Provider
		p    mcp.CreateMessageParams
		want string
	}{
		{Anthropic, mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{audio}}, "takes no audio"},
		{OpenAIChat, mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{audio}}, "wav or mp3"},
		{Anthropic, mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: "user", Content: mcp.Contents{{Type: mcp.ContentImage, MimeType: "image/tiff"}}}}}, "not \"image/tiff\""},
		{OpenAIChat, mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: "system", Content: mcp.Contents{mcp.TextContent("x")}}}}, "neither user nor assistant"},
		{OpenAIChat, mcp.CreateMessageParams{ToolChoice: json.RawMessage(`{"mode":"sometimes"}`)}, "none of auto, required, none"},
	} {
		base := fm.OpenAIBase()
		if tc.prov == Anthropic {
			base = fm.AnthropicBase()
		}
		s, _ := NewSampler(SamplingConfig{Provider: tc.prov, BaseURL: base, Model: "m"})
		_, err := s.CreateMessage(context.Background(), &tc.p)
		var ce *SamplingContentError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a *SamplingContentError saying %q", tc.prov, err, tc.want)
		}
	}
	if n := len(fm.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// TestSamplingAPIError: an error answer is a *SamplingAPIError with the
// status, the API's type, the Retry-After, and the key cut out of the
// message should the endpoint echo it.
func TestSamplingAPIError(t *testing.T) {
	for _, prov := range []Provider{OpenAIChat, Anthropic} {
		fm := fakemodel.New(t, fakemodel.Turn{Status: 429, Error: "slow down, " + testKey, Header: http.Header{"Retry-After": {"7"}}})
		base := fm.OpenAIBase()
		if prov == Anthropic {
			base = fm.AnthropicBase()
		}
		s, _ := NewSampler(SamplingConfig{Provider: prov, BaseURL: base, APIKey: testKey, Model: "m"})
		_, err := s.CreateMessage(context.Background(), &mcp.CreateMessageParams{MaxTokens: 5})
		var ae *SamplingAPIError
		if !errors.As(err, &ae) || ae.Status != 429 || ae.RetryAfter != 7*time.Second || ae.Type == "" || !strings.Contains(ae.Message, "slow down") {
			t.Fatalf("%s: error %#v", prov, err)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: the key is in the error: %v", prov, err)
		}
	}
}

// TestSamplingBadAnswer: an answer over the bound, one that is not JSON,
// and a tool call whose arguments are no object are each a
// *SamplingResponseError.
func TestSamplingBadAnswer(t *testing.T) {
	fm := fakemodel.New(t,
		fakemodel.Turn{Text: strings.Repeat("x", 4096)},
		fakemodel.Turn{Raw: []byte("<html>")},
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: "f", Args: `[1,2]`}}},
	)
	s, _ := NewSampler(SamplingConfig{Provider: OpenAIChat, BaseURL: fm.OpenAIBase(), Model: "m", MaxResponse: 2048})
	for _, want := range []string{"over 2048 bytes", "not a chat completion", `tool "f" with arguments that are not a JSON object`} {
		_, err := s.CreateMessage(context.Background(), &mcp.CreateMessageParams{MaxTokens: 5})
		var re *SamplingResponseError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want a *SamplingResponseError saying %q", err, want)
		}
	}
}

// TestSamplingKeyStaysOnOrigin: an endpoint that redirects to another
// origin gets a refusal, the other origin gets nothing, and the debug log
// never holds the key.
func TestSamplingKeyStaysOnOrigin(t *testing.T) {
	other := make(chan http.Header, 1)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case other <- r.Header.Clone():
		default:
		}
	}))
	defer elsewhere.Close()
	for _, prov := range []Provider{OpenAIChat, Anthropic} {
		endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		var logs logtest.Buffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		s, _ := NewSampler(SamplingConfig{Provider: prov, BaseURL: endpoint.URL, APIKey: testKey, Model: "m", Logger: log})
		_, err := s.CreateMessage(context.Background(), &mcp.CreateMessageParams{MaxTokens: 5})
		endpoint.Close()
		var re *jsonrpc.RedirectError
		if !errors.As(err, &re) || re.Reason != jsonrpc.RedirectCrossOrigin {
			t.Errorf("%s: error %v, want a cross-origin *jsonrpc.RedirectError", prov, err)
		}
		select {
		case h := <-other:
			t.Errorf("%s: the other origin got a request: %v", prov, h)
		default:
		}
		if !strings.Contains(logs.String(), "sampling request") || strings.Contains(logs.String(), testKey) || strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: log %q, error %v", prov, logs.String(), err)
		}
	}
}

// TestChooseModel: hints first, in order, by substring; priorities among
// a hint's matches and when no hint matches; Model otherwise.
func TestChooseModel(t *testing.T) {
	s, err := NewSampler(SamplingConfig{Provider: OpenAIChat, Model: "mid", Models: []Model{
		{Name: "small-fast", Cheapness: 1, Speed: 1, Intelligence: 0.2},
		{Name: "mid", Cheapness: 0.5, Speed: 0.5, Intelligence: 0.6},
		{Name: "big-smart", Cheapness: 0.1, Speed: 0.2, Intelligence: 1},
		{Name: "big-smart-fast", Cheapness: 0, Speed: 0.6, Intelligence: 0.9},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    *mcp.ModelPreferences
		want string
	}{
		{nil, "mid"},
		{&mcp.ModelPreferences{}, "mid"},
		{&mcp.ModelPreferences{Hints: []mcp.ModelHint{{Name: "claude"}}}, "mid"},
		{&mcp.ModelPreferences{Hints: []mcp.ModelHint{{Name: "claude"}, {Name: "SMALL"}}}, "small-fast"},
		{&mcp.ModelPreferences{Hints: []mcp.ModelHint{{Name: "big"}}}, "big-smart"},
		{&mcp.ModelPreferences{Hints: []mcp.ModelHint{{Name: "big"}}, SpeedPriority: f64(1)}, "big-smart-fast"},
		{&mcp.ModelPreferences{CostPriority: f64(0.9), IntelligencePriority: f64(0.1)}, "small-fast"},
		{&mcp.ModelPreferences{IntelligencePriority: f64(1)}, "big-smart"},
		{&mcp.ModelPreferences{Hints: []mcp.ModelHint{{Name: "gemini"}}, IntelligencePriority: f64(0.8), SpeedPriority: f64(0.5)}, "big-smart-fast"},
	} {
		if got := s.ChooseModel(tc.p); got != tc.want {
			b, _ := json.Marshal(tc.p)
			t.Errorf("ChooseModel(%s) = %q, want %q", b, got, tc.want)
		}
	}
}

// TestSamplingConfig: what NewSampler refuses, as a *SamplingConfigError.
func TestSamplingConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg   SamplingConfig
		field string
	}{
		{SamplingConfig{Provider: Gemini, Model: "m"}, "Provider"},
		{SamplingConfig{Provider: OpenAICompatible, Model: "m"}, "BaseURL"},
		{SamplingConfig{Provider: OpenAIChat, BaseURL: "ftp://x/v1", Model: "m"}, "BaseURL"},
		{SamplingConfig{Provider: OpenAIChat, BaseURL: "https://u:p@x/v1", Model: "m"}, "BaseURL"},
		{SamplingConfig{Provider: Anthropic}, "Model"},
		{SamplingConfig{Provider: Anthropic, Models: []Model{{Name: "a"}, {}}}, "Models"},
	} {
		_, err := NewSampler(tc.cfg)
		var ce *SamplingConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("NewSampler(%+v) = %v, want a *SamplingConfigError on %s", tc.cfg, err, tc.field)
		}
	}
	s, err := NewSampler(SamplingConfig{Provider: Anthropic, Models: []Model{{Name: "first"}, {Name: "second"}}})
	if err != nil || s.ChooseModel(nil) != "first" || s.endpoint.String() != "https://api.anthropic.com/v1/messages" {
		t.Errorf("defaults: %v", err)
	}
}
