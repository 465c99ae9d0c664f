package client

import "sync"

// pendingTable is the requests of the Conn's that wait for their answers,
// by request id. Each entry is a caller that waits (a call's attempt, a
// listen stream, a request sent aside), which removes it when it stops
// waiting, so the table holds no more than the callers waiting at once.
//
// Invariant: once closed (the Conn is done), no call joins the table (add
// tells the caller why the Conn is done instead); only a request sent
// aside while the Conn closes does (put), as Close lets those go out.
// Its lock is a leaf: nothing else is locked while it is held.
type pendingTable struct {
	mu     sync.Mutex
	calls  map[int64]*call
	closed error // why the Conn is done; nil while it lives
}

func newPendingTable() pendingTable {
	return pendingTable{calls: make(map[int64]*call)}
}

// add enters cl as waiting for the answer to request id, unless the table
// is closed: then it returns why.
func (p *pendingTable) add(id int64, cl *call) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed != nil {
		return p.closed
	}
	p.calls[id] = cl
	return nil
}

// put enters cl as waiting for the answer to request id, closed or not:
// for a request sent aside (requestAside), which a closing Conn still
// sends.
func (p *pendingTable) put(id int64, cl *call) {
	p.mu.Lock()
	p.calls[id] = cl
	p.mu.Unlock()
}

// take removes and returns the call waiting for the answer to id (nil:
// none).
func (p *pendingTable) take(id int64) *call {
	p.mu.Lock()
	defer p.mu.Unlock()
	cl := p.calls[id]
	if cl != nil {
		delete(p.calls, id)
	}
	return cl
}

// get returns the call waiting for the answer to id (nil: none), leaving
// it in the table.
func (p *pendingTable) get(id int64) *call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[id]
}

// remove forgets request id.
func (p *pendingTable) remove(id int64) {
	p.mu.Lock()
	delete(p.calls, id)
	p.mu.Unlock()
}

// len is how many calls wait.
func (p *pendingTable) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

// timings returns the timeouts of the calls that wait.
func (p *pendingTable) timings() []*timeouts {
	p.mu.Lock()
	defer p.mu.Unlock()
	ts := make([]*timeouts, 0, len(p.calls))
	for _, cl := range p.calls {
		ts = append(ts, cl.timing)
	}
	return ts
}

// close makes add refuse with err from now on (the first err stays).
func (p *pendingTable) close(err error) {
	p.mu.Lock()
	if p.closed == nil {
		p.closed = err
	}
	p.mu.Unlock()
}

// drain removes and returns every call but those keep (nil: none) keeps.
func (p *pendingTable) drain(keep func(id int64, cl *call) bool) []*call {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*call
	for id, cl := range p.calls {
		if keep == nil || !keep(id, cl) {
			out = append(out, cl)
			delete(p.calls, id)
		}
	}
	return out
}
