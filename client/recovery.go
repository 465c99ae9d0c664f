package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/reconnect"
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
// capabilities, restores resource subscriptions, and tells the host. An
// attempt that fails for a reason that may pass (the new session expired
// too, the transport is still reconnecting) is tried again, waiting as the
// reconnect policy says, for as long as the Conn lives and the policy
// allows.
func (c *Conn) reinitialize(r *recovery, cause error) {
	defer c.wg.Done()
	c.setState(StateReconnecting)
	start := time.Now()
	policy := reconnect.DefaultPolicy()
	if c.opts.reconnect != nil {
		policy = *c.opts.reconnect
	}
	backoff := policy.Start()
	var err error
	var resubscribed int
	for attempt := 1; ; attempt++ {
		resubscribed, err = c.reinitializeOnce()
		if err == nil || c.ctx.Err() != nil || c.Err() != nil || !transient(err) {
			break
		}
		wait, ok := backoff.Next()
		if !ok {
			break
		}
		c.opts.logger.Info("anymcp: re-initializing failed; trying again", "attempt", attempt, "wait", wait, "err", err)
		if reconnect.Sleep(c.ctx, wait) != nil {
			break
		}
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

// reinitializeOnce is one initialize, its notifications/initialized, and
// the subscriptions restored, bounded by the request timeout.
func (c *Conn) reinitializeOnce() (int, error) {
	if !c.dialect().sessions {
		// A modern server keeps no session: a restarted process needs only
		// its subscriptions/listen stream again, which reopens by itself.
		return 0, nil
	}
	timeout := c.opts.requestTimeout
	if timeout <= 0 {
		timeout = recoveryTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithValue(c.ctx, recoveringKey{}, true), timeout)
	defer cancel()
	params := initializeParams(c.opts)
	var raw json.RawMessage
	if err := c.Call(ctx, "initialize", params, &raw); err != nil {
		return 0, err
	}
	if err := c.finishInitialize(ctx, params.ProtocolVersion, raw); err != nil {
		return 0, err
	}
	return c.resubscribe(ctx)
}

// transient reports whether a failed re-initialization may succeed if
// tried again: the session it made expired at once, the transport is
// still reconnecting or lost the answer, or it ran out of time. A
// JSON-RPC refusal or an unsupported version is final.
func transient(err error) bool {
	if errors.Is(err, jsonrpc.ErrSessionExpired) || errors.Is(err, jsonrpc.ErrOutcomeUnknown) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var rpcErr *jsonrpc.Error
	var ve *VersionError
	return !errors.As(err, &rpcErr) && !errors.As(err, &ve)
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
