package client

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// maxPages bounds how many pages one listing follows, so that a server
// that keeps answering with a cursor cannot loop a client forever: the
// listing then ends with ErrListingTooLarge. (A var: tests lower it.)
var maxPages = 10000

// maxListingBytes bounds the results of one listing, all its pages
// together: a server that keeps sending large pages cannot make AllTools
// and its kind gather more than this. (A var: tests lower it.)
var maxListingBytes = 256 << 20

// pages iterates over every item of a paginated list method. A failed page
// ends the iteration with its error; so does a listing whose pages add up
// to more than maxListingBytes, before the page that passes it is yielded,
// and one whose last page still has a cursor after maxPages pages: both
// with ErrListingTooLarge.
func pages[R, T any](ctx context.Context, c *Conn, method string, split func(*R) ([]T, string)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		cursor := ""
		total := 0
		for range maxPages {
			var page R
			var params any
			if cursor != "" {
				params = &mcp.PaginatedParams{Cursor: cursor}
			}
			n, err := c.cachedCallSized(ctx, method, cursor, params, &page)
			if err != nil {
				c.cursorRefused(method, cursor, err)
				yield(zero, err)
				return
			}
			if total += n; total > maxListingBytes {
				yield(zero, fmt.Errorf("%s: %w (its pages passed %d bytes)", method, ErrListingTooLarge, maxListingBytes))
				return
			}
			items, next := split(&page)
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			cursor = next
		}
		yield(zero, fmt.Errorf("%s: %w (the server kept sending cursors past %d pages)", method, ErrListingTooLarge, maxPages))
	}
}

// collect gathers every item of a paginated listing.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var all []T
	for it, err := range seq {
		if err != nil {
			return all, err
		}
		all = append(all, it)
	}
	return all, nil
}

// listPage fetches one page of a list method.
func listPage[R any](ctx context.Context, c *Conn, method, cursor string) (*R, error) {
	var params any
	if cursor != "" {
		params = &mcp.PaginatedParams{Cursor: cursor}
	}
	var page R
	if err := c.cachedCall(ctx, method, cursor, params, &page); err != nil {
		c.cursorRefused(method, cursor, err)
		return nil, err
	}
	return &page, nil
}

// cursorRefused forgets every cached page of method when the server
// answered the page for cursor with an error: the cursor, taken from an
// earlier page, may be stale, and so may the cached pages that lead to
// it. The next listing starts again from the first page, from the
// server.
func (c *Conn) cursorRefused(method, cursor string, err error) {
	var rpcErr *jsonrpc.Error
	if cursor != "" && errors.As(err, &rpcErr) {
		c.results.forget(method, "")
	}
}
