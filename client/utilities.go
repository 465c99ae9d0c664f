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

// SetLogLevel asks the server to send log records of level and above;
// they arrive at the OnLog handler. An initialize-era server is sent
// logging/setLevel; with a stateless one, every later request carries the
// level in its _meta (without SetLogLevel, requests carry "info" when
// OnLog is set, and no level otherwise: the server then sends no records).
func (c *Conn) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	if !c.dialect().setLevel {
		c.level.Store(&level)
		return nil
	}
	return c.Call(ctx, "logging/setLevel", &mcp.SetLevelParams{Level: level}, nil)
}

// Ping checks that the server answers: with ping for an initialize-era server, and
// with server/discover for a stateless one (the stateless revisions have no
// ping).
func (c *Conn) Ping(ctx context.Context) error {
	return c.Call(ctx, c.dialect().ping, nil, nil)
}
