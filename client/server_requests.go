package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// maxServing bounds the server's requests the Conn answers at once: one
// more is refused at once (-32603), as is one past maxServingBytes, and one
// whose id is already in progress (-32600), so that a server cannot make
// the Conn start goroutines, or grow its table of requests in progress,
// without bound.
// Refusals are bounded the same way; past that, a request is dropped
// (logged) and the server's own timeout ends it.
const maxServing = 64

// maxServingBytes bounds the params of the server's requests that the Conn
// answers at once, which their handlers hold: one that would take them
// past it is refused as one past maxServing is, unless none is being
// answered (a request is always served alone; the transport's message
// limit bounds it). Without it, maxServing requests of the largest message
// a transport takes (64 MiB) could hold 4 GiB. (A variable only so that
// its test need not move tens of MiB through the race detector.)
var maxServingBytes = 16 << 20

// serve answers a request from the server in its own goroutine: ping by
// itself, roots/sampling/elicitation through the host's handlers, anything
// else with -32601.
func (c *Conn) serve(msg *jsonrpc.Message) {
	key := msg.ID.Raw()
	size := len(msg.Params)
	c.mu.Lock() // so that wg.Add comes before Close waits
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	verdict, why := c.served.admit(key, size, cancel)
	if verdict != serveDropped {
		c.wg.Add(1)
	}
	c.mu.Unlock()
	if verdict != serveAdmitted {
		cancel()
		c.refuse(msg, verdict, why)
		return
	}
	go func() {
		defer c.wg.Done()
		gid := goid()
		c.served.running(gid)
		c.answering.Add(1)
		result, err := c.answer(ctx, msg)
		if c.hostAnswers(msg.Method) {
			// The calls' waits start over from the host's answer (a
			// server's call may wait for it); a ping, or a request the
			// Conn refuses, is no sign of life of any call.
			c.touchPending()
		}
		c.answering.Add(-1)
		resp := &jsonrpc.Message{ID: msg.ID}
		if err != nil {
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) {
				rpcErr = jsonrpc.NewError(jsonrpc.CodeInternalError, err.Error())
			}
			resp.Error = rpcErr
		} else if resp.Result, err = json.Marshal(result); err != nil {
			resp.Result = nil
			resp.Error = jsonrpc.NewError(jsonrpc.CodeInternalError, "encoding result: "+err.Error())
		}
		cancelled := ctx.Err() != nil && c.ctx.Err() == nil
		// The request is done, and its id free again, before the answer
		// leaves: the server may reuse the id as soon as it has the answer.
		c.served.done(key, size, gid)
		cancel()
		if cancelled {
			return // the server cancelled it: no answer is expected
		}
		c.reply(msg, resp)
	}()
}

// refuse answers a server request the Conn will not serve with why, in
// the background (verdict serveRefused: its wg place is taken), or logs that
// it dropped it (verdict serveDropped). The refusal keeps the request's method
// and id only, not its params.
func (c *Conn) refuse(msg *jsonrpc.Message, verdict admission, why *jsonrpc.Error) {
	if verdict == serveDropped {
		c.opts.logger.Warn("anymcp: dropped a request of the server's: too many in progress", "method", msg.Method, "id", msg.ID.String())
		return
	}
	req := &jsonrpc.Message{ID: msg.ID, Method: msg.Method}
	resp := &jsonrpc.Message{ID: msg.ID, Error: why}
	c.opts.logger.Debug("anymcp: refused a request of the server's", "method", msg.Method, "id", msg.ID.String(), "reason", why.Message)
	go func() {
		defer c.wg.Done()
		defer c.served.refusalSent()
		c.reply(req, resp)
	}()
}

// reply sends resp, the answer to the server's request msg, bounded in
// time; a failure is only logged, as the server has no one else to ask.
func (c *Conn) reply(msg, resp *jsonrpc.Message) {
	sctx, scancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer scancel()
	if err := c.t.Send(sctx, resp); err != nil {
		level := slog.LevelWarn
		if c.ctx.Err() != nil { // closed meanwhile: the server has what it needed, or no use for it
			level = slog.LevelDebug
		}
		c.opts.logger.Log(context.Background(), level, "anymcp: could not answer the server's request", "method", msg.Method, "id", msg.ID.String(), "err", err)
	}
}

// answer runs the handler of the server's request msg. A handler that
// panics (on params it did not expect, say) is answered as an internal
// error, and the panic logged with its stack: a server's request must not
// end the host's process.
func (c *Conn) answer(ctx context.Context, msg *jsonrpc.Message) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.opts.logger.Error("anymcp: a handler of the host panicked answering the server's request",
				"method", msg.Method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			result, err = nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the client failed to answer "+msg.Method)
		}
	}()
	switch msg.Method {
	case "ping":
		return struct{}{}, nil
	case "roots/list":
		if c.opts.roots == nil {
			break
		}
		roots, err := c.opts.roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []mcp.Root{}
		}
		return &mcp.ListRootsResult{Roots: roots}, nil
	case "sampling/createMessage":
		if c.opts.sampling == nil {
			break
		}
		var p mcp.CreateMessageParams
		if err := decodeParams(msg.Params, &p); err != nil {
			return nil, err
		}
		return c.opts.sampling(ctx, &p)
	case "elicitation/create":
		var p mcp.ElicitParams
		if err := decodeParams(msg.Params, &p); err != nil {
			return nil, err
		}
		h := c.opts.elicitForm
		if p.Mode == mcp.ElicitModeURL {
			h = c.opts.elicitURL
		}
		if h == nil {
			if c.opts.elicitForm == nil && c.opts.elicitURL == nil {
				break
			}
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "elicitation mode "+p.Mode+" is not supported by this client")
		}
		return h(ctx, &p)
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+msg.Method)
}

// hostAnswers reports whether a request of method is answered by a
// handler of the host's.
func (c *Conn) hostAnswers(method string) bool {
	o := c.opts
	switch method {
	case "roots/list":
		return o.roots != nil
	case "sampling/createMessage":
		return o.sampling != nil
	case "elicitation/create":
		return o.elicitForm != nil || o.elicitURL != nil
	}
	return false
}

func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params missing")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+err.Error())
	}
	return nil
}

// NotifyRootsChanged tells an initialize-era server that the host's roots changed.
// A stateless server asks for the roots with each request that needs them, so
// there is nothing to tell it: the call does nothing.
func (c *Conn) NotifyRootsChanged(ctx context.Context) error {
	if !c.dialect().rootsChanged {
		return nil
	}
	return c.Notify(ctx, "notifications/roots/list_changed", nil)
}

// inHandler reports whether the caller runs on one of the Conn's own
// goroutines that run host code: the event queue, or a server request's
// handler. The goroutine id (a stack trace) is read only when one of them
// runs host code.
func (c *Conn) inHandler() bool {
	if !c.events.running.Load() && c.served.idle() {
		return false
	}
	g := goid()
	if g == c.events.gid.Load() {
		return true
	}
	return c.served.isHandler(g)
}

// touchPending restarts the request timeout of every call waiting for an
// answer.
func (c *Conn) touchPending() {
	for _, t := range c.pending.timings() {
		c.clock.touch(t)
	}
}
