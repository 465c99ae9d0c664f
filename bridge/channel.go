package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// A channel is a client with one connection both ways (stdio, or an
// HTTP+SSE stream with its POST endpoint): everything the bridge sends it
// goes through one bounded queue, and its messages are dispatched here.
// initialize makes it a session; before that, a request carrying revision
// 2026-07-28's _meta is served statelessly.

// queueSink is a bounded queue toward one client. A client that leaves
// QueueLen messages unread is cut off: gone closes, and the transport ends
// the connection.
type queueSink struct {
	q    chan *jsonrpc.Message
	gone chan struct{}
	once sync.Once
}

func newQueueSink(n int) *queueSink {
	return &queueSink{q: make(chan *jsonrpc.Message, n), gone: make(chan struct{})}
}

func (qs *queueSink) cut() { qs.once.Do(func() { close(qs.gone) }) }

func (qs *queueSink) send(m *jsonrpc.Message) bool {
	select {
	case <-qs.gone:
		return false
	default:
	}
	select {
	case qs.q <- m:
		return true
	default:
		qs.cut()
		return false
	}
}

// maxChannelRequests bounds the requests of one channel in progress.
const maxChannelRequests = 64

type channel struct {
	b         *Bridge
	out       *queueSink
	ctx       context.Context
	transport string // client.TransportStdio or client.TransportSSE
	// work is the requests' context (listens' is listens): stop ends it
	// with errInputEnded, endListens ends the listens.
	work       context.Context
	stop       context.CancelCauseFunc
	listens    context.Context
	endListens context.CancelFunc

	mu       sync.Mutex
	sess     *session
	inflight map[string]context.CancelFunc // stateless requests, by raw id
	running  int
	wg       sync.WaitGroup
}

func newChannel(ctx context.Context, b *Bridge, out *queueSink, transport string) *channel {
	c := &channel{b: b, out: out, ctx: ctx, transport: transport, inflight: map[string]context.CancelFunc{}}
	c.work, c.stop = context.WithCancelCause(ctx)
	c.listens, c.endListens = context.WithCancel(ctx)
	return c
}

func (c *channel) session() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

// face describes the channel's requests to an Observer: those of s, its
// session, when it has one. tc is the trace context of the HTTP request
// that carried one (HTTP+SSE).
func (c *channel) face(s *session, tc client.TraceContext) face {
	if s != nil {
		return s.face(c.transport, tc)
	}
	return face{transport: c.transport, httpTrace: tc}
}

// reply sends m, the answer to a request, once ob (the request's
// observation) has ended with it.
func (c *channel) reply(m *jsonrpc.Message, ob *observation) {
	ob.end(m)
	c.out.send(m)
}

// dispatch handles one message of the client's; tc is the trace context
// of the HTTP request that carried it (HTTP+SSE, see Bridge.httpTrace).
func (c *channel) dispatch(msg *jsonrpc.Message, tc client.TraceContext) {
	s := c.session()
	switch {
	case msg.IsResponse():
		if s != nil {
			s.answered(msg)
		}
		return
	case msg.IsNotification():
		if s != nil {
			s.notification(msg)
		} else if msg.Method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(msg.Params, &p) == nil {
				c.mu.Lock()
				if cancel := c.inflight[string(p.RequestID)]; cancel != nil {
					cancel()
				}
				c.mu.Unlock()
			}
		}
		return
	}
	if msg.Method == "initialize" {
		c.initialize(msg, tc)
		return
	}
	c.mu.Lock()
	if c.running >= maxChannelRequests {
		c.mu.Unlock()
		_, ob := c.b.observe(c.ctx, msg, c.face(s, tc))
		c.reply(&jsonrpc.Message{ID: msg.ID, Error: outcomeError("too many requests in progress", jsonrpc.OutcomeNotRun)}, ob)
		return
	}
	c.running++
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			c.running--
			c.mu.Unlock()
		}()
		if s != nil {
			ctx, ob := c.b.observe(c.work, msg, c.face(s, tc))
			resp := s.handle(ctx, msg, c.out)
			if resp == nil {
				ob.end(nil)
				return
			}
			c.reply(c.answer(resp), ob)
			return
		}
		if !isStatelessMessage(msg) {
			_, ob := c.b.observe(c.work, msg, c.face(nil, tc))
			if msg.Method == "ping" {
				c.reply(pong(msg.ID), ob)
				return
			}
			c.reply(&jsonrpc.Message{ID: msg.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "send initialize first, or a request of revision "+mcp.LatestStatelessVersion+" with its _meta")}, ob)
			return
		}
		parent := c.work
		if msg.Method == "subscriptions/listen" {
			parent = c.listens
		}
		ctx, cancel := context.WithCancel(parent)
		key := msg.ID.Raw()
		c.mu.Lock()
		c.inflight[key] = cancel
		c.mu.Unlock()
		notify := func(method string, params any) {
			raw, _ := json.Marshal(params)
			c.out.send(&jsonrpc.Message{Method: method, Params: raw})
		}
		octx, ob := c.b.observe(ctx, msg, face{transport: c.transport, era: mcp.EraStateless, httpTrace: tc})
		var resp *jsonrpc.Message
		if msg.Method == "subscriptions/listen" {
			resp = c.b.listenStdio(octx, msg, c.out)
		} else {
			resp = c.b.serveStateless(octx, msg, nil, notify)
		}
		cancelled := ctx.Err() != nil && parent.Err() == nil // by the client
		c.mu.Lock()
		delete(c.inflight, key)
		c.mu.Unlock()
		cancel()
		if cancelled {
			ob.end(nil)
			return
		}
		c.reply(c.answer(resp), ob)
	}()
}

