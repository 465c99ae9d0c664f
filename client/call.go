package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/internal/reqmeta"
	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/reconnect"
)

// call is one request waiting for its answer (pending, by id), or the
// progress receiver of a call (tokens, by progress token: progress_tokens.go).
type call struct {
	method   string
	ch       chan callResult // buffered: finish never blocks
	finished atomic.Bool

	recovery bool                     // sent by a re-initialization: a lost session does not fail it
	progress func(mcp.ProgressParams) // WithProgress's, on a progress receiver
	timing   *timeouts                // the call's timeouts on the Conn's clock; nil: none
}

type callResult struct {
	raw json.RawMessage
	err error
}

// finish delivers the call's outcome; only the first one counts.
func (cl *call) finish(raw json.RawMessage, err error) {
	if cl.finished.CompareAndSwap(false, true) {
		cl.ch <- callResult{raw, err}
	}
}

// Call sends the request method with params and decodes the result into
// result. params may be any value that encodes to a JSON object, or nil.
// result is a pointer, or nil to discard the result. Call returns when the
// answer arrives, when ctx is done, or when the call's timeout runs out. In
// the last two cases the server is sent notifications/cancelled. A JSON-RPC
// error from the server is a *jsonrpc.Error (use errors.As).
//
// A call gets exactly one answer: its result, or an error. The error says
// whether the request may have run (errors.Is(err, jsonrpc.ErrOutcomeUnknown)).
// A request refused unrun because its session expired is sent again once the
// Conn has re-initialized. It is sent again on each new session that refuses
// it. That stops when the reconnect policy's attempts (one per refusing
// session) or budget are spent, or when 5 new sessions in a row have answered
// no request. A request whose outcome is unknown is sent again only with
// WithReplay, and only when it is safe to repeat.
func (c *Conn) Call(ctx context.Context, method string, params, result any, opts ...CallOption) error {
	raw, err := c.callRaw(ctx, method, params, opts...)
	if err != nil {
		return err
	}
	return decodeResult(method, callResult{raw: raw}, result)
}

// callRaw is Call up to the answer: it returns the result as the server
// sent it, not yet checked (see jsonrpc.DecodeOwned) — the caller decodes
// it with decodeResult. A tools/call goes through callTool (taskcall.go),
// which asks for a task when the tool must run as one.
func (c *Conn) callRaw(ctx context.Context, method string, params any, opts ...CallOption) (raw json.RawMessage, err error) {
	ctx, ob := c.observe(ctx, method, params)
	if method == "tools/call" {
		raw, err = c.callTool(ctx, ob, params, opts)
	} else {
		raw, err = c.send(ctx, ob, method, params, opts...)
	}
	ob.end(raw, err)
	return raw, err
}

