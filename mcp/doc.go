// Package mcp holds the data types of the Model Context Protocol, revisions
// 2024-11-05 to 2026-07-28: what requests carry and results return. The types
// are plain structs with JSON tags; fields the server adds that are not
// listed here are ignored, never rejected. Free-form JSON (schemas,
// structured content, log data) stays raw so it is decoded only by whoever
// needs it.
//
// The client package sends and receives these; the testservers package
// serves them.
package mcp

import "encoding/json"

// Protocol revisions.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"

	// LatestInitializeVersion is the newest initialize-era revision: the
	// one offered in initialize.
	LatestInitializeVersion = Version20251125
	// LatestStatelessVersion is the newest stateless revision: the one stateless
	// requests carry first.
	LatestStatelessVersion = Version20260728
)

// InitializeVersions are the initialize-era revisions, newest first: those a server
// may answer initialize with.
var InitializeVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// StatelessVersions are the stateless revisions this module speaks, newest first:
// those a request may carry in _meta.
var StatelessVersions = []string{Version20260728}

// IsInitializeVersion reports whether v is one of InitializeVersions (an
// initialize-era revision an initialize answer may name).
func IsInitializeVersion(v string) bool {
	for _, s := range InitializeVersions {
		if s == v {
			return true
		}
	}
	return false
}

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
