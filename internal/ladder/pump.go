package ladder

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// pump reads a transport's Recv on one goroutine for the ladder, from
// before the first request is sent until the transport is handed on. It
// must read while a request is being sent: a transport whose Send returns
// only once the answer is queued (Streamable HTTP, with its bounded queue)
// would otherwise wait for a reader that comes after it. It must also let
// the ladder stop waiting (a probe's timeout) without closing the
// transport or leaving a second reader behind. What it reads besides the
// awaited answer is kept, within the bounds of early, and handed on first.
type pump struct {
	t    jsonrpc.Transport
	done chan struct{} // closed when the goroutine is gone

	mu      sync.Mutex
	want    jsonrpc.ID            // the id awaited; zero for none
	answer  chan *jsonrpc.Message // the awaited answer, once
	lateID  jsonrpc.ID            // a request given up on (giveUp); zero for none
	late    chan *jsonrpc.Message // its answer, should it come after all
	early   early                 // messages for the protocol layer
	err     error                 // why Recv failed for good (or early overflowed)
	failed  chan struct{}         // closed with err
	stopped bool                  // handed off: the goroutine ends after its current Recv
	last    chan received         // what it received after the hand-off
}

type received struct {
	m   *jsonrpc.Message
	err error
}

func newPump(t jsonrpc.Transport, log *slog.Logger) *pump {
	p := &pump{t: t, done: make(chan struct{}), failed: make(chan struct{}), last: make(chan received, 1)}
	p.early.log = log
	go p.run()
	return p
}

func (p *pump) run() {
	defer close(p.done)
	for {
		m, err := p.t.Recv()
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			if !errors.Is(err, jsonrpc.ErrInterrupted) {
				p.last <- received{m, err}
			}
			return
		}
		switch {
		case errors.Is(err, jsonrpc.ErrInterrupted):
			// Not from handOff (which sets stopped first): read on.
		case err != nil:
			p.fail(err)
		case !p.want.IsZero() && m.IsResponse() && m.ID == p.want:
			p.want = jsonrpc.ID{}
			p.answer <- m // buffered: one answer per expect
		case !p.lateID.IsZero() && m.IsResponse() && m.ID == p.lateID:
			p.lateID = jsonrpc.ID{}
			p.late <- m // the answer channel of its expect: still empty
		default:
			if aerr := p.early.add(m); aerr != nil {
				p.fail(aerr)
			}
		}
		stop := p.err != nil
		p.mu.Unlock()
		if stop {
			return
		}
	}
}

// fail records why the pump stopped; p.mu is held.
func (p *pump) fail(err error) {
	if p.err == nil {
		p.err = err
		close(p.failed)
	}
}

// expect says the answer to id is awaited; call it before sending the
// request.
func (p *pump) expect(id jsonrpc.ID) <-chan *jsonrpc.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want = id
	p.answer = make(chan *jsonrpc.Message, 1)
	return p.answer
}

// await waits for the answer expect announced. It gives up when ctx ends,
// leaving the transport open and the pump running.
func (p *pump) await(ctx context.Context, answer <-chan *jsonrpc.Message) (*jsonrpc.Message, error) {
	select {
	case m := <-answer:
		return m, nil
	case <-p.failed:
		select {
		case m := <-answer: // it came just before the failure
			return m, nil
		default:
		}
		return nil, p.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// giveUp sets the awaited answer aside: the ladder stopped waiting for it
// (a probe's timeout), but it may still come, and still tell something;
// lateAnswer returns it. An answer already received is kept too.
func (p *pump) giveUp() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lateID, p.late = p.want, p.answer
	p.want = jsonrpc.ID{}
}

// lateAnswer returns the answer set aside by giveUp, waiting for it at most
// wait (not at all when wait is 0); nil when it has not come.
func (p *pump) lateAnswer(ctx context.Context, wait time.Duration) *jsonrpc.Message {
	p.mu.Lock()
	late := p.late
	p.mu.Unlock()
	if late == nil {
		return nil
	}
	select {
	case m := <-late:
		return m
	default:
	}
	if wait <= 0 {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case m := <-late:
		return m
	case <-timer.C:
	case <-ctx.Done():
	case <-p.failed:
	}
	return nil
}

// dropped is how many notifications early left out.
func (p *pump) dropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.early.dropped
}

