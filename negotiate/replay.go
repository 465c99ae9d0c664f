package negotiate

import (
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
)

// replay is a transport whose Recv first returns the messages that arrived
// during the negotiation, before the initialize response.
type replay struct {
	jsonrpc.Transport
	mu   sync.Mutex
	msgs []*jsonrpc.Message
}

func (r *replay) Recv() (*jsonrpc.Message, error) {
	r.mu.Lock()
	if len(r.msgs) > 0 {
		m := r.msgs[0]
		r.msgs = r.msgs[1:]
		r.mu.Unlock()
		return m, nil
	}
	r.mu.Unlock()
	return r.Transport.Recv()
}
