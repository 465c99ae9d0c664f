package serve

import (
	"maps"
	"net/http"
	"sync"
)

// HitCounter counts HTTP requests by "METHOD /path". Its zero value is
// ready.
type HitCounter struct {
	mu   sync.Mutex
	hits map[string]int
}

// Wrap returns next behind a counter of its requests.
func (c *HitCounter) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		if c.hits == nil {
			c.hits = make(map[string]int)
		}
		c.hits[r.Method+" "+r.URL.Path]++
		c.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// Snapshot returns a copy of the counts.
func (c *HitCounter) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.hits)
	if out == nil {
		out = make(map[string]int)
	}
	return out
}
