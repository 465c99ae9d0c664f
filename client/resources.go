package client

import (
	"context"
	"iter"

	"github.com/anymcp/anymcp/mcp"
)

// ListResources fetches one page of resources/list.
func (c *Conn) ListResources(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error) {
	return listPage[mcp.ListResourcesResult](ctx, c, "resources/list", cursor)
}

// Resources iterates over every resource, following pagination cursors.
func (c *Conn) Resources(ctx context.Context) iter.Seq2[mcp.Resource, error] {
	return pages(ctx, c, "resources/list", func(r *mcp.ListResourcesResult) ([]mcp.Resource, string) { return r.Resources, r.NextCursor })
}

// AllResources returns every resource, all pages.
func (c *Conn) AllResources(ctx context.Context) ([]mcp.Resource, error) {
	return collect(c.Resources(ctx))
}

// ListResourceTemplates fetches one page of resources/templates/list.
func (c *Conn) ListResourceTemplates(ctx context.Context, cursor string) (*mcp.ListResourceTemplatesResult, error) {
	return listPage[mcp.ListResourceTemplatesResult](ctx, c, "resources/templates/list", cursor)
}

// ResourceTemplates iterates over every resource template.
func (c *Conn) ResourceTemplates(ctx context.Context) iter.Seq2[mcp.ResourceTemplate, error] {
	return pages(ctx, c, "resources/templates/list", func(r *mcp.ListResourceTemplatesResult) ([]mcp.ResourceTemplate, string) {
		return r.ResourceTemplates, r.NextCursor
	})
}

// AllResourceTemplates returns every resource template, all pages.
func (c *Conn) AllResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	return collect(c.ResourceTemplates(ctx))
}

// ReadResource reads the resource at uri. An unknown URI is a
// *jsonrpc.Error with code jsonrpc.CodeResourceNotFound.
func (c *Conn) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*mcp.ReadResourceResult, error) {
	var res mcp.ReadResourceResult
	if err := c.cachedCall(ctx, "resources/read", uri, &mcp.ReadResourceParams{URI: uri}, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}

// Subscribe asks for notifications/resources/updated about uri. They go to
// the OnResourceUpdated handler. The Conn remembers the subscription. An
// initialize-era server is sent resources/subscribe. The subscription is
// restored after re-initializing a lost session. With a stateless server,
// the URI joins the filter of the subscriptions/listen stream, which is
// opened again with it. Subscribe then returns once the server acknowledged
// it. When the acknowledgement leaves the URI out, it returns a
// *SubscriptionRefusedError.
func (c *Conn) Subscribe(ctx context.Context, uri string) error {
	had := c.subs.add(uri) // before the call, so that a re-initialization meanwhile restores it
	var err error
	if c.dialect().listen {
		var l *listener
		if l, err = c.awaitListening(ctx, c.startListening()); err == nil && l.refuses(uri) {
			err = &SubscriptionRefusedError{URI: uri}
		}
	} else {
		c.openStream() // the updates come on the GET stream
		err = c.Call(ctx, "resources/subscribe", &mcp.SubscribeParams{URI: uri}, nil)
	}
	if err != nil && !had {
		c.subs.remove(uri)
		c.startListening()
	}
	return err
}

// Unsubscribe ends a subscription made with Subscribe.
func (c *Conn) Unsubscribe(ctx context.Context, uri string) error {
	if c.dialect().listen {
		c.subs.remove(uri)
		_, err := c.awaitListening(ctx, c.startListening())
		return err
	}
	if err := c.Call(ctx, "resources/unsubscribe", &mcp.SubscribeParams{URI: uri}, nil); err != nil {
		return err
	}
	c.subs.remove(uri)
	return nil
}
