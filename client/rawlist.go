package client

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/mcp"
)

// The raw listings follow cursors with pages (pages.go), so they have the
// typed listings' bounds, and the same cache keys (method and cursor): a
// page is kept once, whichever listing asked for it. Their pages are
// decoded with jsondec.UnmarshalShared, so that each item is a slice of
// the answer: the bytes the cache keeps, when it keeps the page.

// rawPage is one page of a listing, its items undecoded.
type rawPage struct {
	Tools             []json.RawMessage `json:"tools"`
	Prompts           []json.RawMessage `json:"prompts"`
	Resources         []json.RawMessage `json:"resources"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	NextCursor        string            `json:"nextCursor,omitempty"`
	mcp.Cacheable
}

func (*rawPage) sharesAnswer() {} // decodeResult: items are the answer's bytes

// rawPages iterates over the pages of method, each as the items of the
// page's member that items picks, as the server sent them.
func rawPages(ctx context.Context, c *Conn, method string, items func(*rawPage) []json.RawMessage) iter.Seq2[[]json.RawMessage, error] {
	return pages(ctx, c, method, func(p *rawPage) ([][]json.RawMessage, string) {
		return [][]json.RawMessage{items(p)}, p.NextCursor
	})
}

// rawItems iterates over the items of method's pages (see rawPages).
func rawItems(ctx context.Context, c *Conn, method string, items func(*rawPage) []json.RawMessage) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		for page, err := range rawPages(ctx, c, method, items) {
			if err != nil {
				yield(nil, err)
				return
			}
			for _, raw := range page {
				if !yield(raw, nil) {
					return
				}
			}
		}
	}
}

// RawTools iterates over every tool as the JSON object the server sent: its
// bytes, its members in their order, members mcp.Tool lacks kept. It follows
// cursors as Tools does, within the same bounds (ErrListingTooLarge). It
// leaves out the same tools. The Conn notes what each tool says about calls
// to it, as Tools does. An item that is not a tool ends the listing with a
// *ResultError.
//
// Raw and typed listings share the result cache: a cached page serves both.
// An item is a slice of the answer, not a copy. While the page is cached, the
// item and the cache share its bytes. Read them, never change them. An item
// keeps its page alive while it lives.
func (c *Conn) RawTools(ctx context.Context) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		gen := c.toolGen() // a change during the listing makes the pages after it stale
		var typed []mcp.Tool
		for page, err := range rawPages(ctx, c, "tools/list", func(p *rawPage) []json.RawMessage { return p.Tools }) {
			if err != nil {
				yield(nil, err)
				return
			}
			typed = typed[:0]
			for _, raw := range page {
				var t mcp.Tool
				if err := jsondec.UnmarshalShared(raw, &t); err != nil {
					yield(nil, &ResultError{Method: "tools/list", Err: err})
					return
				}
				typed = append(typed, t)
			}
			var kept []json.RawMessage
			c.noteTools(typed, gen, func(i int) { kept = append(kept, page[i]) })
			for _, raw := range kept {
				if !yield(raw, nil) {
					return
				}
			}
		}
	}
}

// RawPrompts iterates over every prompt, each one the JSON object the
// server sent, as RawTools does for tools. The items are not decoded: one
// that is not a prompt is yielded all the same.
func (c *Conn) RawPrompts(ctx context.Context) iter.Seq2[json.RawMessage, error] {
	return rawItems(ctx, c, "prompts/list", func(p *rawPage) []json.RawMessage { return p.Prompts })
}

// RawResources iterates over every resource, each one the JSON object the
// server sent, as RawPrompts does for prompts.
func (c *Conn) RawResources(ctx context.Context) iter.Seq2[json.RawMessage, error] {
	return rawItems(ctx, c, "resources/list", func(p *rawPage) []json.RawMessage { return p.Resources })
}

// RawResourceTemplates iterates over every resource template, each one
// the JSON object the server sent, as RawPrompts does for prompts.
func (c *Conn) RawResourceTemplates(ctx context.Context) iter.Seq2[json.RawMessage, error] {
	return rawItems(ctx, c, "resources/templates/list", func(p *rawPage) []json.RawMessage { return p.ResourceTemplates })
}
