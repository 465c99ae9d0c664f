package negotiate

import (
	"context"
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
)

// maxEarlyMessages bounds what the ladder keeps of the messages a server
// sends before it answers the opening request (notifications, log records):
// past it they are dropped, so that a server cannot grow the client's
// memory by talking instead of answering.
const maxEarlyMessages = 256

// pump reads a transport's Recv on one goroutine for the ladder, which must
// be able to stop waiting (a probe's timeout) without closing the transport
// or leaving a second reader behind. When the ladder is done, the transport
// is handed on wrapped (handOff): the wrapper's Recv first returns what the
// pump still holds, then reads the transport itself.
type pump struct {
	t    jsonrpc.Transport
	ch   chan received // one receive at a time, from the goroutine
	stop chan struct{} // closed by handOff: receive no more
	done chan struct{} // closed when the goroutine is gone
	busy bool          // the goroutine runs (a Recv is outstanding)
}

type received struct {
	m   *jsonrpc.Message
	err error
}

func newPump(t jsonrpc.Transport) *pump {
	return &pump{t: t, ch: make(chan received, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// start runs the goroutine once.
func (p *pump) start() {
	if p.busy {
		return
	}
	p.busy = true
	go func() {
		defer close(p.done)
		for {
			m, err := p.t.Recv()
			p.ch <- received{m, err} // buffered: the ladder or the wrapper takes it
			if err != nil {
				return
			}
			select {
			case <-p.stop:
				return
			default:
			}
		}
	}()
}

// await reads until the response to id arrives, keeping up to
// maxEarlyMessages other messages for the caller. It gives up when ctx ends,
// leaving the transport open and the pump running.
func (p *pump) await(ctx context.Context, id jsonrpc.ID, early *[]*jsonrpc.Message) (*jsonrpc.Message, error) {
	p.start()
	for {
		select {
		case r := <-p.ch:
			if r.err != nil {
				return nil, r.err
			}
			if r.m.IsResponse() && r.m.ID == id {
				return r.m, nil
			}
			if len(*early) < maxEarlyMessages {
				*early = append(*early, r.m)
			}
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// abandon closes the transport after a failed attempt and waits for the
// goroutine, taking whatever it still delivers.
func (p *pump) abandon() {
	p.t.Close()
	if !p.busy {
		return
	}
	for {
		select {
		case <-p.ch:
		case <-p.done:
			return
		}
	}
}

// handOff returns the transport for the protocol layer: its Recv yields
// early first, then whatever the pump's goroutine still receives, then
// reads the transport directly.
func (p *pump) handOff(early []*jsonrpc.Message) jsonrpc.Transport {
	close(p.stop)
	if !p.busy && len(early) == 0 {
		return p.t
	}
	return &handedOff{Transport: p.t, p: p, early: early}
}

// handedOff is a transport whose first messages come from the ladder.
type handedOff struct {
	jsonrpc.Transport
	p     *pump
	mu    sync.Mutex
	early []*jsonrpc.Message
	own   bool // the pump is drained: read the transport itself
}

func (h *handedOff) Recv() (*jsonrpc.Message, error) {
	h.mu.Lock()
	if len(h.early) > 0 {
		m := h.early[0]
		h.early = h.early[1:]
		h.mu.Unlock()
		return m, nil
	}
	own := h.own
	h.mu.Unlock()
	if own {
		return h.Transport.Recv()
	}
	if h.p.busy {
		select {
		case r := <-h.p.ch:
			return r.m, r.err
		case <-h.p.done:
			// The goroutine is gone; what it received last may still be
			// waiting in the channel.
			select {
			case r := <-h.p.ch:
				return r.m, r.err
			default:
			}
		}
	}
	h.mu.Lock()
	h.own = true
	h.mu.Unlock()
	return h.Transport.Recv()
}

// Shutdown passes a bounded close on to the transport.
func (h *handedOff) Shutdown(ctx context.Context) error { return jsonrpc.Shutdown(ctx, h.Transport) }
