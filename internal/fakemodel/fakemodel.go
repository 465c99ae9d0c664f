// Package fakemodel is a scripted model server for tests: an httptest
// server on loopback that speaks the OpenAI Chat Completions and Responses
// APIs, the Anthropic Messages API and Gemini's generateContent closely
// enough for the providers' own Go SDKs. It answers each request with the
// next Turn of its script, whatever the API, and records every request so a
// test can assert what the model was sent. It never streams. Tests only.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// API is one of the model APIs the server speaks.
type API string

// The APIs, each at the path its SDK posts to (under Server.URL).
const (
	OpenAIChat      API = "openai-chat"      // POST /v1/chat/completions
	OpenAIResponses API = "openai-responses" // POST /v1/responses
	Anthropic       API = "anthropic"        // POST /v1/messages
	Gemini          API = "gemini"           // POST /v1beta/models/{model}:generateContent
)

// Stop is why a scripted answer ended, spelled per API by the server.
type Stop string

// The stop reasons a Turn may name. The empty Stop is StopToolUse when the
// turn has tool calls and StopEnd otherwise.
const (
	StopEnd       Stop = "end"
	StopMaxTokens Stop = "max-tokens"
	StopSequence  Stop = "stop-sequence"
	StopToolUse   Stop = "tool-use"
)

// Turn is one scripted answer: text, tool calls, or both; or an error.
type Turn struct {
	Text      string
	ToolCalls []ToolCall
	Stop      Stop
	// Model is the model the answer names; empty: the one asked for.
	Model string
	// Status, when not 0 or 200, answers with that HTTP status and Error
	// in the API's error shape.
	Status int
	Error  string
	// Header is added to the answer (a Retry-After, say).
	Header http.Header
	// Raw, when set, is the whole answer body, sent as is with Status
	// (200 when 0): for answers no SDK would accept.
	Raw []byte
}

// ToolCall is a tool call the scripted model makes.
type ToolCall struct {
	// ID is the call's id; empty: one is made up per API ("call_1",
	// "toolu_1"; none for Gemini).
	ID   string
	Name string
	// Args is the arguments as a JSON object's text ("" means {}).
	Args string
}

// Request is one request as the server received it.
type Request struct {
	API    API // "" for a path the server does not know
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Decode unmarshals the request's body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// MaxRequest bounds a request body the server reads.
const MaxRequest = 32 << 20

// Server is a running scripted model server.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	script []Turn
	reqs   []Request
	ids    int
}

// New starts a Server that answers with turns, in order, closed when tb
// ends. A request past the end of the script is answered 500.
func New(tb testing.TB, turns ...Turn) *Server {
	tb.Helper()
	s := &Server{script: turns}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// Add appends turns to the script.
func (s *Server) Add(turns ...Turn) {
	s.mu.Lock()
	s.script = append(s.script, turns...)
	s.mu.Unlock()
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Left is how many turns of the script are still unused.
func (s *Server) Left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// OpenAIBase is the base URL the OpenAI SDK takes (option.WithBaseURL).
func (s *Server) OpenAIBase() string { return s.URL + "/v1/" }

// AnthropicBase is the base URL the Anthropic SDK takes.
func (s *Server) AnthropicBase() string { return s.URL + "/" }

// GeminiBase is the base URL the Gemini SDK takes (HTTPOptions.BaseURL).
func (s *Server) GeminiBase() string { return s.URL + "/" }

func apiOf(r *http.Request) (API, string) {
	p := r.URL.Path
	switch {
	case p == "/v1/chat/completions" || p == "/chat/completions":
		return OpenAIChat, ""
	case p == "/v1/responses" || p == "/responses":
		return OpenAIResponses, ""
	case p == "/v1/messages":
		return Anthropic, ""
	case strings.HasSuffix(p, ":generateContent"):
		m := strings.TrimSuffix(p, ":generateContent")
		return Gemini, m[strings.LastIndex(m, "/")+1:]
	}
	return "", ""
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequest+1))
	api, geminiModel := apiOf(r)
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{API: api, Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
	var turn Turn
	have := len(s.script) > 0 && api != "" && r.Method == http.MethodPost
	if have {
		turn, s.script = s.script[0], s.script[1:]
	}
	s.ids++
	n := s.ids
	s.mu.Unlock()

	switch {
	case api == "" || r.Method != http.MethodPost:
		writeError(w, OpenAIChat, http.StatusNotFound, "the scripted model server serves no "+r.Method+" "+r.URL.Path)
		return
	case err != nil || len(body) > MaxRequest:
		writeError(w, api, http.StatusRequestEntityTooLarge, "request body too large or unreadable")
		return
	case !have:
		writeError(w, api, http.StatusInternalServerError, "the scripted model server's script is exhausted")
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, api, http.StatusBadRequest, "request body is not JSON: "+err.Error())
		return
	}
	if req.Stream {
		writeError(w, api, http.StatusBadRequest, "the scripted model server does not stream")
		return
	}
	if api == Gemini {
		req.Model = geminiModel
	}
	for k, v := range turn.Header {
		w.Header()[k] = v
	}
	if turn.Raw != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(max(turn.Status, http.StatusOK))
		w.Write(turn.Raw)
		return
	}
	if turn.Status != 0 && turn.Status != http.StatusOK {
		writeError(w, api, turn.Status, turn.Error)
		return
	}
	if turn.Model == "" {
		turn.Model = req.Model
	}
	var out any
	switch api {
	case OpenAIChat:
		out = chatAnswer(turn, n)
	case OpenAIResponses:
		out = responsesAnswer(turn, n)
	case Anthropic:
		out = anthropicAnswer(turn, n)
	case Gemini:
		out = geminiAnswer(turn)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func writeError(w http.ResponseWriter, api API, status int, msg string) {
	var out any
	switch api {
	case Anthropic:
		out = map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}}
	case Gemini:
		out = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INVALID_ARGUMENT"}}
	default:
		out = map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(out)
}

