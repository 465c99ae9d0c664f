package oauthserver

import (
	"maps"
	"net/http"
	"sync"
)

// hitCounter counts HTTP requests by "METHOD /path".
type hitCounter struct {
	mu   sync.Mutex
	hits map[string]int
}

// wrap returns next behind a counter of its requests.
func (c *hitCounter) wrap(next http.Handler) http.Handler {
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

// snapshot returns a copy of the counts.
func (c *hitCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.hits)
	if out == nil {
		out = make(map[string]int)
	}
	return out
}
