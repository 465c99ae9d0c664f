package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anymcp/anymcp/mcp"
)

// The Chat Completions request, as much of it as sampling fills.
type chatReq struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	Temperature         *float64      `json:"temperature,omitempty"`
	Stop                []string      `json:"stop,omitempty"`
	Tools               []chatTool    `json:"tools,omitempty"`
	ToolChoice          string        `json:"tool_choice,omitempty"`
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"` // a string or []chatPart
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Refusal    string         `json:"refusal,omitempty"`
}

type chatPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	ImageURL   *chatImageURL   `json:"image_url,omitempty"`
	InputAudio *chatInputAudio `json:"input_audio,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatInputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// audioFormat is the Chat Completions input_audio format of a MIME type:
// the API takes wav and mp3 only.
func audioFormat(mime string) string {
	switch strings.ToLower(mime) {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return "wav"
	case "audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg-3":
		return "mp3"
	}
	return ""
}

// chatRequest maps a sampling request onto Chat Completions. OpenAIChat
// sends max_completion_tokens; OpenAICompatible sends max_tokens, which
// local model servers read.
func chatRequest(p *mcp.CreateMessageParams, model string, maxTokens int, prov Provider) (*chatReq, error) {
	r := &chatReq{Model: model, Temperature: p.Temperature, Stop: p.StopSequences}
	if prov == OpenAICompatible {
		r.MaxTokens = maxTokens
	} else {
		r.MaxCompletionTokens = maxTokens
	}
	if p.SystemPrompt != "" {
		r.Messages = append(r.Messages, chatMessage{Role: "system", Content: p.SystemPrompt})
	}
	for i, m := range p.Messages {
		msgs, err := chatMessages(i, m, prov)
		if err != nil {
			return nil, err
		}
		r.Messages = append(r.Messages, msgs...)
	}
	for _, t := range p.Tools {
		r.Tools = append(r.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: inputSchema(t)}})
	}
	mode, err := toolChoiceMode(p.ToolChoice)
	if err != nil {
		return nil, err
	}
	if len(r.Tools) > 0 || mode == "none" {
		r.ToolChoice = mode
	}
	return r, nil
}

// chatMessages maps one sampling message: a user message's tool results
// become tool messages (first, as the API wants them right after the
// assistant's tool calls), the rest one user or assistant message.
func chatMessages(i int, m mcp.SamplingMessage, prov Provider) ([]chatMessage, error) {
	bad := func(typ, why string) error {
		return &SamplingContentError{Provider: prov, Message: i, Type: typ, Why: why}
	}
	var (
		out   []chatMessage
		parts []chatPart
		calls []chatToolCall
	)
	for _, c := range m.Content {
		switch c.Type {
		case mcp.ContentText:
			parts = append(parts, chatPart{Type: "text", Text: c.Text})
		case mcp.ContentImage:
			if m.Role != "user" {
				return nil, bad(c.Type, "the Chat Completions API takes images in user messages only")
			}
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: "data:" + c.MimeType + ";base64," + c.Data}})
		case mcp.ContentAudio:
			f := audioFormat(c.MimeType)
			if m.Role != "user" || f == "" {
				return nil, bad(c.Type, fmt.Sprintf("the Chat Completions API takes wav or mp3 audio in user messages only, not %q in a %s message", c.MimeType, m.Role))
			}
			parts = append(parts, chatPart{Type: "input_audio", InputAudio: &chatInputAudio{Data: c.Data, Format: f}})
		case mcp.ContentToolUse:
			if m.Role != "assistant" {
				return nil, bad(c.Type, "tool_use belongs in an assistant message")
			}
			var tc chatToolCall
			tc.ID, tc.Type = c.ID, "function"
			tc.Function.Name = c.Name
			tc.Function.Arguments = string(c.Input)
			if tc.Function.Arguments == "" {
				tc.Function.Arguments = "{}"
			}
			calls = append(calls, tc)
		case mcp.ContentToolResult:
			if m.Role != "user" {
				return nil, bad(c.Type, "tool_result belongs in a user message")
			}
			out = append(out, chatMessage{Role: "tool", ToolCallID: c.ToolUseID, Content: toolResultText(c, "a Chat Completions tool message takes text only")})
		default:
			return nil, bad(c.Type, "a sampling message holds text, image, audio, tool_use or tool_result")
		}
	}
	if m.Role != "user" && m.Role != "assistant" {
		return nil, bad("", fmt.Sprintf("role %q is neither user nor assistant", m.Role))
	}
	if len(parts) == 0 && len(calls) == 0 {
		return out, nil
	}
	msg := chatMessage{Role: m.Role, ToolCalls: calls}
	switch {
	case len(parts) == 1 && parts[0].Type == "text":
		msg.Content = parts[0].Text
	case m.Role == "assistant" && len(parts) > 0:
		// An assistant's content is text only: one string reads on every
		// compatible server, where an array of parts may not.
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		msg.Content = strings.Join(texts, "\n")
	case len(parts) > 0:
		msg.Content = parts
	}
	return append(out, msg), nil
}

// toolResultText is a tool_result as text, for an API whose tool message
// takes text only: text blocks as they are, a resource's text, and for
// what text cannot carry a bracketed note that says what was there. An
// error result is marked so.
func toolResultText(c mcp.Content, why string) string {
	var b strings.Builder
	if c.IsError {
		b.WriteString("[the tool reported an error]\n")
	}
	for i, x := range c.Content {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(blockText(x, why))
	}
	if len(c.Content) == 0 && len(c.StructuredContent) > 0 {
		b.Write(c.StructuredContent)
	}
	return b.String()
}

// blockText is one result block as text.
func blockText(x mcp.Content, why string) string {
	switch x.Type {
	case mcp.ContentText:
		return x.Text
	case mcp.ContentResourceLink:
		s := "[resource link: " + x.URI
		if x.Name != "" {
			s += " (" + x.Name + ")"
		}
		return s + "]"
	case mcp.ContentResource:
		if x.Resource != nil && x.Resource.Blob == "" {
			return x.Resource.Text
		}
		if x.Resource != nil {
			return fmt.Sprintf("[embedded resource %s, %s, %d bytes of base64, not shown: %s]", x.Resource.URI, x.Resource.MimeType, len(x.Resource.Blob), why)
		}
	}
	return fmt.Sprintf("[%s content, %s, %d bytes of base64, not shown: %s]", x.Type, x.MimeType, len(x.Data), why)
}

// chatResult maps a Chat Completions answer back: text, then a tool_use
// block per tool call; finish_reason as stopReason.
func chatResult(raw []byte, prov Provider) (*mcp.CreateMessageResult, error) {
	var r struct {
		Model   string `json:"model"`
		Choices []struct {
			Message      chatMessage `json:"message"`
			FinishReason string      `json:"finish_reason"`
		} `json:"choices"`
	}
	bad := func(why string) error { return &SamplingResponseError{Provider: prov, Why: why} }
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, bad("not a chat completion: " + err.Error())
	}
	if len(r.Choices) == 0 {
		return nil, bad("no choices")
	}
	ch := r.Choices[0]
	res := &mcp.CreateMessageResult{Role: "assistant", Model: r.Model}
	text, _ := ch.Message.Content.(string)
	if text == "" && ch.Message.Refusal != "" {
		text = ch.Message.Refusal
	}
	if text != "" {
		res.Content = append(res.Content, mcp.TextContent(text))
	}
	for _, tc := range ch.Message.ToolCalls {
		in, err := toolInput(prov, tc.Function.Name, []byte(tc.Function.Arguments))
		if err != nil {
			return nil, err
		}
		res.Content = append(res.Content, mcp.Content{Type: mcp.ContentToolUse, ID: tc.ID, Name: tc.Function.Name, Input: in})
	}
	if len(res.Content) == 0 {
		res.Content = mcp.Contents{mcp.TextContent("")}
	}
	switch ch.FinishReason {
	case "stop":
		res.StopReason = "endTurn"
	case "length":
		res.StopReason = "maxTokens"
	case "tool_calls", "function_call":
		res.StopReason = "toolUse"
	default:
		res.StopReason = ch.FinishReason
	}
	if ch.Message.Refusal != "" && ch.FinishReason == "stop" {
		res.StopReason = "refusal"
	}
	return res, nil
}
