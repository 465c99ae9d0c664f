package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
