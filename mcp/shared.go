package mcp

import "encoding/json"

// Meta is the _meta object that requests, results and many types carry.
type Meta map[string]any

// Icon is an image a client may show for a tool, resource, prompt or server.
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Annotations tell a client how to use or show an object.
type Annotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// PaginatedParams are the params of every list request.
type PaginatedParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// raw is shorthand for free-form JSON kept undecoded.
type raw = json.RawMessage
