package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("answer %q is not a JSON object: %v", b, err)
	}
	return resp.StatusCode, m
}

// get walks m by keys and indexes.
func get(m any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			o, _ := m.(map[string]any)
			m = o[p]
		case int:
			a, _ := m.([]any)
			if p >= len(a) {
				return nil
			}
			m = a[p]
		}
	}
	return m
}

// TestScript: each API gets the next turn of one script, spelled its own
// way, and every request is recorded with its API.
func TestScript(t *testing.T) {
	call := ToolCall{Name: "add", Args: `{"a":1}`}
	s := New(t,
		Turn{ToolCalls: []ToolCall{call}},
		Turn{ToolCalls: []ToolCall{call}},
		Turn{ToolCalls: []ToolCall{call}, Text: "let me add"},
		Turn{ToolCalls: []ToolCall{{ID: "g1", Name: "add", Args: `{"a":1}`}}},
		Turn{Text: "3", Stop: StopMaxTokens},
	)
	_, m := post(t, s.URL+"/v1/chat/completions", `{"model":"gpt-x","messages":[]}`)
	if get(m, "choices", 0, "finish_reason") != "tool_calls" || get(m, "choices", 0, "message", "tool_calls", 0, "function", "arguments") != `{"a":1}` || get(m, "model") != "gpt-x" {
		t.Errorf("chat answer %v", m)
	}
	_, m = post(t, s.URL+"/v1/responses", `{"model":"gpt-y","input":"hi"}`)
	if get(m, "output", 0, "type") != "function_call" || get(m, "output", 0, "name") != "add" || get(m, "output", 0, "arguments") != `{"a":1}` {
		t.Errorf("responses answer %v", m)
	}
	_, m = post(t, s.URL+"/v1/messages", `{"model":"claude-z","messages":[]}`)
	if get(m, "stop_reason") != "tool_use" || get(m, "content", 0, "text") != "let me add" || get(m, "content", 1, "input", "a") != 1.0 {
		t.Errorf("anthropic answer %v", m)
	}
	_, m = post(t, s.URL+"/v1beta/models/gemini-w:generateContent", `{"contents":[]}`)
	if get(m, "candidates", 0, "content", "parts", 0, "functionCall", "id") != "g1" || get(m, "modelVersion") != "gemini-w" {
		t.Errorf("gemini answer %v", m)
	}
	_, m = post(t, s.URL+"/v1/messages", `{"model":"claude-z","messages":[]}`)
	if get(m, "stop_reason") != "max_tokens" || get(m, "content", 0, "text") != "3" {
		t.Errorf("anthropic text answer %v", m)
	}
	code, m := post(t, s.URL+"/v1/messages", `{"model":"claude-z","messages":[]}`)
	if code != http.StatusInternalServerError || get(m, "type") != "error" {
		t.Errorf("past the script: %d %v", code, m)
	}
	var apis []API
	for _, r := range s.Requests() {
		apis = append(apis, r.API)
	}
	want := []API{OpenAIChat, OpenAIResponses, Anthropic, Gemini, Anthropic, Anthropic}
	if len(apis) != len(want) {
		t.Fatalf("recorded %v, want %v", apis, want)
	}
	for i := range want {
		if apis[i] != want[i] {
			t.Fatalf("recorded %v, want %v", apis, want)
		}
	}
	if string(s.Requests()[1].Body) != `{"model":"gpt-y","input":"hi"}` {
		t.Errorf("recorded body %q", s.Requests()[1].Body)
	}
}

// TestErrorTurn: a turn with a status answers in the API's error shape,
// with its headers, and an unknown path is a 404 that uses no turn.
func TestErrorTurn(t *testing.T) {
	s := New(t, Turn{Status: 429, Error: "slow down", Header: http.Header{"Retry-After": {"7"}}}, Turn{Text: "ok"})
	code, _ := post(t, s.URL+"/v1/embeddings", `{}`)
	if code != http.StatusNotFound || s.Left() != 2 {
		t.Errorf("unknown path: %d, %d turns left", code, s.Left())
	}
	resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("error turn: %d %v", resp.StatusCode, resp.Header)
	}
	code, m := post(t, s.URL+"/v1/chat/completions", `{"model":"m","stream":true}`)
	if code != http.StatusBadRequest || !strings.Contains(get(m, "error", "message").(string), "stream") {
		t.Errorf("stream: %d %v", code, m)
	}
}
