package llm

import (
	"context"
	"encoding/json"
	"maps"
	"sync"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/mcp"
)

// SourceTool is a tool a Source offers: the name the model will call it
// by, and the tool as its server sent it.
type SourceTool struct {
	Name string
	Tool mcp.Tool
}

// Source is where a Toolbox's tools come from and its calls go: one Conn
// (FromConn) or a fleet (FromFleet).
type Source interface {
	// ListTools returns every tool, in a stable order.
	ListTools(ctx context.Context) ([]SourceTool, error)
	// CallTool calls the tool of the given SourceTool.Name.
	CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)
}

// FromConn is the tools of one server, under their own names.
func FromConn(c *client.Conn) Source { return connSource{c} }

type connSource struct{ c *client.Conn }

func (s connSource) ListTools(ctx context.Context) ([]SourceTool, error) {
	ts, err := s.c.AllTools(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SourceTool, len(ts))
	for i, t := range ts {
		out[i] = SourceTool{Name: t.Name, Tool: t}
	}
	return out, nil
}

func (s connSource) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return s.c.CallTool(ctx, name, args)
}

// PartialSource is a Source that may list some servers' tools and not
// others: Missing says which were left out of its last listing, and why.
// FromFleet's Source is one; Toolbox.Missing passes it on.
type PartialSource interface {
	Source
	Missing() map[string]error
}

// FromFleet is the tools of a fleet, under their fleet names (sorted).
// Servers that cannot be reached are left out of the listing; Missing
// (and Toolbox.Missing) says which, and why.
func FromFleet(f *fleet.Fleet) Source { return &fleetSource{f: f} }

type fleetSource struct {
	f       *fleet.Fleet
	mu      sync.Mutex
	missing map[string]error
}

func (s *fleetSource) Missing() map[string]error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.missing)
}

func (s *fleetSource) ListTools(ctx context.Context) ([]SourceTool, error) {
	cat, err := s.f.Tools(ctx)
	if err != nil {
		return nil, err
	}
	missing := make(map[string]error, len(cat.Errors))
	for name, e := range cat.Errors {
		missing[name] = e
	}
	s.mu.Lock()
	s.missing = missing
	s.mu.Unlock()
	out := make([]SourceTool, len(cat.Tools))
	for i, t := range cat.Tools {
		out[i] = SourceTool{Name: t.Name, Tool: t.Tool}
	}
	return out, nil
}

func (s *fleetSource) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return s.f.CallTool(ctx, name, args)
}
