package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// A pending call is an upstream call of a stateless client's that is
// waiting for input: the upstream asked (a server request of an
// initialize-era upstream, an input_required round of a stateless one),
// the bridge answered the client with an input_required round, and the
// call waits, in this process, for the client's retry to bring the
// answers. Its id is in the sealed requestState, with this process's
// ReplicaID as its owner.
type pendingCall struct {
	id     string
	method string
	name   string
	cancel context.CancelFunc

	events chan *ask     // the upstream's questions, in order
	result chan outcome  // the call's end (buffered 1)
	done   chan struct{} // closed when the call ended

	mu       sync.Mutex
	open     map[string]*ask // asked and not yet answered, by key
	seq      int
	limit    int
	busy     bool        // a request drives the call now
	timer    *time.Timer // gives the call up when the client does not come back
	expired  bool        // the timer fired
	finished bool        // the call ended; its outcome waits in result
	notify   notifier    // where the call's progress goes now
}

// ask is one question of the upstream's, waiting for the client's answer.
type ask struct {
	key    string
	method string
	params json.RawMessage
	answer chan json.RawMessage // buffered 1
}

type outcome struct {
	raw json.RawMessage
	err error
}

func newPendingCall(method, name string, cancel context.CancelFunc) *pendingCall {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &pendingCall{
		id: hex.EncodeToString(b[:]), method: method, name: name, cancel: cancel,
		events: make(chan *ask, maxAsks), result: make(chan outcome, 1), done: make(chan struct{}),
		limit: maxAsks,
	}
}

// maxAsks bounds the questions one call may have open: the upstream cannot
// make the bridge hold more.
const maxAsks = 64

// ask puts a question of the upstream's to the client and waits for the
// answer (asker).
func (p *pendingCall) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.mu.Lock()
	if len(p.open) >= p.limit {
		p.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "too many questions open for one call")
	}
	p.seq++
	kind, _, _ := strings.Cut(method, "/")
	a := &ask{key: kind + "-" + strconv.Itoa(p.seq), method: method, params: params, answer: make(chan json.RawMessage, 1)}
	if p.open == nil {
		p.open = map[string]*ask{} // most calls never ask: made on the first question
	}
	p.open[a.key] = a
	p.mu.Unlock()
	select {
	case p.events <- a:
	default:
		p.forget(a.key)
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "too many questions open for one call")
	}
	select {
	case ans := <-a.answer:
		return ans, nil
	case <-ctx.Done():
		p.forget(a.key)
		return nil, ctx.Err()
	}
}

// resume marks p as being driven by a request; false when another
// request drives it already.
func (p *pendingCall) resume() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy {
		return false
	}
	p.busy = true
	if p.timer != nil {
		p.timer.Stop()
	}
	return true
}

// park leaves p waiting for the client's retry, for at most d. Then the
// call is given up, and drop takes it out of the table once it has
// ended.
func (p *pendingCall) park(d time.Duration, drop func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy = false
	if p.timer != nil {
		p.timer.Stop()
	}
	p.timer = time.AfterFunc(d, func() {
		p.mu.Lock()
		p.expired = true
		ended := p.finished
		p.mu.Unlock()
		p.cancel()
		if ended {
			drop()
		}
	})
}

// finish records the call's end. It reports whether the outcome must
// wait for the client's retry: the call ended while parked, before its
// round's timeout, so the round stays in the table until the retry
// takes the outcome or the timeout drops it. Otherwise a request
// driving the call takes it now, or no one will.
func (p *pendingCall) finish(o outcome) (keep bool) {
	select {
	case p.result <- o:
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished = true
	return !p.busy && !p.expired && p.timer != nil
}

// relay returns the notifier of the call's progress: it goes to whichever
// request drives the call at the time (the first, then each retry).
func (p *pendingCall) relay(first notifier) notifier {
	p.mu.Lock()
	p.notify = first
	p.mu.Unlock()
	return func(method string, params any) {
		p.mu.Lock()
		n := p.notify
		p.mu.Unlock()
		if n != nil {
			n(method, params)
		}
	}
}

func (p *pendingCall) setNotify(n notifier) {
	p.mu.Lock()
	p.notify = n
	p.mu.Unlock()
}

func (p *pendingCall) forget(key string) {
	p.mu.Lock()
	delete(p.open, key)
	p.mu.Unlock()
}

// answer delivers the client's answers; it returns how many questions it
// answered.
func (p *pendingCall) answer(responses map[string]json.RawMessage) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, v := range responses {
		if a, ok := p.open[k]; ok {
			delete(p.open, k)
			a.answer <- v
			n++
		}
	}
	return n
}

// unanswered returns the questions still open.
func (p *pendingCall) unanswered() []*ask {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*ask, 0, len(p.open))
	for _, a := range p.open {
		out = append(out, a)
	}
	return out
}

// roundTable holds the pending calls of this process, bounded.
type roundTable struct {
	mu     sync.Mutex
	calls  map[string]*pendingCall
	max    int
	closed bool
}

func newRoundTable(max int) *roundTable {
	return &roundTable{calls: map[string]*pendingCall{}, max: max}
}

// add registers p; false when the table is full or closed.
func (t *roundTable) add(p *pendingCall) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || len(t.calls) >= t.max {
		return false
	}
	t.calls[p.id] = p
	return true
}

func (t *roundTable) get(id string) *pendingCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls[id]
}

func (t *roundTable) remove(id string) {
	t.mu.Lock()
	delete(t.calls, id)
	t.mu.Unlock()
}

func (t *roundTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

func (t *roundTable) closeAll() {
	t.mu.Lock()
	t.closed = true
	calls := make([]*pendingCall, 0, len(t.calls))
	for _, p := range t.calls {
		calls = append(calls, p)
	}
	t.mu.Unlock()
	for _, p := range calls {
		p.cancel()
	}
}
