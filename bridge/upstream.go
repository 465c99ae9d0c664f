package bridge

import (
	"context"
	"iter"
	"slices"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

// Upstream is what a Bridge serves: one server's *client.Conn, or a
// gateway over many servers that routes each request to one of them.
// The bridge uses nothing of it beyond these methods; their meaning is
// client.Conn's.
type Upstream interface {
	// Info is what the downstream is told of the server: its era,
	// capabilities, identity and instructions.
	Info() client.Info
	// Call sends one request and decodes its result into result (the
	// bridge passes a *json.RawMessage and keeps the bytes as sent).
	Call(ctx context.Context, method string, params, result any, opts ...client.CallOption) error
	// Tools lists the tools (for their x-mcp-header parameters).
	Tools(ctx context.Context) iter.Seq2[mcp.Tool, error]
	// Listening returns once list changes and resource updates are
	// being received.
	Listening(ctx context.Context) error
	Subscribe(ctx context.Context, uri string) error
	Unsubscribe(ctx context.Context, uri string) error
	SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error
	NotifyRootsChanged(ctx context.Context) error
	Close() error
}

var _ Upstream = (*client.Conn)(nil)

// Downstream is what a Dialer is told of the client an upstream
// connection serves.
type Downstream struct {
	// Options go on the upstream connection: the handlers that put the
	// upstream's sampling, elicitation and roots requests to this client
	// (only those it declared), and its log callback.
	Options []client.Option
	// Changes tell this client of the upstream's list changes and
	// resource updates. A Dialer puts Changes.Options() on its
	// connection; one that serves several servers may keep from a client
	// the changes of servers it does not serve.
	Changes Changes
	// Elicit asks this client for input (elicitation/create, form mode).
	// It is nil when the client declared no form elicitation, and on the
	// shared connection, which serves every stateless client at once.
	Elicit func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// Changes are the callbacks of list changes and resource updates; a nil
// one is not called.
type Changes struct {
	Tools, Prompts, Resources func()
	ResourceUpdated           func(uri string)
}

// Options are c's callbacks as options of a client connection.
func (c Changes) Options() []client.Option {
	var out []client.Option
	if c.Tools != nil {
		out = append(out, client.OnToolsChanged(c.Tools))
	}
	if c.Prompts != nil {
		out = append(out, client.OnPromptsChanged(c.Prompts))
	}
	if c.Resources != nil {
		out = append(out, client.OnResourcesChanged(c.Resources))
	}
	if c.ResourceUpdated != nil {
		out = append(out, client.OnResourceUpdated(c.ResourceUpdated))
	}
	return out
}

// Dialer connects to the upstream for a downstream client. The bridge
// calls it once for its shared connection, again for each downstream
// session, and for each stateless call that may need input from an
// initialize-era upstream (see docs/bridge.md, "one Conn or many").
type Dialer func(ctx context.Context, d Downstream) (Upstream, error)

// DialTarget is the Dialer of client.Dial on t, with base options before
// the downstream's.
func DialTarget(t client.Target, base ...client.Option) Dialer {
	return func(ctx context.Context, d Downstream) (Upstream, error) {
		all := slices.Concat(base, d.Options, d.Changes.Options())
		conn, err := client.Dial(ctx, t, all...)
		if err != nil {
			return nil, err
		}
		return conn, nil
	}
}

// elicitVia is the Downstream.Elicit that asks through a, nil when the
// client declared no form elicitation.
func elicitVia(a asker, c caps) func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if !c.elicitForm {
		return nil
	}
	route := func(context.Context) (asker, error) { return a, nil }
	return func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		var r mcp.ElicitResult
		return &r, relay(ctx, route, "elicitation/create", p, &r)
	}
}
