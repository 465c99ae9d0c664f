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
