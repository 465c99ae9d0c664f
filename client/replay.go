package client

import (
	"encoding/json"
)

// WithReplay lets the Conn send a request again when its answer was lost
// (the outcome is unknown), but only a request that is safe to repeat:
// listing, reading, getting a prompt, ping, completion, and tools/call for a
// tool whose annotations, as tools/list reported them, say readOnlyHint or
// idempotentHint. The Conn remembers those annotations for the last 4,096
// tools listed (fewer when their names are long: 4 MiB in all); a tool it no
// longer remembers is not replayed until it is listed again, nor is any
// tool after notifications/tools/list_changed until a new listing says it
// is safe (the change may have been to its annotations). A timeout is
// never replayed. It is off by default for initialize-era servers; a stateless server
// (2026-07-28) has no resumable streams, and the specification tells
// clients to send such a request again, so there the Conn does it for safe
// requests whether or not WithReplay is given. For any other call, the
// AsReplayable call option says the host knows it is safe.
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
	"server/discover":          true,
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
	return c.tools.safe(p.Name)
}
