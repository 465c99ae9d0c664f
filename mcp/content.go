package mcp

import (
	"bytes"
	"encoding/json"
)

// Content types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
	ContentToolUse      = "tool_use"
	ContentToolResult   = "tool_result"
)

// Content is one content block of any type: text, image, audio,
// resource_link, resource (embedded), and in sampling tool_use and
// tool_result. Type says which fields are in use; a block of a type this
// package does not know keeps its Type and the fields it shares.
type Content struct {
	Type string `json:"type"`

	// text
	Text string `json:"text,omitempty"`
	// image, audio: base64 data and its MIME type (also resource_link's)
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`

	// resource_link
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`

	// resource (embedded)
	Resource *ResourceContents `json:"resource,omitempty"`

	// tool_use
	ID    string `json:"id,omitempty"`
	Input raw    `json:"input,omitempty"`
	// tool_result
	ToolUseID         string    `json:"toolUseId,omitempty"`
	Content           []Content `json:"content,omitempty"`
	StructuredContent raw       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError,omitempty"`

	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: ContentText, Text: text} }

// Contents is a list of content blocks that also accepts a single block on
// the wire, as sampling messages may carry either (2025-11-25). It is
// written as a single object when it holds exactly one block.
type Contents []Content

// UnmarshalJSON accepts an object or an array of objects.
func (c *Contents) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var one Content
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*c = Contents{one}
		return nil
	}
	var many []Content
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*c = many
	return nil
}

// MarshalJSON writes one block as an object, otherwise an array.
func (c Contents) MarshalJSON() ([]byte, error) {
	if len(c) == 1 {
		return json.Marshal(c[0])
	}
	return json.Marshal([]Content(c))
}
