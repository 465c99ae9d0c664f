package client

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/anymcp/anymcp/mcp"
)

// Cacheable results (revision 2026-07-28): tools/list, prompts/list,
// resources/list, resources/templates/list and resources/read answers carry
// ttlMs, how long they stay fresh. The Conn keeps each such answer for that
// long and serves a repeated request from it without a round trip; a
// list_changed notification drops the lists it names, resources/updated
// drops that resource, and a new session drops everything. The cache is the
// Conn's own (one authorization context), so a "private" answer is as
// cacheable as a "public" one. Each hit decodes the kept bytes anew: the
// host gets values of its own.

// Bounds of the result cache: a server cannot grow it past these.
const (
	maxCachedResults = 1024
	maxCachedBytes   = 8 << 20
	maxCachedResult  = 1 << 20 // a bigger answer is not kept
)

type resultCache struct {
	mu    sync.Mutex
	m     map[cacheKey]cachedResult
	bytes int
	now   func() time.Time
}

type cacheKey struct {
	method string
	arg    string // the cursor of a list page, the URI of a read
}

type cachedResult struct {
	raw     json.RawMessage
	expires time.Time
}

func newResultCache() *resultCache {
	return &resultCache{m: make(map[cacheKey]cachedResult), now: time.Now}
}

func (rc *resultCache) get(k cacheKey) (json.RawMessage, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	e, ok := rc.m[k]
	if !ok {
		return nil, false
	}
	if !rc.now().Before(e.expires) {
		rc.drop(k, e)
		return nil, false
	}
	return e.raw, true
}

func (rc *resultCache) put(k cacheKey, raw json.RawMessage, ttl time.Duration) {
	if ttl <= 0 || len(raw) > maxCachedResult {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if old, ok := rc.m[k]; ok {
		rc.drop(k, old)
	}
	now := rc.now()
	for k2, e := range rc.m { // make room: expired first, then anything
		if len(rc.m) < maxCachedResults && rc.bytes+len(raw) <= maxCachedBytes {
			break
		}
		if !now.Before(e.expires) || len(rc.m) >= maxCachedResults || rc.bytes+len(raw) > maxCachedBytes {
			rc.drop(k2, e)
		}
	}
	rc.m[k] = cachedResult{raw: raw, expires: now.Add(ttl)}
	rc.bytes += len(raw)
}

func (rc *resultCache) drop(k cacheKey, e cachedResult) {
	delete(rc.m, k)
	rc.bytes -= len(e.raw)
}

// forget drops every answer of method, or only the one for arg when arg
// is not empty.
func (rc *resultCache) forget(method, arg string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for k, e := range rc.m {
		if k.method == method && (arg == "" || k.arg == arg) {
			rc.drop(k, e)
		}
	}
}

// clear drops everything.
func (rc *resultCache) clear() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	clear(rc.m)
	rc.bytes = 0
}

// cachedCall is Call for a cacheable request: served from the cache while
// fresh, otherwise sent, and its answer kept for as long as its ttlMs says.
func (c *Conn) cachedCall(ctx context.Context, method, arg string, params, result any, opts ...CallOption) error {
	k := cacheKey{method, arg}
	if raw, ok := c.results.get(k); ok {
		return decodeResult(method, callResult{raw: raw}, result)
	}
	// The answer's own bytes (the transport gave them up): decoded once,
	// and kept as they are when the result may be cached.
	raw, err := c.callRaw(ctx, method, params, opts...)
	if err != nil {
		return err
	}
	if err := decodeResult(method, callResult{raw: raw}, result); err != nil {
		return err
	}
	if f, ok := result.(interface{ Freshness() time.Duration }); ok {
		c.results.put(k, raw, f.Freshness())
	}
	return nil
}

// invalidate drops what a change notification says is stale.
func (c *Conn) invalidate(method string, params json.RawMessage) {
	switch method {
	case "notifications/tools/list_changed":
		c.results.forget("tools/list", "")
	case "notifications/prompts/list_changed":
		c.results.forget("prompts/list", "")
	case "notifications/resources/list_changed":
		c.results.forget("resources/list", "")
		c.results.forget("resources/templates/list", "")
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedParams
		if json.Unmarshal(params, &p) == nil {
			c.results.forget("resources/read", p.URI)
		}
	}
}