// send is callRaw for any request: it sends it, through lost sessions,
// lost answers and input rounds, and waits for the task it may become;
// ob (nil: none) is told what happens on the way.
func (c *Conn) send(ctx context.Context, ob *observed, method string, params any, opts ...CallOption) (json.RawMessage, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding params: %w", method, err)
	}
	co := callOptions{timeout: c.opts.requestTimeout, maxTime: c.opts.maxCallTime}
	for _, opt := range opts {
		opt(&co)
	}
	d := c.dialect()
	var token int64
	if co.progress != nil {
		token = c.tokens.issue()
		if d.sessions {
			c.openStream() // a server that answers with JSON sends progress on the GET stream
		}
	}
	level := c.logLevelFor(d)
	var logs func(mcp.LoggingMessageParams)
	if co.logs != nil {
		logs = co.logs.f
		if d.meta != nil {
			level = co.logs.level // a stateless request asks for its own log records
		}
	}
	meta := d.requestMeta(token, level)
	if co.forClient != nil && d.inputRequired {
		meta = withCapabilities(meta, co.forClient)
	}
	meta = extraMeta(ctx, ob, meta)
	sent, err := withMeta(raw, meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	var hdr http.Header
	if d.headers {
		if hdr, err = c.requestHeaders(d, method, params, raw); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		ctx = reqmeta.With(ctx, hdr)
	}

	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timing := c.clock.start(method, co.timeout, co.maxTime, cancel)
	defer c.clock.stop(timing)
	if token != 0 {
		// The token is the call's, through every attempt, input round
		// and the task it may become.
		defer c.tokens.watch(token, &call{method: method, progress: co.progress, timing: timing})()
	}

	recovering := ctx.Value(recoveringKey{}) != nil // the recovery's own requests
	if method != "initialize" && !recovering && (co.repeatable || c.opts.replay || d.reissue) {
		// A request the loop below would send again were its outcome
		// unknown may be sent again by the transport after a 503 without
		// Retry-After, too; asked only when one comes.
		cctx = retry.WithResendable(cctx, func() bool { return c.replayable(method, raw, &co, d) })
	}
	var refusals sessionRefusals
	replays, rounds := 0, 0
	relisted := false
	for {
		if err := c.awaitRecovery(cctx, method); err != nil {
			return nil, err
		}
		gen := c.gen.Load() // the session this attempt goes out on
		r, err := c.attempt(cctx, ob, timing, method, sent, recovering, d, logs)
		switch {
		case err == nil:
			if askedTask(params) {
				// Revision 2025-11-25: the answer to a call run as a
				// task is the task; wait for it to end (taskwait.go).
				// The request is never sent again. A server that ran
				// it as any call answers as for any call.
				task, err := createdTask(method, r.raw)
				if err != nil {
					return nil, err
				}
				if task != nil {
					ob.event(Event{Kind: EventTaskCreated, TaskID: task.TaskID})
					return c.awaitTask(cctx, ob, method, task, tasksRequested, &co)
				}
			}
			kind, err := d.resultKind(method, r.raw)
			switch {
			case err != nil:
				return nil, err
			case kind == mcp.ResultTask && co.forClient != nil:
				return r.raw, nil // the task is the client's to wait for
			case kind == mcp.ResultTask:
				// The tasks extension: the server made a task of it.
				task, err := extensionTask(method, r.raw)
				if err != nil {
					return nil, err
				}
				ob.event(Event{Kind: EventTaskCreated, TaskID: task.TaskID})
				return c.awaitTask(cctx, ob, method, task, tasksExtension, &co)
			case kind != mcp.ResultInputRequired, co.forClient != nil:
				return r.raw, nil // complete, or input_required for the client the call is made for
			}
			ir, err := decodeInputRequired(method, r.raw)
			if err != nil {
				return nil, err
			}
			// The server needs input first: answer it, then send the
			// request again (a new id) carrying the answers.
			rounds++
			ob.event(Event{Kind: EventInputRequired, Round: rounds})
			if co.retried != nil {
				*co.retried = true
			}
			next, err := c.inputRound(cctx, method, raw, ir, rounds)
			if err != nil {
				return nil, err
			}
			if sent, err = withMeta(next, meta); err != nil {
				return nil, fmt.Errorf("%s: %w", method, err)
			}
		case method == "initialize" || recovering:
			return nil, err
		case errors.Is(err, jsonrpc.ErrSessionExpired) && !errors.Is(err, jsonrpc.ErrOutcomeUnknown):
			// Refused for an expired session: not run. Send it again on
			// the session that replaces that one.
			ob.resend(EventReinitialize, err)
			if err := c.afterExpiry(cctx, method, gen, err, &refusals); err != nil {
				return nil, err
			}
		case method == "tools/call" && d.headers && !relisted && isCode(err, jsonrpc.CodeHeaderMismatch):
			// Refused before it ran, for headers the server's listing
			// may describe otherwise: once, list again and resend.
			relisted = true
			h, ok := c.relistHeaders(cctx, d, params, raw, hdr)
			if !ok {
				return nil, err
			}
			hdr, cctx = h, reqmeta.With(cctx, h)
			ob.resend(EventResend, err)
		case replays < maxReplays && errors.Is(err, jsonrpc.ErrOutcomeUnknown) && !errors.Is(err, ErrTimeout) &&
			cctx.Err() == nil && c.replayable(method, raw, &co, d):
			replays++
			ob.resend(EventResend, err)
			c.opts.logger.InfoContext(cctx, "anymcp: sending again a request that is safe to repeat, as a new request", "method", method, "replay", replays, "err", err)
		default:
			return nil, err
		}
	}
}

// isCode reports whether err is a JSON-RPC error with code.
func isCode(err error, code int64) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == code
}

// maxReplays bounds how often one call is replayed after losing its answer.
const maxReplays = 3

// replayable reports whether a call whose outcome is unknown may be sent
// again: the host said it is repeatable, or replay is on (WithReplay, or a
// stateless server) and the request is safe to repeat.
func (c *Conn) replayable(method string, params json.RawMessage, co *callOptions, d *dialect) bool {
	return co.repeatable || ((c.opts.replay || d.reissue) && c.safeToRepeat(method, params))
}

// attempt sends the request once and waits for its answer.
func (c *Conn) attempt(cctx context.Context, ob *observed, timing *timeouts, method string, raw json.RawMessage, recovering bool, d *dialect, logs func(mcp.LoggingMessageParams)) (callResult, error) {
	if cctx.Err() != nil {
		// Given up before it went out (while the host answered an
		// input_required round, say): not sent, nothing to cancel.
		return callResult{}, c.abandon(cctx, method, 0, false, d)
	}
	id := c.nextID.Add(1)
	cl := &call{method: method, ch: make(chan callResult, 1), timing: timing, recovery: recovering}
	if err := c.pending.add(id, cl); err != nil {
		return callResult{}, named(method, err)
	}
	defer c.pending.remove(id)
	if logs != nil {
		c.callLogs.Store(id, logs) // callLog's: the records on this request's stream
		defer c.callLogs.Delete(id)
	}

	c.clock.waiting(timing, true) // the request timeout runs from here
	defer c.clock.waiting(timing, false)

	msg := &jsonrpc.Message{ID: jsonrpc.Int(id), Method: method, Params: raw}
	ob.sent(id)
	if err := c.t.Send(cctx, msg); err != nil {
		select {
		case r := <-cl.ch: // answered before the exchange failed
			return r, r.wrapErr(method)
		default:
		}
		if cctx.Err() != nil {
			return callResult{}, c.abandon(cctx, method, id, mayHaveRun(err), d)
		}
		return callResult{}, named(method, err)
	}
	select {
	case r := <-cl.ch:
		return r, r.wrapErr(method)
	case <-cctx.Done():
		select {
		case r := <-cl.ch: // the answer won the race
			return r, r.wrapErr(method)
		default:
		}
		return callResult{}, c.abandon(cctx, method, id, true, d)
	}
}

