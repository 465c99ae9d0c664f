package client

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/anymcp/anymcp/mcp"
)

// Cacheable results (revision 2026-07-28): tools/list, prompts/list,
// resources/list, resources/templates/list and resources/read answers carry
// ttlMs, how long they stay fresh. The Conn keeps each such answer for that
// long and serves a repeated request from it without a round trip; a
// list_changed notification drops the lists it names, resources/updated
// drops that resource, and a new session drops everything. The answer to
// a read sent again with the answers to an input_required result is not
// kept: it depends on them. The cache is the
// Conn's own (one authorization context), so a "private" answer is as
// cacheable as a "public" one. Each hit decodes the kept bytes anew: the
// host gets values of its own.

// Bounds of the result cache: a server cannot grow it past these. An
// entry counts as the bytes of its answer and of its key, for the server
// chooses keys too: a list page's nextCursor is the key of the next page's
// answer.
const (
	maxCachedResults = 1024
	maxCachedBytes   = 8 << 20 // answers and keys
	maxCachedResult  = 1 << 20 // a bigger entry (answer and key) is not kept
)

type resultCache struct {
	mu    sync.Mutex
	m     map[cacheKey]cachedResult
	bytes int
	epoch uint64 // counts forget and clear: an answer asked for before one is not kept
	now   func() time.Time
}

type cacheKey struct {
	method string
	arg    string // the cursor of a list page, the URI of a read
}

type cachedResult struct {
	raw     json.RawMessage
	expires time.Time
	size    int // what the entry counts as: entrySize
}

// entrySize is what the answer raw kept under k counts as.
func entrySize(k cacheKey, raw json.RawMessage) int {
	return len(k.method) + len(k.arg) + len(raw)
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

// at returns the cache's epoch, to give put for an answer about to be
// asked for.
func (rc *resultCache) at() uint64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.epoch
}

// put keeps raw under k for ttl, unless the cache forgot anything since
// epoch (at): a change notification that came while the answer was on its
// way makes it stale.
func (rc *resultCache) put(k cacheKey, raw json.RawMessage, ttl time.Duration, epoch uint64) {
	size := entrySize(k, raw)
	if ttl <= 0 || size > maxCachedResult {
		return
	}
	k.arg = strings.Clone(k.arg) // not the bytes of the answer it came in: only what is counted
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.epoch != epoch {
		return
	}
	if old, ok := rc.m[k]; ok {
		rc.drop(k, old)
	}
	now := rc.now()
	full := func() bool { return len(rc.m) >= maxCachedResults || rc.bytes+size > maxCachedBytes }
	if full() { // make room: every expired answer first, then any
		for k2, e := range rc.m {
			if !now.Before(e.expires) {
				rc.drop(k2, e)
			}
		}
		for k2, e := range rc.m {
			if !full() {
				break
			}
			rc.drop(k2, e)
		}
	}
	rc.m[k] = cachedResult{raw: raw, expires: now.Add(ttl), size: size}
	rc.bytes += size
}

func (rc *resultCache) drop(k cacheKey, e cachedResult) {
	delete(rc.m, k)
	rc.bytes -= e.size
}

// forget drops every answer of method, or only the one for arg when arg
// is not empty.
func (rc *resultCache) forget(method, arg string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.epoch++
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
	rc.epoch++
	clear(rc.m)
	rc.bytes = 0
}

// cachedCall is Call for a cacheable request: served from the cache while
// fresh, otherwise sent, and its answer kept for as long as its ttlMs says.
func (c *Conn) cachedCall(ctx context.Context, method, arg string, params, result any, opts ...CallOption) error {
	_, err := c.cachedCallSized(ctx, method, arg, params, result, opts...)
	return err
}

// cachedCallSized is cachedCall, and says how many bytes the result took.
func (c *Conn) cachedCallSized(ctx context.Context, method, arg string, params, result any, opts ...CallOption) (int, error) {
	k := cacheKey{method, arg}
	if raw, ok := c.results.get(k); ok {
		return len(raw), decodeResult(method, callResult{raw: raw}, result)
	}
	// The answer's own bytes (the transport gave them up): decoded once,
	// and kept as they are when the result may be cached.
	epoch := c.results.at()
	var retried bool
	raw, err := c.callRaw(ctx, method, params, append(opts, func(co *callOptions) { co.retried = &retried })...)
	if err != nil {
		return 0, err
	}
	if err := decodeResult(method, callResult{raw: raw}, result); err != nil {
		return 0, err
	}
	// The answer to a retry with the server's requestState or the host's
	// answers depends on them, which the key leaves out: it is not kept.
	if f, ok := result.(interface{ Freshness() time.Duration }); ok && !retried {
		c.results.put(k, raw, f.Freshness(), epoch)
	}
	return len(raw), nil
}

// invalidate drops what a change notification says is stale: cached
// results, and which tools are safe to repeat.
func (c *Conn) invalidate(method string, params json.RawMessage) {
	switch method {
	case "notifications/tools/list_changed":
		c.results.forget("tools/list", "")
		c.mu.Lock()
		c.tools.forgetSafety() // toolnotes.go
		c.mu.Unlock()
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
