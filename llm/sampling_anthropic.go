package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anymcp/anymcp/mcp"
)

// The Messages request, as much of it as sampling fills.
type anthropicReq struct {
	Model         string             `json:"model"`
	MaxTokens     int                `json:"max_tokens"`
	System        string             `json:"system,omitempty"`
	Messages      []anthropicMessage `json:"messages"`
	Temperature   *float64           `json:"temperature,omitempty"`
	StopSequences []string           `json:"stop_sequences,omitempty"`
	Tools         []anthropicTool    `json:"tools,omitempty"`
	ToolChoice    *anthropicChoice   `json:"tool_choice,omitempty"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

type anthropicBlock struct {
	Type      string           `json:"type"`
	Text      *string          `json:"text,omitempty"`
	Source    *anthropicSource `json:"source,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     json.RawMessage  `json:"input,omitempty"`
	ToolUseID string           `json:"tool_use_id,omitempty"`
	Content   []anthropicBlock `json:"content,omitempty"`
	IsError   bool             `json:"is_error,omitempty"`
}

type anthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicChoice struct {
	Type string `json:"type"`
}

// anthropicImage tells the image types the Messages API reads.
func anthropicImage(mime string) bool {
	switch mime {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}

func textBlock(s string) anthropicBlock { return anthropicBlock{Type: "text", Text: &s} }

// anthropicRequest maps a sampling request onto the Messages API.
func anthropicRequest(p *mcp.CreateMessageParams, model string, maxTokens int) (*anthropicReq, error) {
	r := &anthropicReq{Model: model, MaxTokens: maxTokens, System: p.SystemPrompt, Temperature: p.Temperature, StopSequences: p.StopSequences}
	for i, m := range p.Messages {
		bad := func(typ, why string) error {
			return &SamplingContentError{Provider: Anthropic, Message: i, Type: typ, Why: why}
		}
		if m.Role != "user" && m.Role != "assistant" {
			return nil, bad("", fmt.Sprintf("role %q is neither user nor assistant", m.Role))
		}
		msg := anthropicMessage{Role: m.Role}
		for _, c := range m.Content {
			switch c.Type {
			case mcp.ContentText:
				msg.Content = append(msg.Content, textBlock(c.Text))
			case mcp.ContentImage:
				if !anthropicImage(c.MimeType) {
					return nil, bad(c.Type, fmt.Sprintf("the Messages API reads jpeg, png, gif and webp images, not %q", c.MimeType))
				}
				msg.Content = append(msg.Content, anthropicBlock{Type: "image", Source: &anthropicSource{Type: "base64", MediaType: c.MimeType, Data: c.Data}})
			case mcp.ContentAudio:
				return nil, bad(c.Type, "the Messages API takes no audio")
			case mcp.ContentToolUse:
				if m.Role != "assistant" {
					return nil, bad(c.Type, "tool_use belongs in an assistant message")
				}
				in := c.Input
				if len(in) == 0 {
					in = json.RawMessage(`{}`)
				}
				msg.Content = append(msg.Content, anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: in})
			case mcp.ContentToolResult:
				if m.Role != "user" {
					return nil, bad(c.Type, "tool_result belongs in a user message")
				}
				msg.Content = append(msg.Content, anthropicToolResult(c))
			default:
				return nil, bad(c.Type, "a sampling message holds text, image, audio, tool_use or tool_result")
			}
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range p.Tools {
		r.Tools = append(r.Tools, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: inputSchema(t)})
	}
	mode, err := toolChoiceMode(p.ToolChoice)
	if err != nil {
		return nil, err
	}
	switch {
	case mode == "required":
		r.ToolChoice = &anthropicChoice{Type: "any"}
	case mode == "none":
		r.ToolChoice = &anthropicChoice{Type: "none"}
	case mode == "auto" && len(r.Tools) > 0:
		r.ToolChoice = &anthropicChoice{Type: "auto"}
	}
	return r, nil
}

// anthropicToolResult maps a tool_result: text and the images the API
// reads as its own blocks, the rest as text that says what was there.
func anthropicToolResult(c mcp.Content) anthropicBlock {
	const why = "an Anthropic tool result takes text and images"
	b := anthropicBlock{Type: "tool_result", ToolUseID: c.ToolUseID, IsError: c.IsError}
	for _, x := range c.Content {
		if x.Type == mcp.ContentImage && anthropicImage(x.MimeType) {
			b.Content = append(b.Content, anthropicBlock{Type: "image", Source: &anthropicSource{Type: "base64", MediaType: x.MimeType, Data: x.Data}})
			continue
		}
		b.Content = append(b.Content, textBlock(blockText(x, why)))
	}
	if len(c.Content) == 0 && len(c.StructuredContent) > 0 {
		b.Content = append(b.Content, textBlock(string(c.StructuredContent)))
	}
	return b
}

// anthropicResult maps a Messages answer back: text and tool_use blocks
// in their order (thinking and server tool blocks are left out);
// stop_reason as stopReason.
func anthropicResult(raw []byte) (*mcp.CreateMessageResult, error) {
	var r struct {
		Model      string           `json:"model"`
		Content    []anthropicBlock `json:"content"`
		StopReason string           `json:"stop_reason"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &SamplingResponseError{Provider: Anthropic, Why: "not a message: " + err.Error()}
	}
	res := &mcp.CreateMessageResult{Role: "assistant", Model: r.Model}
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			if b.Text != nil {
				res.Content = append(res.Content, mcp.TextContent(*b.Text))
			}
		case "tool_use":
			in, err := toolInput(Anthropic, b.Name, b.Input)
			if err != nil {
				return nil, err
			}
			res.Content = append(res.Content, mcp.Content{Type: mcp.ContentToolUse, ID: b.ID, Name: b.Name, Input: in})
		}
	}
	if len(res.Content) == 0 {
		res.Content = mcp.Contents{mcp.TextContent("")}
	}
	switch r.StopReason {
	case "end_turn":
		res.StopReason = "endTurn"
	case "max_tokens":
		res.StopReason = "maxTokens"
	case "stop_sequence":
		res.StopReason = "stopSequence"
	case "tool_use":
		res.StopReason = "toolUse"
	default:
		res.StopReason = strings.TrimSpace(r.StopReason)
	}
	return res, nil
}
