package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/anymcp/anymcp/mcp"
)

// The rule of text output for a tool result with structuredContent: the
// content blocks are printed, and structuredContent after them only when
// no text block already carries it. A text block carries it when it is
// its JSON (compared as JSON values, not as bytes: a server's indentation
// and key order do not count), or, for a structuredContent of one member,
// when it is that member's value (a string as the text itself): the way
// SDKs and servers wrap a plain result ({"content": text}, {"result": 42}).
// A result whose text says something else ("1+2=3" beside {"sum": 3})
// prints both. --json always prints the whole result.

// carriedByText reports whether a text block of blocks carries structured.
func carriedByText(blocks []mcp.Content, structured json.RawMessage) bool {
	if len(bytes.TrimSpace(structured)) == 0 {
		return false
	}
	var whole any
	if json.Unmarshal(structured, &whole) != nil {
		return false
	}
	var member any
	var hasMember bool
	if obj, ok := whole.(map[string]any); ok && len(obj) == 1 {
		for _, v := range obj {
			member, hasMember = v, true
		}
	}
	for _, b := range blocks {
		if b.Type != mcp.ContentText {
			continue
		}
		if s, ok := member.(string); ok && hasMember && strings.TrimSuffix(b.Text, "\n") == strings.TrimSuffix(s, "\n") {
			return true
		}
		var text any
		if json.Unmarshal([]byte(b.Text), &text) != nil {
			continue
		}
		if reflect.DeepEqual(text, whole) || hasMember && reflect.DeepEqual(text, member) {
			return true
		}
	}
	return false
}
