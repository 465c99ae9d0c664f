package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// call is one request waiting for its answer.
type call struct {
	method   string
	ch       chan callResult // buffered: finish never blocks
	finished atomic.Bool

	progress func(mcp.ProgressParams)
	mu       sync.Mutex  // guards idle
	idle     *time.Timer // the request timeout, restarted by progress
	timeout  time.Duration
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

// touch restarts the request timeout after a sign of life.
func (cl *call) touch() {
	cl.mu.Lock()
	if cl.idle != nil {
		cl.idle.Reset(cl.timeout)
	}
	cl.mu.Unlock()
}

// Call sends the request method with params (any value that encodes to a
// JSON object, or nil) and decodes the result into result (a pointer, or
// nil to discard it). It returns when the answer arrives, when ctx is done,
// or when the call's timeout runs out; in the last two cases the server is
// sent notifications/cancelled. A JSON-RPC error from the server is
// returned as a *jsonrpc.Error (use errors.As).
func (c *Conn) Call(ctx context.Context, method string, params, result any, opts ...CallOption) error {
	raw, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("%s: encoding params: %w", method, err)
	}
	co := callOptions{timeout: c.opts.requestTimeout, maxTime: c.opts.maxCallTime}
	for _, opt := range opts {
		opt(&co)
	}
	id := c.nextID.Add(1)
	cl := &call{method: method, ch: make(chan callResult, 1), progress: co.progress, timeout: co.timeout}
	if co.progress != nil {
		if raw, err = withProgressToken(raw, id); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
	}

	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	c.pending[id] = cl
	c.mu.Unlock()

	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if co.timeout > 0 {
		cl.mu.Lock()
		cl.idle = time.AfterFunc(co.timeout, func() {
			cancel(&TimeoutError{Method: method, After: co.timeout})
		})
		cl.mu.Unlock()
		defer func() {
			cl.mu.Lock()
			cl.idle.Stop()
			cl.mu.Unlock()
		}()
	}
	if co.maxTime > 0 {
		total := time.AfterFunc(co.maxTime, func() {
			cancel(&TimeoutError{Method: method, After: co.maxTime, Total: true})
		})
		defer total.Stop()
	}

	msg := &jsonrpc.Message{ID: jsonrpc.Int(id), Method: method, Params: raw}
	if err := c.t.Send(cctx, msg); err != nil {
		select {
		case r := <-cl.ch: // answered before the exchange failed
			return decodeResult(method, r, result)
		default:
		}
		c.forget(id)
		if cctx.Err() != nil {
			return c.abandon(cctx, method, id)
		}
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-cl.ch:
		return decodeResult(method, r, result)
	case <-cctx.Done():
		c.forget(id)
		select {
		case r := <-cl.ch: // the answer won the race
			return decodeResult(method, r, result)
		default:
		}
		return c.abandon(cctx, method, id)
	}
}

func decodeResult(method string, r callResult, result any) error {
	if r.err != nil {
		if _, ok := r.err.(*LostError); ok {
			return r.err
		}
		return fmt.Errorf("%s: %w", method, r.err)
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(r.raw, result); err != nil {
		return fmt.Errorf("%s: decoding result: %w", method, err)
	}
	return nil
}

// forget removes a call that will not wait for its answer any more.
func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// abandon returns the reason a call stopped waiting and tells the server,
// in the background, that the request is cancelled.
func (c *Conn) abandon(cctx context.Context, method string, id int64) error {
	cause := context.Cause(cctx)
	if method != "initialize" { // the lifecycle forbids cancelling initialize
		c.sendCancelled(id, cause.Error())
	}
	if te, ok := cause.(*TimeoutError); ok {
		return te
	}
	return fmt.Errorf("%s: %w", method, cause)
}

// sendCancelled sends notifications/cancelled for request id without
// making the caller wait for it.
func (c *Conn) sendCancelled(id int64, reason string) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		defer cancel()
		params := mcp.CancelledParams{RequestID: json.RawMessage(strconv.FormatInt(id, 10)), Reason: reason}
		if err := c.Notify(ctx, "notifications/cancelled", &params); err != nil {
			c.opts.logger.Debug("anymcp: could not send notifications/cancelled", "id", id, "err", err)
		}
	}()
}

// Notify sends a notification; it waits only for the transport to take it.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("%s: encoding params: %w", method, err)
	}
	if err := c.Err(); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.t.Send(ctx, &jsonrpc.Message{Method: method, Params: raw}); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// withProgressToken puts _meta.progressToken = id into the params object.
func withProgressToken(raw json.RawMessage, id int64) (json.RawMessage, error) {
	meta := `{"progressToken":` + strconv.FormatInt(id, 10) + `}`
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage(`{"_meta":` + meta + `}`), nil
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("params must be a JSON object to carry a progress token")
	}
	if !bytes.Contains(trimmed, []byte(`"_meta"`)) {
		out := make([]byte, 0, len(trimmed)+len(meta)+10)
		out = append(out, `{"_meta":`...)
		out = append(out, meta...)
		rest := bytes.TrimSpace(trimmed[1:])
		if len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, rest...), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if len(obj["_meta"]) > 0 && string(obj["_meta"]) != "null" {
		if err := json.Unmarshal(obj["_meta"], &m); err != nil {
			return nil, fmt.Errorf("params _meta: %w", err)
		}
	}
	if m == nil {
		m = make(map[string]json.RawMessage)
	}
	m["progressToken"] = json.RawMessage(strconv.FormatInt(id, 10))
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = b
	return json.Marshal(obj)
}
