package client

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/internal/reqmeta"
	"github.com/anymcp/anymcp/mcp"
)

// Request metadata headers (stateless revisions over Streamable HTTP): every
// POST carries MCP-Protocol-Version and Mcp-Method, tools/call, prompts/get
// and resources/read carry Mcp-Name (and so do tasks/get, tasks/update and
// tasks/cancel, with the task's id), and tools/call carries Mcp-Param-*
// for the tool's parameters annotated x-mcp-header, as tools/list
// described them (for the tools the Conn still remembers: toolnotes.go). A
// tools/call the server refuses with -32020 for its headers (the tool
// never listed, or changed) lists the tools again and goes out once more,
// when the listing gives it other headers.

// requestHeaders returns the headers of the request.
func (c *Conn) requestHeaders(d *dialect, method string, params any, raw json.RawMessage) (http.Header, error) {
	name, args := nameOf(method, params, raw)
	h := reqmeta.Headers(d.version, method, name)
	if method == "tools/call" && name != "" {
		c.mu.Lock()
		ps := c.tools.params(name)
		c.mu.Unlock()
		if len(ps) > 0 {
			if args == nil {
				args = argumentsOf(raw)
			}
			if err := reqmeta.AddParamHeaders(h, ps, args); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// relistHeaders answers a tools/call the server refused with -32020
// (HeaderMismatch), as sent with the headers old: the tool's x-mcp-header
// parameters may not be those the Conn knows — it was never listed, or
// listed long ago, or changed since. It lists the tools again, past the
// cache, up to the tool called (as 2026-07-28 says a client should), and
// returns the call's headers as that listing describes the tool; ok is
// false when the listing fails or lacks the tool, or when its headers are
// those already sent: then sending it again would be refused again.
func (c *Conn) relistHeaders(ctx context.Context, d *dialect, params any, raw json.RawMessage, old http.Header) (h http.Header, ok bool) {
	name, _ := nameOf("tools/call", params, raw)
	if name == "" {
		return nil, false
	}
	c.opts.logger.InfoContext(ctx, "anymcp: the server refused the headers of a tool call (-32020); listing the tools again", "tool", name)
	c.results.forget("tools/list", "")
	found := false
	for t, err := range c.Tools(ctx) {
		if err != nil {
			c.opts.logger.InfoContext(ctx, "anymcp: listing the tools again failed", "err", err)
			return nil, false
		}
		if t.Name == name {
			found = true
			break
		}
	}
	if !found {
		return nil, false
	}
	h, err := c.requestHeaders(d, "tools/call", params, raw)
	if err != nil || maps.EqualFunc(h, old, slices.Equal[[]string]) {
		return nil, false
	}
	return h, true
}

// nameOf returns what Mcp-Name mirrors (params.name of tools/call and
// prompts/get, params.uri of resources/read), from the typed params when
// it can, and a tool call's arguments when they are at hand as JSON.
func nameOf(method string, params any, raw json.RawMessage) (string, json.RawMessage) {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
	case "tasks/get", "tasks/update", "tasks/cancel":
		return taskIDOf(params, raw), nil
	default:
		return "", nil
	}
	switch p := params.(type) {
	case *mcp.CallToolParams:
		if a, ok := p.Arguments.(json.RawMessage); ok {
			return p.Name, a
		}
		return p.Name, nil
	case *mcp.GetPromptParams:
		return p.Name, nil
	case *mcp.ReadResourceParams:
		return p.URI, nil
	}
	var v struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if jsondec.Unmarshal(raw, &v) != nil { // as encoding/json reads it, without reflection's cost
		return "", nil
	}
	if method == "resources/read" {
		return v.URI, nil
	}
	return v.Name, nil
}

// taskIDOf returns params.taskId of a request about a task, which the
// tasks extension mirrors into Mcp-Name so that a load balancer can route
// it to the server that holds the task.
func taskIDOf(params any, raw json.RawMessage) string {
	switch p := params.(type) {
	case *mcp.TaskIDParams:
		return p.TaskID
	case *mcp.UpdateTaskParams:
		return p.TaskID
	}
	var v struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.TaskID
}

// argumentsOf returns params.arguments of an encoded tools/call.
func argumentsOf(raw json.RawMessage) json.RawMessage {
	var v struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.Arguments
}

// toolGen returns the generation of the tool notes, to give rememberTools
// for a listing about to be asked for.
func (c *Conn) toolGen() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools.gen
}

// rememberTools records what the Conn needs to know of listed tools (which
// are safe to repeat, which parameters go into headers; toolnotes.go says
// how much it keeps) and returns the tools to show the host: on Streamable
// HTTP in a stateless revision, a tool whose x-mcp-header annotations break
// the rules is left out (and logged), as the specification requires, so
// that one malformed tool does not keep the others from being used.
//
// gen is the notes' generation (toolGen) from before the listing was asked
// for: when a tools/list_changed came since, the listing may be stale, and
// no tool of it is noted as safe to repeat.
func (c *Conn) rememberTools(tools []mcp.Tool, gen uint64) []mcp.Tool {
	kept := tools[:0:len(tools)]
	c.noteTools(tools, gen, func(i int) { kept = append(kept, tools[i]) })
	return kept
}

// noteTools is rememberTools, and calls keep with the index of each tool
// to show the host, in order.
func (c *Conn) noteTools(tools []mcp.Tool, gen uint64, keep func(i int)) {
	d := c.dialect()
	forgot := false
	c.mu.Lock()
	defer c.mu.Unlock()
	stale := c.tools.gen != gen
	for i, t := range tools {
		a := t.Annotations
		safe := !stale && a != nil && ((a.ReadOnlyHint != nil && *a.ReadOnlyHint) || (a.IdempotentHint != nil && *a.IdempotentHint))
		task := ""
		if t.Execution != nil {
			task = t.Execution.TaskSupport
		}
		if !d.headers {
			forgot = c.tools.set(t.Name, safe, nil, task) || forgot
			keep(i)
			continue
		}
		ps, err := reqmeta.ParamHeaders(t.Name, t.InputSchema)
		forgot = c.tools.set(t.Name, safe, ps, task) || forgot
		if err != nil {
			c.opts.logger.Warn("anymcp: left out a tool whose definition breaks the x-mcp-header rules", "tool", t.Name, "err", err)
			continue
		}
		keep(i)
	}
	if forgot && !c.tools.forgot {
		c.tools.forgot = true
		c.opts.logger.Warn("anymcp: the server listed more tools than the Conn keeps notes on; those listed longest ago are forgotten",
			"maxTools", maxToolNotes, "maxBytes", maxToolNoteBytes)
	}
}
