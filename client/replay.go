package client

import (
	"encoding/json"
)

// WithReplay lets the Conn send a request again when its answer was lost
// and its outcome is unknown. Only requests safe to repeat are sent again:
// listing, reading, getting a prompt, ping and completion. A tools/call
// counts when the tool's annotations, as tools/list reported them, say
// readOnlyHint or idempotentHint. The Conn remembers those annotations for
// the last 4,096 tools listed, fewer when names are long (4 MiB in all). A
// tool no longer remembered is not replayed until it is listed again. After
// notifications/tools/list_changed, no tool is replayed until a new listing
// says it is safe: the change may have been to its annotations. A timeout is
// never replayed.
//
// WithReplay is off by default for initialize-era servers. A stateless
// server (2026-07-28) has no resumable streams. The specification tells
// clients to send such a request again. So there the Conn replays safe
// requests, with or without WithReplay. For any other call, the AsReplayable
// call option says the host knows it is safe.
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
