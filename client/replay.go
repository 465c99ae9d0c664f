package client

import (
	"encoding/json"

	"github.com/anymcp/anymcp/mcp"
)

// WithReplay lets the Conn send a request again when its answer was lost
// (the outcome is unknown), but only a request that is safe to repeat:
// listing, reading, getting a prompt, ping, completion, and tools/call for a
// tool whose annotations, as tools/list reported them, say readOnlyHint or
// idempotentHint. Off by default. A timeout is never replayed.
func WithReplay() Option { return func(o *options) { o.replay = true } }

// repeatable are the methods that change nothing on the server.
var repeatable = map[string]bool{
	"ping":                     true,
	"tools/list":               true,
	"resources/list":           true,
	"resources/templates/list": true,
	"resources/read":           true,
	"prompts/list":             true,
	"prompts/get":              true,
	"completion/complete":      true,
}

// safeToRepeat reports whether the request may be sent twice.
func (c *Conn) safeToRepeat(method string, params json.RawMessage) bool {
	if repeatable[method] {
		return true
	}
	if method != "tools/call" {
		return false
	}
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.toolHints[p.Name]
}

// rememberTools records which listed tools are safe to repeat.
func (c *Conn) rememberTools(tools []mcp.Tool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tools {
		a := t.Annotations
		c.toolHints[t.Name] = a != nil && ((a.ReadOnlyHint != nil && *a.ReadOnlyHint) || (a.IdempotentHint != nil && *a.IdempotentHint))
	}
}
