package negotiate

import (
	"sync"
	"time"

	"github.com/anymcp/anymcp/mcp"
)

// DefaultCacheTTL is how long a Cache keeps an outcome when NewCache is
// given no TTL.
const DefaultCacheTTL = time.Hour

// MaxCacheEntries bounds a Cache: past it, storing a new server's outcome
// first drops the expired entries, then, if still full, the one that would
// expire first. (A gateway's shared Cache sees many servers.)
const MaxCacheEntries = 4096

// Cache remembers, per server (a URL, or a stdio command line), what the
// ladder found: its era and, for a URL, its transport. The era is a
// property of the server, so the next connection starts with what worked,
// and a server known to be initialize-era costs no stateless probe (nor, for HTTP+SSE,
// the POST that fails before the GET). Should a cached outcome stop
// working, the ladder runs in full and the entry is replaced. A Cache is
// safe for concurrent use and may be shared by any number of Dials; a nil
// *Cache caches nothing.
type Cache struct {
	ttl time.Duration

	mu sync.Mutex
	m  map[string]entry
}

// entry is one cached outcome.
type entry struct {
	Transport string  // StreamableHTTP, SSE, Stdio, or the name of a host's transport
	Era       mcp.Era // the era the server spoke
	expires   time.Time
}

// NewCache returns an empty cache whose entries live for ttl (DefaultCacheTTL
// when ttl <= 0).
func NewCache(ttl time.Duration) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &Cache{ttl: ttl, m: make(map[string]entry)}
}

// Lookup returns the transport and era cached for key, if any and still
// fresh.
func (c *Cache) Lookup(key string) (transport string, era mcp.Era, ok bool) {
	e, ok := c.lookup(key)
	return e.Transport, e.Era, ok
}

func (c *Cache) lookup(key string) (entry, bool) {
	if c == nil {
		return entry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return entry{}, false
	}
	if time.Now().After(e.expires) {
		delete(c.m, key)
		return entry{}, false
	}
	return e, true
}

// Store records that key spoke era over transport.
func (c *Cache) Store(key, transport string, era mcp.Era) {
	c.store(key, entry{Transport: transport, Era: era})
}

func (c *Cache) store(key string, e entry) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if _, known := c.m[key]; !known && len(c.m) >= MaxCacheEntries {
		c.makeRoom(now)
	}
	e.expires = now.Add(c.ttl)
	c.m[key] = e
}

// makeRoom drops the expired entries, or else the one that expires first.
// c.mu is held.
func (c *Cache) makeRoom(now time.Time) {
	var soonest string
	for k, e := range c.m {
		if now.After(e.expires) {
			delete(c.m, k)
		} else if soonest == "" || e.expires.Before(c.m[soonest].expires) {
			soonest = k
		}
	}
	if len(c.m) >= MaxCacheEntries {
		delete(c.m, soonest)
	}
}

// Forget drops what is cached for key.
func (c *Cache) Forget(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}
