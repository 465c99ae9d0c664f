package client

import (
	"context"
	"iter"

	"github.com/anymcp/anymcp/mcp"
)

// ListPrompts fetches one page of prompts/list.
func (c *Conn) ListPrompts(ctx context.Context, cursor string) (*mcp.ListPromptsResult, error) {
	return listPage[mcp.ListPromptsResult](ctx, c, "prompts/list", cursor)
}

// Prompts iterates over every prompt, following pagination cursors.
func (c *Conn) Prompts(ctx context.Context) iter.Seq2[mcp.Prompt, error] {
	return pages(ctx, c, "prompts/list", func(r *mcp.ListPromptsResult) ([]mcp.Prompt, string) { return r.Prompts, r.NextCursor })
}

// AllPrompts returns every prompt, all pages.
func (c *Conn) AllPrompts(ctx context.Context) ([]mcp.Prompt, error) { return collect(c.Prompts(ctx)) }

// GetPrompt renders the prompt name with arguments.
func (c *Conn) GetPrompt(ctx context.Context, name string, arguments map[string]string, opts ...CallOption) (*mcp.GetPromptResult, error) {
	var res mcp.GetPromptResult
	if err := c.Call(ctx, "prompts/get", &mcp.GetPromptParams{Name: name, Arguments: arguments}, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}
