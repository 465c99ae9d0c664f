package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// A server that keeps answering tools/list with large pages and a cursor
// cannot make AllTools gather more than maxListingBytes: the listing ends
// with ErrListingTooLarge before the page that passes the bound is kept.
func TestListingBounded(t *testing.T) {
	defer func(n int) { maxListingBytes = n }(maxListingBytes)
	maxListingBytes = 1 << 20
	big := strings.Repeat("d", 64<<10)
	var pages atomic.Int32
	srv := newInstantTransport()
	srv.result = func(m *jsonrpc.Message) json.RawMessage {
		if m.Method != "tools/list" {
			return nil
		}
		n := pages.Add(1)
		return []byte(fmt.Sprintf(`{"tools":[{"name":"t%d","description":"%s","inputSchema":{"type":"object"}}],"nextCursor":"c%d"}`, n, big, n))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Open(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tools, err := c.AllTools(ctx)
	if !errors.Is(err, ErrListingTooLarge) || !strings.Contains(err.Error(), "tools/list") {
		t.Fatalf("err = %v, want ErrListingTooLarge for tools/list", err)
	}
	perPage := 64<<10 + 100
	if want := maxListingBytes / perPage; len(tools) > want || len(tools) < want-1 {
		t.Fatalf("%d tools gathered, want about %d (1 MiB of 64 KiB pages)", len(tools), want)
	}
	if n := int(pages.Load()); n != len(tools)+1 {
		t.Fatalf("%d pages asked for %d tools kept: want one more page, the one that passed the bound", n, len(tools))
	}
}

// TestRefusedCursorForgetsCachedPages: when the server answers a page's
// cursor with an error (its list changed, the cursor is no longer valid),
// the cached pages of that listing are forgotten, and the next listing
// starts again from the first page, asked of the server (2026-07-28,
// caching and pagination: the client SHOULD discard all cached pages and
// re-fetch from the beginning), where the cached first page handed out
// the same stale cursor again and every listing failed for as long as
// its ttlMs (up to a day). Both the iterators and ListTools with a cursor
// forget.
func TestRefusedCursorForgetsCachedPages(t *testing.T) {
	c, p := openStateless(t)
	refuse := func(m *jsonrpc.Message) {
		p.toClient <- &jsonrpc.Message{ID: m.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor")}
	}
	cursorOf := func(m *jsonrpc.Message) string {
		var pp struct {
			Cursor string `json:"cursor"`
		}
		json.Unmarshal(m.Params, &pp)
		return pp.Cursor
	}
	const page1 = `{"resultType":"complete","ttlMs":600000,"cacheScope":"public","tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c1"}`
	all := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.AllTools(ctx)
		return err
	}
	go func() {
		p.reply(p.expect("tools/list").ID, page1)
		refuse(p.expect("tools/list"))
	}()
	var rpcErr *jsonrpc.Error
	if err := all(); !errors.As(err, &rpcErr) {
		t.Fatalf("first listing: %v, want the server's error", err)
	}
	go func() {
		m := p.expect("tools/list")
		if cur := cursorOf(m); cur != "" {
			t.Errorf("the listing after a refused cursor asked for cursor %q first, want the first page", cur)
		}
		p.reply(m.ID, `{"resultType":"complete","ttlMs":600000,"tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"c2"}`)
		p.reply(p.expect("tools/list").ID, `{"resultType":"complete","ttlMs":0,"tools":[]}`)
	}()
	if err := all(); err != nil {
		t.Fatalf("second listing: %v", err)
	}
	// One page at a time: the cached first page (cursor c2) is forgotten
	// when the server refuses c2.
	go func() { refuse(p.expect("tools/list")) }()
	if _, err := c.ListTools(context.Background(), "c2"); !errors.As(err, &rpcErr) {
		t.Fatalf("ListTools(c2): %v, want the server's error", err)
	}
	go func() {
		m := p.expect("tools/list")
		p.reply(m.ID, `{"resultType":"complete","tools":[]}`)
	}()
	if _, err := c.ListTools(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
}

// listings are the iterators that follow cursors, typed and raw, each
// with the list method it asks, as the bound tests run them.
var listings = []struct {
	method string
	run    func(context.Context, *Conn) (int, error) // items yielded, and the error
}{
	{"tools/list", func(ctx context.Context, c *Conn) (int, error) { return count(c.Tools(ctx)) }},
	{"tools/list", func(ctx context.Context, c *Conn) (int, error) { return count(c.RawTools(ctx)) }},
	{"prompts/list", func(ctx context.Context, c *Conn) (int, error) { return count(c.RawPrompts(ctx)) }},
	{"resources/list", func(ctx context.Context, c *Conn) (int, error) { return count(c.RawResources(ctx)) }},
	{"resources/templates/list", func(ctx context.Context, c *Conn) (int, error) { return count(c.RawResourceTemplates(ctx)) }},
}

func count[T any](seq iter.Seq2[T, error]) (int, error) {
	n := 0
	for _, err := range seq {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// endlessPages is a server whose every list method answers each page with
// one item and a new cursor, for ever, or with pageBytes of padding in
// that item; it counts the pages asked.
func endlessPages(t *testing.T, pageBytes int) (*Conn, *atomic.Int32) {
	t.Helper()
	pad := strings.Repeat("d", pageBytes)
	var asked atomic.Int32
	srv := newInstantTransport()
	srv.result = func(m *jsonrpc.Message) json.RawMessage {
		key := map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"}[m.Method]
		if key == "" {
			return nil
		}
		n := asked.Add(1)
		item := fmt.Sprintf(`{"name":"t%d","description":"%s","uri":"x:%d","uriTemplate":"x:{%d}","inputSchema":{"type":"object"}}`, n, pad, n, n)
		return []byte(fmt.Sprintf(`{%q:[%s],"nextCursor":"c%d"}`, key, item, n))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Open(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, &asked
}

// A server that pages for ever cannot loop a listing: each one, typed or
// raw, stops after maxPages pages, not one more asked, with
// ErrListingTooLarge naming the method, every item before it yielded.
func TestListingPageBound(t *testing.T) {
	defer func(n int) { maxPages = n }(maxPages)
	maxPages = 40
	for _, l := range listings {
		c, asked := endlessPages(t, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		n, err := l.run(ctx, c)
		cancel()
		if !errors.Is(err, ErrListingTooLarge) || !strings.Contains(err.Error(), l.method) || !strings.Contains(err.Error(), "40 pages") {
			t.Fatalf("%s: err = %v, want ErrListingTooLarge for %s past 40 pages", l.method, err, l.method)
		}
		if got := int(asked.Load()); got != maxPages || n != maxPages {
			t.Errorf("%s: %d pages asked, %d items yielded: want the listing to stop at %d", l.method, got, n, maxPages)
		}
	}
}

// A server that sends large pages for ever cannot make a listing gather
// past maxListingBytes: each one, typed or raw, stops at the page that
// passes it, which it does not yield, with ErrListingTooLarge.
func TestListingByteBound(t *testing.T) {
	defer func(n int) { maxListingBytes = n }(maxListingBytes)
	maxListingBytes = 1 << 20
	const pad = 64 << 10
	for _, l := range listings {
		c, asked := endlessPages(t, pad)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		n, err := l.run(ctx, c)
		cancel()
		if !errors.Is(err, ErrListingTooLarge) || !strings.Contains(err.Error(), l.method) {
			t.Fatalf("%s: err = %v, want ErrListingTooLarge for %s", l.method, err, l.method)
		}
		if want := maxListingBytes / (pad + 150); n < want-1 || n > want {
			t.Errorf("%s: %d items yielded, want about %d (1 MiB of 64 KiB pages)", l.method, n, want)
		}
		if got := int(asked.Load()); got != n+1 {
			t.Errorf("%s: %d pages asked for %d items: want one more page, the one that passed the bound", l.method, got, n)
		}
	}
}
