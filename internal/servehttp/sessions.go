package servehttp

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// NewSessionID returns a session id: 128 bits from crypto/rand in hex,
// visible ASCII as Mcp-Session-Id (and an HTTP+SSE sessionId) must be.
func NewSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b[:])
}

// Table is a server's session table: at most max sessions, each known
// by its id, and when each was last used so that idle ones can be ended.
// A session is used when it is added and each time Touch names it; a
// table made with lastUsed asks the session itself instead (a session
// with a request in progress can say it is not idle). Removing a session
// from the table does not end it: the caller closes what it removed.
type Table[S any] struct {
	mu       sync.Mutex
	m        map[string]*tableEntry[S]
	max      int
	lastUsed func(S) time.Time
	now      func() time.Time
}

type tableEntry[S any] struct {
	s    S
	last time.Time
}

// NewTable returns a table of at most max sessions (max <= 0: 1024).
// lastUsed, when not nil, tells when a session was last used.
func NewTable[S any](max int, lastUsed func(S) time.Time) *Table[S] {
	if max <= 0 {
		max = 1024
	}
	return &Table[S]{m: map[string]*tableEntry[S]{}, max: max, lastUsed: lastUsed, now: time.Now}
}

func (t *Table[S]) last(e *tableEntry[S]) time.Time {
	if t.lastUsed != nil {
		return t.lastUsed(e.s)
	}
	return e.last
}

// Add adds s under id; false when the table is full or id is taken.
func (t *Table[S]) Add(id string, s S) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, taken := t.m[id]; taken || len(t.m) >= t.max {
		return false
	}
	t.m[id] = &tableEntry[S]{s: s, last: t.now()}
	return true
}

// MakeRoom makes room for one more session when the table is full: it
// removes the session unused for longest, if that is longer than idle,
// and returns it (evicted) for the caller to end. ok is false when the
// table is full of sessions used more recently.
func (t *Table[S]) MakeRoom(idle time.Duration) (evicted S, was, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) < t.max {
		return evicted, false, true
	}
	cutoff := t.now().Add(-idle)
	oldestID := ""
	var oldest time.Time
	for id, e := range t.m {
		if l := t.last(e); l.Before(cutoff) && (oldestID == "" || l.Before(oldest)) {
			oldestID, oldest = id, l
		}
	}
	if oldestID == "" {
		return evicted, false, false
	}
	evicted = t.m[oldestID].s
	delete(t.m, oldestID)
	return evicted, true, true
}

// Get returns the session of id.
func (t *Table[S]) Get(id string) (S, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	if !ok {
		var zero S
		return zero, false
	}
	return e.s, true
}

// Touch records that the session of id is used now.
func (t *Table[S]) Touch(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.m[id]; ok {
		e.last = t.now()
	}
}

// Remove removes the session of id and returns it.
func (t *Table[S]) Remove(id string) (S, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	if !ok {
		var zero S
		return zero, false
	}
	delete(t.m, id)
	return e.s, true
}

// RemoveIf removes the session of id if it is s (compared by match).
func (t *Table[S]) RemoveIf(id string, match func(S) bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.m[id]; ok && match(e.s) {
		delete(t.m, id)
		return true
	}
	return false
}

// Idle removes and returns the sessions last used before cutoff.
func (t *Table[S]) Idle(cutoff time.Time) []S {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []S
	for id, e := range t.m {
		if t.last(e).Before(cutoff) {
			out = append(out, e.s)
			delete(t.m, id)
		}
	}
	return out
}

// Drain removes and returns every session.
func (t *Table[S]) Drain() []S {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]S, 0, len(t.m))
	for _, e := range t.m {
		out = append(out, e.s)
	}
	clear(t.m)
	return out
}

// All returns the sessions, left in the table.
func (t *Table[S]) All() []S {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]S, 0, len(t.m))
	for _, e := range t.m {
		out = append(out, e.s)
	}
	return out
}

// IDs returns the ids of the sessions.
func (t *Table[S]) IDs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.m))
	for id := range t.m {
		out = append(out, id)
	}
	return out
}

// Len returns the number of sessions.
func (t *Table[S]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
