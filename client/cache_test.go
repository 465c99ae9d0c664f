package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// longCursors is an initialize-era server's tools/list (instantTransport.result)
// whose pages take turns: asked without a cursor or with a short one, it
// answers a page that may not be cached with a nextCursor of cursorLen
// bytes; asked with such a long cursor, it answers a small page that may
// be cached for an hour, whose nextCursor is short. Each cacheable page is
// kept under the long cursor it was asked for.
type longCursors struct {
	cursorLen int
	mu        sync.Mutex
	pages     int
}

func (s *longCursors) result(m *jsonrpc.Message) json.RawMessage {
	if m.Method != "tools/list" {
		return nil
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(m.Params, &p)
	s.mu.Lock()
	s.pages++
	n := s.pages
	s.mu.Unlock()
	if len(p.Cursor) < s.cursorLen {
		next := fmt.Sprintf("%06d", n) + strings.Repeat("c", s.cursorLen-6)
		return []byte(`{"tools":[],"nextCursor":"` + next + `"}`)
	}
	return []byte(fmt.Sprintf(`{"tools":[],"ttlMs":3600000,"nextCursor":"short-%d"}`, n))
}

// cacheHolds counts what the result cache holds, from its entries: how
// many, and the bytes of their keys' arguments and of their answers.
func cacheHolds(rc *resultCache) (entries, keyBytes, answerBytes int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for k, e := range rc.m {
		keyBytes += len(k.arg)
		answerBytes += len(e.raw)
	}
	return len(rc.m), keyBytes, answerBytes
}

// A server whose cursors are long makes every cacheable page it answers a
// cache entry with a long key. The keys count toward the cache's byte
// bound, so however many pages the host walks, the cache holds at most
// maxCachedBytes of keys and answers together.
func TestCacheCountsKeys(t *testing.T) {
	const cursorLen, pages = 512 << 10, 48 // 24 cacheable pages: 12 MiB of keys
	srv := newInstantTransport()
	srv.result = (&longCursors{cursorLen: cursorLen}).result
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Open(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cursor, cached := "", 0
	for range pages { // the host keeps nothing
		page, err := c.ListTools(ctx, cursor)
		if err != nil {
			t.Fatal(err)
		}
		if page.Freshness() > 0 {
			cached++
		}
		cursor = page.NextCursor
	}
	entries, keyBytes, answerBytes := cacheHolds(c.results)
	t.Logf("%d cacheable pages walked; the cache holds %d entries: %d bytes of keys, %d of answers", cached, entries, keyBytes, answerBytes)
	if cached*cursorLen <= maxCachedBytes {
		t.Fatalf("only %d cacheable pages: not enough to pass the bound", cached)
	}
	if keyBytes+answerBytes > maxCachedBytes {
		t.Errorf("the cache holds %d bytes of keys and answers, past its bound of %d", keyBytes+answerBytes, maxCachedBytes)
	}
	if entries == 0 {
		t.Error("nothing cached")
	}
	c.results.mu.Lock()
	counted := c.results.bytes
	c.results.mu.Unlock()
	if counted < keyBytes+answerBytes {
		t.Errorf("the cache counts %d bytes, holds %d", counted, keyBytes+answerBytes)
	}
}

// An entry is kept only when its answer and its key together fit
// maxCachedResult: a small answer under a key that alone passes the bound
// is not kept, and takes nothing else out of the cache.
func TestCacheEntryTooBigWithItsKey(t *testing.T) {
	rc := newResultCache()
	small := json.RawMessage(`{"tools":[]}`)
	rc.put(cacheKey{"tools/list", "a"}, small, time.Hour, rc.at())
	for _, arg := range []string{
		strings.Repeat("k", maxCachedBytes+1),             // the key alone passes the byte bound
		strings.Repeat("k", maxCachedResult),              // the key fills an entry's bound: the answer does not fit
		strings.Repeat("k", maxCachedResult-len(small)-9), // one byte too many
	} {
		rc.put(cacheKey{"tools/list", arg}, small, time.Hour, rc.at())
		if _, ok := rc.get(cacheKey{"tools/list", arg}); ok {
			t.Errorf("an answer of %d bytes under a key of %d was cached", len(small), len(arg))
		}
	}
	fits := strings.Repeat("k", maxCachedResult-len(small)-len("tools/list"))
	rc.put(cacheKey{"tools/list", fits}, small, time.Hour, rc.at())
	if _, ok := rc.get(cacheKey{"tools/list", fits}); !ok {
		t.Error("an entry of exactly maxCachedResult bytes was not cached")
	}
	if _, ok := rc.get(cacheKey{"tools/list", "a"}); !ok {
		t.Error("the entries too big took the small one out")
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if want := 2*len(small) + 2*len("tools/list") + 1 + len(fits); rc.bytes != want {
		t.Errorf("the cache counts %d bytes, want %d", rc.bytes, want)
	}
}

// TestCacheDropsExpiredFirst: a full cache makes room by dropping the
// answers that expired, and keeps every one still fresh.
func TestCacheDropsExpiredFirst(t *testing.T) {
	rc := newResultCache()
	now := time.Unix(1e9, 0)
	rc.now = func() time.Time { return now }
	small := json.RawMessage(`{}`)
	for i := range maxCachedResults {
		ttl := time.Hour
		if i%256 == 0 {
			ttl = time.Second // four of them expire
		}
		rc.put(cacheKey{"resources/read", fmt.Sprint(i)}, small, ttl, rc.at())
	}
	now = now.Add(time.Minute)
	for i := range 4 {
		rc.put(cacheKey{"resources/read", fmt.Sprint("new", i)}, small, time.Hour, rc.at())
	}
	for i := range maxCachedResults {
		_, ok := rc.get(cacheKey{"resources/read", fmt.Sprint(i)})
		if fresh := i%256 != 0; ok != fresh {
			t.Errorf("answer %d (fresh %v) cached: %v", i, fresh, ok)
		}
	}
	for i := range 4 {
		if _, ok := rc.get(cacheKey{"resources/read", fmt.Sprint("new", i)}); !ok {
			t.Errorf("new answer %d not cached", i)
		}
	}
}

// A ttlMs written as a JSON number other than a decimal int64 — with a
// fraction or an exponent, or past the range of int64, as servers that
// compute it in floating point or send a huge one do — is read as the
// number it is (a huge one keeps the result fresh for a day), where the
// whole listing failed with a *ResultError for its cache hint.
func TestCacheHintAnyNumber(t *testing.T) {
	c, p := openStateless(t)
	for _, tc := range []struct {
		ttl  string
		want time.Duration
	}{
		{"60000.0", time.Minute},
		{"6e4", time.Minute},
		{"1e20", 24 * time.Hour},
		{"18446744073709551616", 24 * time.Hour},
	} {
		c.results.clear()
		ch := make(chan error, 1)
		var page *mcp.ListToolsResult
		go func() {
			var err error
			page, err = c.ListTools(context.Background(), "")
			ch <- err
		}()
		m := p.expect("tools/list")
		p.reply(m.ID, `{"resultType":"complete","ttlMs":`+tc.ttl+`,"cacheScope":"public","tools":[{"name":"a","inputSchema":{"type":"object"}}]}`)
		if err := <-ch; err != nil || len(page.Tools) != 1 || page.Freshness() != tc.want {
			t.Errorf("ttlMs %s: %+v %v, want the tool, fresh for %v", tc.ttl, page, err, tc.want)
			continue
		}
		if _, cached := c.results.get(cacheKey{"tools/list", ""}); !cached {
			t.Errorf("ttlMs %s: not cached", tc.ttl)
		}
	}
}
