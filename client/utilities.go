package client

import (
	"context"

	"github.com/anymcp/anymcp/mcp"
)

// Complete asks for completions of an argument of a prompt or resource
// template (completion/complete).
func (c *Conn) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var res mcp.CompleteResult
	if err := c.Call(ctx, "completion/complete", p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetLogLevel asks the server to send log records of level and above
// (logging/setLevel); they arrive at the OnLog handler.
func (c *Conn) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	return c.Call(ctx, "logging/setLevel", &mcp.SetLevelParams{Level: level}, nil)
}

// Ping checks that the server answers.
func (c *Conn) Ping(ctx context.Context) error {
	return c.Call(ctx, "ping", nil, nil)
}