func (t Turn) stop() Stop {
	switch {
	case t.Stop != "":
		return t.Stop
	case len(t.ToolCalls) > 0:
		return StopToolUse
	}
	return StopEnd
}

func args(c ToolCall) string {
	if c.Args == "" {
		return "{}"
	}
	return c.Args
}

func callID(c ToolCall, prefix string, turn, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("%s_%d_%d", prefix, turn, i+1)
}

func usage(api API) map[string]any {
	switch api {
	case Anthropic:
		return map[string]any{"input_tokens": 10, "output_tokens": 5}
	case OpenAIResponses:
		return map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	}
	return map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
}

func chatAnswer(t Turn, n int) any {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if t.Text != "" {
		msg["content"] = t.Text
	}
	if len(t.ToolCalls) > 0 {
		var calls []any
		for i, c := range t.ToolCalls {
			calls = append(calls, map[string]any{"id": callID(c, "call", n, i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": args(c)}})
		}
		msg["tool_calls"] = calls
	}
	finish := map[Stop]string{StopEnd: "stop", StopSequence: "stop", StopMaxTokens: "length", StopToolUse: "tool_calls"}[t.stop()]
	return map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1700000000 + n, "model": t.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   usage(OpenAIChat),
	}
}

func responsesAnswer(t Turn, n int) any {
	var output []any
	if t.Text != "" {
		output = append(output, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}})
	}
	for i, c := range t.ToolCalls {
		output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", n, i+1),
			"call_id": callID(c, "call", n, i), "name": c.Name, "arguments": args(c), "status": "completed"})
	}
	out := map[string]any{
		"id": fmt.Sprintf("resp_%d", n), "object": "response", "created_at": 1700000000 + n, "model": t.Model,
		"status": "completed", "output": output, "usage": usage(OpenAIResponses),
		"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
	}
	if t.stop() == StopMaxTokens {
		out["status"] = "incomplete"
		out["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
	}
	return out
}

func anthropicAnswer(t Turn, n int) any {
	var content []any
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for i, c := range t.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": callID(c, "toolu", n, i), "name": c.Name, "input": json.RawMessage(args(c))})
	}
	if content == nil {
		content = []any{}
	}
	stop := map[Stop]string{StopEnd: "end_turn", StopSequence: "stop_sequence", StopMaxTokens: "max_tokens", StopToolUse: "tool_use"}[t.stop()]
	return map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": t.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage(Anthropic),
	}
}

func geminiAnswer(t Turn) any {
	var parts []any
	if t.Text != "" {
		parts = append(parts, map[string]any{"text": t.Text})
	}
	for _, c := range t.ToolCalls {
		call := map[string]any{"name": c.Name, "args": json.RawMessage(args(c))}
		if c.ID != "" {
			call["id"] = c.ID
		}
		parts = append(parts, map[string]any{"functionCall": call})
	}
	finish := map[Stop]string{StopEnd: "STOP", StopSequence: "STOP", StopMaxTokens: "MAX_TOKENS", StopToolUse: "STOP"}[t.stop()]
	return map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": finish, "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  t.Model,
	}
}
