package llm

import (
	"encoding/json"
)

// wire writes parts as provider p's tool-result item, and the Chat
// follow-up message when there are images for it.
func wire(p Provider, call ToolCall, isError bool, parts, followup []part) (msg, next json.RawMessage) {
	var v any
	switch p {
	case OpenAIChat, OpenAICompatible:
		v = struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			Content    string `json:"content"`
		}{"tool", call.ID, joinText(parts)}
		if len(followup) > 0 {
			next = mustJSON(chatFollowup(call, followup))
		}
	case OpenAIResponses:
		v = struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output any    `json:"output"`
		}{"function_call_output", call.ID, responsesOutput(parts)}
	case Anthropic:
		v = struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			Content   any    `json:"content,omitempty"`
			IsError   bool   `json:"is_error,omitempty"`
		}{"tool_result", call.ID, anthropicContent(parts), isError}
	case Gemini, GeminiOpenAPI:
		v = geminiPart(call, isError, parts)
	}
	return mustJSON(v), next
}

// mustJSON encodes values made of strings, maps and slices: it cannot fail.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("llm: encoding a tool result: " + err.Error())
	}
	return b
}

func onlyText(parts []part) bool {
	for _, p := range parts {
		if p.kind != partText {
			return false
		}
	}
	return true
}

func dataURL(p part) string { return "data:" + p.mime + ";base64," + p.data }

type obj = map[string]any

// responsesOutput is function_call_output's output: a string when all is
// text, else a list of input_text, input_image and input_file items.
func responsesOutput(parts []part) any {
	if onlyText(parts) {
		return joinText(parts)
	}
	out := make([]obj, 0, len(parts))
	for _, p := range parts {
		switch p.kind {
		case partText:
			out = append(out, obj{"type": "input_text", "text": p.text})
		case partImage:
			out = append(out, obj{"type": "input_image", "image_url": dataURL(p), "detail": "auto"})
		case partDocument:
			out = append(out, obj{"type": "input_file", "filename": p.name, "file_data": dataURL(p)})
		}
	}
	return out
}

// anthropicContent is tool_result's content: a string when all is text
// (omitted when empty), else text, image and document blocks (empty text
// blocks are refused, so none is sent).
func anthropicContent(parts []part) any {
	if onlyText(parts) {
		if s := joinText(parts); s != "" {
			return s
		}
		return nil
	}
	out := make([]obj, 0, len(parts))
	for _, p := range parts {
		src := obj{"type": "base64", "media_type": p.mime, "data": p.data}
		switch p.kind {
		case partText:
			if p.text != "" {
				out = append(out, obj{"type": "text", "text": p.text})
			}
		case partImage:
			out = append(out, obj{"type": "image", "source": src})
		case partDocument:
			out = append(out, obj{"type": "document", "source": src, "title": p.name})
		}
	}
	return out
}

// geminiPart is a Part holding a functionResponse: the text under
// "output", or under "error" for a failed call, and the media as inline
// parts of the response.
func geminiPart(call ToolCall, isError bool, parts []part) obj {
	key := "output"
	if isError {
		key = "error"
	}
	fr := obj{"name": call.Name, "response": obj{key: joinText(parts)}}
	if call.ID != "" {
		fr["id"] = call.ID
	}
	var media []obj
	for _, p := range parts {
		if p.kind != partText {
			// No displayName: Google's SDKs document it as not taken by the
			// Gemini API (only by Vertex AI), and an unknown field fails a request.
			media = append(media, obj{"inlineData": obj{"mimeType": p.mime, "data": p.data}})
		}
	}
	if len(media) > 0 {
		fr["parts"] = media
	}
	return obj{"functionResponse": fr}
}

// chatFollowup is a Chat Completions user message carrying the images a
// tool message cannot.
func chatFollowup(call ToolCall, images []part) obj {
	content := []obj{{"type": "text", "text": "The images of the result of tool call " + call.ID + ":"}}
	for _, p := range images {
		content = append(content, obj{"type": "image_url", "image_url": obj{"url": dataURL(p)}})
	}
	return obj{"role": "user", "content": content}
}
