package client

import (
	"context"
	"iter"

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

// CallTool calls the tool name with arguments: anything that encodes to a
// JSON object, or nil. A tool that ran and failed is not an error: the
// result has IsError set.
//
// A call the server runs as a task is waited for. It returns the tool's
// result all the same (see AsTask, OnTask and TaskError). A server may offer
// the tasks of revision 2025-11-25. Then the Conn asks for a task when the
// tool's listing says it must run as one. Such a server may refuse a plain
// call to a tool the Conn has not seen listed. It answers -32601 (what it
// says of a tool that only runs as a task), or an isError result whose text
// speaks of a task (as the TypeScript SDK's servers do). The Conn then looks
// the tool up in tools/list. It calls again as a task only if the listing
// says so. Call does the same for a tools/call whose params are a
// *mcp.CallToolParams.
func (c *Conn) CallTool(ctx context.Context, name string, arguments any, opts ...CallOption) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := c.Call(ctx, "tools/call", &mcp.CallToolParams{Name: name, Arguments: arguments}, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}
