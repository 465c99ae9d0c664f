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