// pong answers a ping. A ping is the one request a client may send before
// initialize (revision 2025-11-25, basic/lifecycle): it is answered
// before a session exists too, on every face.
func pong(id jsonrpc.ID) *jsonrpc.Message {
	return &jsonrpc.Message{ID: id, Result: json.RawMessage(`{}`)}
}

// isStatelessMessage says whether a request carries revision 2026-07-28's _meta.
func isStatelessMessage(msg *jsonrpc.Message) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &p) == nil {
		_, ok := p.Meta[mcp.MetaProtocolVersion]
		return ok
	}
	return false
}

func (c *channel) initialize(msg *jsonrpc.Message, tc client.TraceContext) {
	s := c.session()
	ctx, ob := c.b.observe(c.ctx, msg, c.face(s, tc))
	refuse := func(e *jsonrpc.Error) { c.reply(&jsonrpc.Message{ID: msg.ID, Error: e}, ob) }
	if s != nil {
		refuse(jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "the session is initialized already"))
		return
	}
	var p mcp.InitializeParams
	if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &p) != nil {
		refuse(jsonrpc.NewError(jsonrpc.CodeInvalidParams, "initialize: params do not decode"))
		return
	}
	if !c.b.sessions.reserve(c.b.o.SessionIdle) {
		refuse(outcomeError("too many sessions", jsonrpc.OutcomeNotRun))
		return
	}
	s, res, err := c.b.newSession(ctx, &p, c.out)
	if err != nil {
		refuse(c.b.rpcError(err))
		return
	}
	if !c.b.sessions.add(s) {
		s.close()
		refuse(outcomeError("too many sessions", jsonrpc.OutcomeNotRun))
		return
	}
	c.mu.Lock()
	c.sess = s
	c.mu.Unlock()
	c.reply(&jsonrpc.Message{ID: msg.ID, Result: res}, ob)
}

// errInputEnded is why the bridge stops a stdio client's requests still
// running EOFGrace after its input ended (the upstream's cancellation
// says so).
var errInputEnded = errors.New("the bridge's client closed its input before the answer came")

// inputEnded is called once the client's input has ended (nothing more is
// dispatched): its listens end at once, since a subscription is no work
// the client waits for. The channel returned is closed once no other
// request runs.
func (c *channel) inputEnded() <-chan struct{} {
	c.endListens()
	idle := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(idle)
	}()
	return idle
}

// answer is resp, unless the request was stopped after the end of the
// input (stop): then an error that says the bridge stopped it, and that it
// may have run (it was sent upstream, then cancelled there).
func (c *channel) answer(resp *jsonrpc.Message) *jsonrpc.Message {
	if resp.Error == nil || !errors.Is(context.Cause(c.work), errInputEnded) {
		return resp
	}
	return &jsonrpc.Message{ID: resp.ID, Error: outcomeError(fmt.Sprintf(
		"the bridge stopped the request: its input ended and no answer came within %s; cancelled upstream, it may have run", c.b.o.EOFGrace), jsonrpc.OutcomeUnknown)}
}

// end waits for the requests in progress and ends the session.
func (c *channel) end() {
	if s := c.session(); s != nil {
		c.b.sessions.remove(s.id)
		s.close()
	}
	c.mu.Lock()
	for _, cancel := range c.inflight {
		cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
	c.stop(context.Canceled)
	c.endListens()
}
