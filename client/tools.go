package client

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// ListTools fetches one page of tools/list; cursor "" is the first page.
func (c *Conn) ListTools(ctx context.Context, cursor string) (*mcp.ListToolsResult, error) {
	gen := c.toolGen()
	page, err := listPage[mcp.ListToolsResult](ctx, c, "tools/list", cursor)
	if err == nil {
		page.Tools = c.rememberTools(page.Tools, gen)
	}
	return page, err
}

// Tools iterates over every tool, following pagination cursors.
func (c *Conn) Tools(ctx context.Context) iter.Seq2[mcp.Tool, error] {
	return func(yield func(mcp.Tool, error) bool) {
		gen := c.toolGen() // a change during the listing makes the pages after it stale
		for t, err := range pages(ctx, c, "tools/list", func(r *mcp.ListToolsResult) ([]mcp.Tool, string) {
			return c.rememberTools(r.Tools, gen), r.NextCursor
		}) {
			if !yield(t, err) {
				return
			}
		}
	}
}

// AllTools returns every tool, all pages.
func (c *Conn) AllTools(ctx context.Context) ([]mcp.Tool, error) { return collect(c.Tools(ctx)) }

// CallTool calls the tool name with arguments (anything that encodes to a
// JSON object, or nil). A tool that ran and failed is not an error: the
// result has IsError set.
//
// A call the server runs as a task is waited for, and returns the tool's
// result all the same (see AsTask, OnTask and TaskError). With a server
// that offers the tasks of revision 2025-11-25 the Conn asks for a task
// when the tool's listing says it must run as one; a tool the Conn has not seen listed that the
// server refuses as a plain call (-32601, which it says of a tool that
// only runs as a task) is looked up in tools/list, and called again as a
// task if it must be one.
func (c *Conn) CallTool(ctx context.Context, name string, arguments any, opts ...CallOption) (*mcp.CallToolResult, error) {
	var co callOptions
	for _, opt := range opts {
		opt(&co)
	}
	p := &mcp.CallToolParams{Name: name, Arguments: arguments}
	if c.askTask(name, co.asTask) {
		p.Task = c.taskParams()
	}
	var res mcp.CallToolResult
	err := c.Call(ctx, "tools/call", p, &res, opts...)
	if err != nil && p.Task == nil && c.mustLearnTask(ctx, name, err) {
		p.Task = c.taskParams()
		err = c.Call(ctx, "tools/call", p, &res, opts...)
	}
	if err != nil {
		return nil, c.explainTaskRefusal(err)
	}
	return &res, nil
}

// explainTaskRefusal adds to the -32601 of a modern server that offers the
// tasks of revision 2025-11-25 what it likely means: the tool runs only as
// such a task, which 2026-07-28 does not have (see tasks.go).
func (c *Conn) explainTaskRefusal(err error) error {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound ||
		c.dialect().era != mcp.EraModern || !c.Info().Capabilities.Tasks.ToolCalls() {
		return err
	}
	return fmt.Errorf("%w (the server offers the tasks of revision 2025-11-25, which 2026-07-28 does not have: a tool that runs only as such a task needs the legacy era, client.WithEra(negotiate.LegacyOnly))", err)
}

// mustLearnTask answers a plain call to the tool name that a server
// offering the tasks of revision 2025-11-25 refused as an unknown method, the
// tool not being known to the Conn: it lists the tools, and reports
// whether the listing says the tool must run as a task. The refusal says
// the call did not run, so it may be sent again.
func (c *Conn) mustLearnTask(ctx context.Context, name string, err error) bool {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound || !c.dialect().askTasks {
		return false
	}
	c.mu.Lock()
	known := c.tools.known(name)
	c.mu.Unlock()
	if known {
		return false // its listing said it needs no task: the refusal is the server's answer
	}
	for t, err := range c.Tools(ctx) {
		if err != nil {
			return false
		}
		if t.Name == name {
			return c.askTask(name, false)
		}
	}
	return false
}
