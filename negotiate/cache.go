package negotiate

import (
	"sync"
	"time"
)

// DefaultCacheTTL is how long a Cache remembers an outcome when NewCache
// is given no TTL.
const DefaultCacheTTL = time.Hour

// Cache remembers which transport each URL turned out to speak, so that a
// server known to be legacy is not probed with a POST again. It is safe for
// concurrent use; share one across Dials. The zero value is not usable:
// make one with NewCache.
type Cache struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[string]cacheEntry
}

type cacheEntry struct {
	transport string
	expires   time.Time
}

// NewCache returns an empty in-memory cache whose entries live for ttl
// (DefaultCacheTTL when ttl <= 0).
func NewCache(ttl time.Duration) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &Cache{ttl: ttl, now: time.Now, m: make(map[string]cacheEntry)}
}

// Lookup returns the transport last negotiated for url, if still fresh.
func (c *Cache) Lookup(url string) (transport string, ok bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[url]
	if !ok {
		return "", false
	}
	if c.now().After(e.expires) {
		delete(c.m, url)
		return "", false
	}
	return e.transport, true
}

// Store records that url speaks transport.
func (c *Cache) Store(url, transport string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.m[url] = cacheEntry{transport: transport, expires: c.now().Add(c.ttl)}
	c.mu.Unlock()
}

// Forget drops what is known about url.
func (c *Cache) Forget(url string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.m, url)
	c.mu.Unlock()
}
