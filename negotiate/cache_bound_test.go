package negotiate

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anymcp/anymcp/mcp"
)

// A Cache holds at most MaxCacheEntries: a full one drops its expired
// entries first, else the one that expires first; a known key is replaced
// in place.
func TestCacheBounded(t *testing.T) {
	// The bubble's clock moves only when every goroutine in it waits:
	// time.Sleep here is the clock's step, not a wait.
	synctest.Test(t, testCacheBounded)
}

func testCacheBounded(t *testing.T) {
	c := NewCache(time.Minute)
	for i := range MaxCacheEntries {
		c.Store(fmt.Sprintf("https://s%d.example/mcp", i), StreamableHTTP, mcp.EraStateless)
		time.Sleep(time.Millisecond)
	}
	c.Store("https://s0.example/mcp", SSE, mcp.EraInitialize) // known: replaced, nothing dropped
	if len(c.m) != MaxCacheEntries {
		t.Fatalf("%d entries", len(c.m))
	}
	c.Store("https://new.example/mcp", StreamableHTTP, mcp.EraStateless) // full: s1 expires first
	if _, _, ok := c.Lookup("https://s1.example/mcp"); ok || len(c.m) != MaxCacheEntries {
		t.Fatalf("s1 kept, or %d entries", len(c.m))
	}
	if tr, _, ok := c.Lookup("https://s0.example/mcp"); !ok || tr != SSE {
		t.Fatalf("s0: %q, %v", tr, ok)
	}
	time.Sleep(2 * time.Minute) // all expired
	c.Store("https://later.example/mcp", StreamableHTTP, mcp.EraStateless)
	if len(c.m) != 1 {
		t.Fatalf("%d entries after the expired were dropped, want 1", len(c.m))
	}
}