// abandon closes the transport after a failed attempt and waits for the
// goroutine.
func (p *pump) abandon() {
	p.t.Close()
	<-p.done
}

// handOff returns the transport for the protocol layer: its Recv yields
// the kept messages first, then whatever the goroutine still receives,
// then reads the transport itself. A transport that can be woken (a
// jsonrpc.RecvInterrupter) is, so that the goroutine ends now rather than
// at the server's next message.
func (p *pump) handOff() jsonrpc.Transport {
	p.mu.Lock()
	p.stopped = true
	msgs := p.early.msgs
	p.early.msgs = nil
	err := p.err
	p.mu.Unlock()
	if err == nil {
		jsonrpc.InterruptRecv(p.t)
	}
	return &handedOff{Transport: p.t, p: p, early: msgs, err: err}
}

// handedOff is a transport whose first messages come from the ladder.
type handedOff struct {
	jsonrpc.Transport
	p     *pump
	mu    sync.Mutex
	early []*jsonrpc.Message
	err   error // the pump's terminal error, reported after early
	own   bool  // the pump is drained: read the transport itself
	// take is the protocol layer's AnswerTaker function, held back until
	// Recv reads the transport itself (live): before that, a response
	// handed over at once could overtake the messages the ladder kept or
	// the pump's last one, which the protocol layer has not handled yet.
	take func(*jsonrpc.Message) bool
	live atomic.Bool
}

// Unwrap returns the transport the ladder handed off, for what only it
// can tell (a Streamable HTTP session's id).
func (h *handedOff) Unwrap() jsonrpc.Transport { return h.Transport }

func (h *handedOff) Recv() (*jsonrpc.Message, error) {
	h.mu.Lock()
	if len(h.early) > 0 {
		m := h.early[0]
		h.early[0] = nil
		h.early = h.early[1:]
		h.mu.Unlock()
		return m, nil
	}
	if h.err != nil {
		err := h.err
		h.mu.Unlock()
		return nil, err
	}
	own := h.own
	h.mu.Unlock()
	if own {
		return h.recvOwn()
	}
	// The goroutine's last receive, if it got one after the hand-off.
	var last received
	got := false
	select {
	case last = <-h.p.last:
		got = true
	case <-h.p.done:
		select {
		case last = <-h.p.last:
			got = true
		default:
		}
	}
	h.mu.Lock()
	h.own = true
	h.p, h.early = nil, nil // done with: an idle Conn keeps neither
	h.mu.Unlock()
	if got {
		return last.m, last.err
	}
	return h.recvOwn()
}

// recvOwn reads the transport itself, and passes the take function held
// back on to it the first time: every message received before has been
// handled by now, since the protocol layer calls Recv only then. A wake-up
// meant for the pump that came after its goroutine had already returned
// with a message is not an end: read on.
func (h *handedOff) recvOwn() (*jsonrpc.Message, error) {
	if !h.live.Load() {
		h.mu.Lock()
		take := h.take
		h.take = nil
		h.live.Store(true)
		h.mu.Unlock()
		if take != nil {
			jsonrpc.TakeAnswers(h.Transport, take)
		}
	}
	for {
		m, err := h.Transport.Recv()
		if !errors.Is(err, jsonrpc.ErrInterrupted) {
			return m, err
		}
	}
}

// Shutdown passes a bounded close on to the transport, when it has one.
func (h *handedOff) Shutdown(ctx context.Context) error {
	return jsonrpc.Shutdown(ctx, h.Transport)
}

// OpenStream passes the request for a stream on to the transport.
func (h *handedOff) OpenStream() { jsonrpc.OpenStream(h.Transport) }

// TakeAnswers passes the protocol layer's take function on to the
// transport once Recv reads the transport itself (see recvOwn). Responses
// the ladder kept are answers to its own requests, which no call waits for.
func (h *handedOff) TakeAnswers(take func(*jsonrpc.Message) bool) {
	h.mu.Lock()
	if !h.live.Load() {
		h.take = take
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	jsonrpc.TakeAnswers(h.Transport, take)
}
