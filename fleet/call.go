package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

// CallTool calls the tool of fleet name name with arguments, on its
// server's Conn, with every guarantee of client.Conn.CallTool: its
// errors are the Conn's (errors.Is(err, jsonrpc.ErrOutcomeUnknown) says
// the tool may have run), progress, cancellation, tasks and the host's
// handlers work as they do there. A name the catalogue does not hold
// (the server's tools are listed again first, in case it is new) is an
// *UnknownToolError; a server that cannot be reached, a *ServerError. A
// tool WithPins holds back (checked again first) is not called: the
// error is its *pin.ChangedError or *pin.NotPinnedError.
func (f *Fleet) CallTool(ctx context.Context, name string, args any, opts ...client.CallOption) (*mcp.CallToolResult, error) {
	var held error
	m, tool, err := f.resolve(ctx, name, func(m *member) (string, bool) {
		t, ok := m.tools.byName[name]
		held = m.tools.held[name]
		return t, ok
	}, func(m *member, ctx context.Context) error { _, _, err := m.scanTools(ctx); return err })
	if _, unknown := errors.AsType[*UnknownToolError](err); unknown && held != nil {
		return nil, held
	}
	if err != nil {
		return nil, err
	}
	c, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer m.release()
	if h := f.opts.onProgress; h != nil {
		server := m.name()
		opts = append([]client.CallOption{client.WithProgress(func(p mcp.ProgressParams) { h(server, tool, p) })}, opts...)
	}
	return c.CallTool(ctx, tool, args, opts...)
}

// GetPrompt renders the prompt of fleet name name (see Prompts) with
// arguments, on its server's Conn.
func (f *Fleet) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...client.CallOption) (*mcp.GetPromptResult, error) {
	m, prompt, err := f.resolve(ctx, name, func(m *member) (string, bool) {
		p, ok := m.prompts.byName[name]
		return p, ok
	}, func(m *member, ctx context.Context) error { _, err := m.listPrompts(ctx); return err })
	if err != nil {
		return nil, err
	}
	c, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer m.release()
	return c.GetPrompt(ctx, prompt, args, opts...)
}

// ReadResource reads uri from server.
func (f *Fleet) ReadResource(ctx context.Context, server, uri string, opts ...client.CallOption) (*mcp.ReadResourceResult, error) {
	m, err := f.member(server)
	if err != nil {
		return nil, err
	}
	c, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer m.release()
	return c.ReadResource(ctx, uri, opts...)
}

// resolve finds the member and original name of a fleet name: from the
// member's index, or, when it is not there, after listing the member
// again.
func (f *Fleet) resolve(ctx context.Context, name string, find func(*member) (string, bool), list func(*member, context.Context) error) (*member, string, error) {
	if f.isClosed() {
		return nil, "", ErrClosed
	}
	m := f.memberOf(name)
	if m == nil {
		return nil, "", &UnknownToolError{Name: name}
	}
	m.mu.Lock()
	orig, ok := find(m)
	m.mu.Unlock()
	if ok {
		return m, orig, nil
	}
	if err := list(m, ctx); err != nil {
		if ctx.Err() != nil {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	m.mu.Lock()
	orig, ok = find(m)
	m.mu.Unlock()
	if !ok {
		return nil, "", &UnknownToolError{Name: name}
	}
	return m, orig, nil
}
