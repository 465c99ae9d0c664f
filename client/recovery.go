package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/anymcp/anymcp/mcp"
)

// recovery is one re-initialization of the session, shared by every caller
// that needs it.
type recovery struct {
	done chan struct{}
	err  error
}

// recoveringKey marks the context of the recovery's own requests, which
// must not wait for the recovery to finish.
type recoveringKey struct{}

// recoveryTimeout bounds one re-initialization when the Conn has no request
// timeout of its own.
const recoveryTimeout = 30 * time.Second

// startRecovery begins re-initializing unless it is already under way, and
// returns the recovery to wait for (nil when the Conn is done).
func (c *Conn) startRecovery(cause error) *recovery {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recovery != nil {
		return c.recovery
	}
	if c.err != nil {
		return nil
	}
	r := &recovery{done: make(chan struct{})}
	c.recovery = r
	c.wg.Add(1)
	go c.reinitialize(r, cause)
	return r
}

// recoverSession re-initializes (or joins the re-initialization under way)
// and waits for it, bounded by ctx.
func (c *Conn) recoverSession(ctx context.Context, cause error) error {
	r := c.startRecovery(cause)
	if r == nil {
		return c.Err()
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// awaitRecovery holds a call back while a re-initialization is under way:
// the new session must be initialized before anything else is sent on it.
func (c *Conn) awaitRecovery(ctx context.Context, method string) error {
	if method == "initialize" || ctx.Value(recoveringKey{}) != nil {
		return nil // the recovery's own requests
	}
	c.mu.Lock()
	r := c.recovery
	c.mu.Unlock()
	if r == nil {
		return nil
	}
	select {
	case <-r.done:
		return nil // on failure the call finds out for itself
	case <-ctx.Done():
		return fmt.Errorf("%s: waiting for the session to be re-initialized: %w", method, context.Cause(ctx))
	}
}

// reinitialize runs initialize again with the same client info and
// capabilities, restores resource subscriptions, and tells the host.
func (c *Conn) reinitialize(r *recovery, cause error) {
	defer c.wg.Done()
	c.setState(StateReconnecting)
	start := time.Now()
	timeout := c.opts.requestTimeout
	if timeout <= 0 {
		timeout = recoveryTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithValue(c.ctx, recoveringKey{}, true), timeout)
	defer cancel()

	params := initializeParams(c.opts)
	var raw json.RawMessage
	err := c.Call(ctx, "initialize", params, &raw)
	if err == nil {
		err = c.finishInitialize(ctx, params.ProtocolVersion, raw)
	}
	var resubscribed int
	if err == nil {
		resubscribed, err = c.resubscribe(ctx)
	}

	c.mu.Lock()
	c.recovery = nil
	r.err = err
	info := c.info
	c.mu.Unlock()
	close(r.done)
	if err != nil {
		c.opts.logger.Warn("anymcp: re-initializing failed", "cause", cause, "err", err)
		return
	}
	c.opts.logger.Info("anymcp: session re-initialized", "cause", cause,
		"took", time.Since(start), "resubscribed", resubscribed)
	if f := c.opts.onReinit; f != nil {
		c.events.push(func() { f(info) })
	}
}

// resubscribe restores every resource subscription on the new session.
func (c *Conn) resubscribe(ctx context.Context) (int, error) {
	c.mu.Lock()
	uris := make([]string, 0, len(c.subs))
	for uri := range c.subs {
		uris = append(uris, uri)
	}
	c.mu.Unlock()
	for _, uri := range uris {
		if err := c.Call(ctx, "resources/subscribe", &mcp.SubscribeParams{URI: uri}, nil); err != nil {
			return 0, fmt.Errorf("re-subscribing to %s: %w", uri, err)
		}
	}
	return len(uris), nil
}
