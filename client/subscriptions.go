package client

import (
	"maps"
	"slices"
	"sync"
)

// subscriptions are the URIs of the resources the host subscribed to,
// which a new session or listen stream restores. Each is one the host
// named with Subscribe; Unsubscribe, or a Subscribe that failed, removes
// it.
// Its lock is a leaf: nothing else is locked while it is held.
type subscriptions struct {
	mu   sync.Mutex
	uris map[string]bool
}

func newSubscriptions() subscriptions {
	return subscriptions{uris: make(map[string]bool)}
}

// add enters uri and reports whether it was there already.
func (s *subscriptions) add(uri string) (had bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	had = s.uris[uri]
	s.uris[uri] = true
	return had
}

// remove forgets uri.
func (s *subscriptions) remove(uri string) {
	s.mu.Lock()
	delete(s.uris, uri)
	s.mu.Unlock()
}

// sorted returns the URIs, sorted (nil for none).
func (s *subscriptions) sorted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.uris) == 0 {
		return nil
	}
	uris := slices.Collect(maps.Keys(s.uris))
	slices.Sort(uris)
	return uris
}
