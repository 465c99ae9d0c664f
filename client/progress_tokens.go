package client

import (
	"sync"
	"sync/atomic"
)

// progressTokens routes the server's notifications/progress: the calls
// that asked for progress, by the token each was issued (one per call,
// through every attempt, input round and the task it may become). A call
// removes its entry when it ends, so the table holds no more than the
// calls in flight that want progress.
// Its lock is a leaf: nothing else is locked while it is held.
type progressTokens struct {
	next  atomic.Int64
	mu    sync.Mutex
	calls map[int64]*call
}

func newProgressTokens() progressTokens {
	return progressTokens{calls: make(map[int64]*call)}
}

// issue returns a token no other call of the Conn's has.
func (t *progressTokens) issue() int64 { return t.next.Add(1) }

// watch routes progress for token to cl until the func it returns is
// called.
func (t *progressTokens) watch(token int64, cl *call) (unwatch func()) {
	t.mu.Lock()
	t.calls[token] = cl
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.calls, token)
		t.mu.Unlock()
	}
}

// lookup returns the call token was issued to, while it runs (nil: none).
func (t *progressTokens) lookup(token int64) *call {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls[token]
}