// mayHaveRun reads a failed Send: only a transport that says so (a
// refusal for an expired session, a 429/503 not waited out that does not
// match jsonrpc.ErrOutcomeUnknown) proves the request never reached the
// server.
func mayHaveRun(sendErr error) bool {
	var ra *reconnect.RetryAfterError
	return errors.Is(sendErr, jsonrpc.ErrOutcomeUnknown) ||
		!errors.Is(sendErr, jsonrpc.ErrSessionExpired) && !errors.As(sendErr, &ra)
}

// wrapErr is the call's error as the caller sees it, or nil.
func (r callResult) wrapErr(method string) error {
	if r.err == nil {
		return nil
	}
	if _, ok := r.err.(*LostError); ok {
		return r.err
	}
	return named(method, r.err)
}

// decodeResult decodes a call's result into result (nil: the caller does
// not want it), in one pass that also checks it. r.raw is the answer's own
// memory, which nothing writes to again (a transport gives its messages up,
// see jsonrpc.Transport; the result cache keeps them as they came), so a
// large string of the result — a big text or image — shares it instead of
// being copied (jsondec.UnmarshalOwned).
func decodeResult(method string, r callResult, result any) error {
	if result == nil {
		// Nothing decodes it, so check it here: a transport leaves that
		// to the decode (jsonrpc.DecodeOwned), which makes it one pass.
		if len(r.raw) > 0 {
			if err := jsondec.Check(r.raw); err != nil {
				return &ResultError{Method: method, Err: err}
			}
		}
		return nil
	}
	decode := jsondec.UnmarshalOwned
	if _, ok := result.(sharesAnswer); ok {
		decode = jsondec.UnmarshalShared
	}
	if err := decode(r.raw, result); err != nil {
		return &ResultError{Method: method, Err: err}
	}
	return nil
}

// sharesAnswer is a result whose json.RawMessage members are slices of
// the answer itself, not copies (jsondec.UnmarshalShared): a listing's
// items as the server sent them (rawlist.go).
type sharesAnswer interface{ sharesAnswer() }

// abandon returns the reason a call stopped waiting and tells the server,
// in the background, that the request is cancelled.
// ran says whether the request may have reached the server.
func (c *Conn) abandon(cctx context.Context, method string, id int64, ran bool, d *dialect) error {
	cause := context.Cause(cctx)
	if ran && d.cancelsByNotice(method) {
		c.sendCancelled(id, cause.Error())
	}
	if te, ok := cause.(*TimeoutError); ok {
		t := *te
		t.MayHaveRun = ran
		return &t
	}
	if ran {
		return fmt.Errorf("%s: %w (%w)", method, cause, jsonrpc.ErrOutcomeUnknown)
	}
	return fmt.Errorf("%s: %w", method, cause)
}

// sendCancelled sends notifications/cancelled for request id without
// making the caller wait for it. Close lets these go out (for a short while)
// before it closes the transport.
func (c *Conn) sendCancelled(id int64, reason string) {
	c.cancelAside(func() { c.notifyCancelled(id, reason) })
}

// cancelAside runs send, which tells the server a request or a task is
// cancelled, on a goroutine of its own, unless the Conn is done: Close
// lets these finish (for a short while) before it closes the transport.
// It reports whether send runs.
func (c *Conn) cancelAside(send func()) bool {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return false
	}
	c.wg.Add(1)
	c.cancels.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer c.cancels.Done()
		send()
	}()
	return true
}

// notifyCancelled sends notifications/cancelled for request id and waits
// (a bounded while) for the transport to take it.
func (c *Conn) notifyCancelled(id int64, reason string) {
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	params, _ := json.Marshal(mcp.CancelledParams{RequestID: json.RawMessage(strconv.FormatInt(id, 10)), Reason: reason})
	if err := c.t.Send(ctx, &jsonrpc.Message{Method: "notifications/cancelled", Params: params}); err != nil {
		c.opts.logger.Debug("anymcp: could not send notifications/cancelled", "id", id, "err", err)
	}
}

// Notify sends a notification; it waits only for the transport to take it.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("%s: encoding params: %w", method, err)
	}
	if err := c.Err(); err != nil {
		return named(method, err)
	}
	if err := c.t.Send(ctx, &jsonrpc.Message{Method: method, Params: raw}); err != nil {
		return named(method, err)
	}
	return nil
}
