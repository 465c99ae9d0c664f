package legacy

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
)

// Send POSTs m to the endpoint as application/json, with the static
// headers, and returns nil once the server has accepted it with any 2xx
// status. The answer to a request arrives later on the stream, through
// Recv.
//
// After the stream drops, Send refuses all but an initialize request
// (matching jsonrpc.ErrSessionExpired and jsonrpc.ErrNotSent) until one is
// POSTed on the new endpoint. A message is sent again only when the server
// provably did not run it (a 429, a 503 with Retry-After, a refused
// connection) or ctx is marked retry.WithResendable. An error matching
// jsonrpc.ErrOutcomeUnknown means the request may have run: its POST was in
// flight when the stream dropped, or failed after its body went out. Each
// error is listed in docs/transports.md.
func (t *Transport) Send(ctx context.Context, m *jsonrpc.Message) error {
	body, err := jsonrpc.Encode(m)
	if err != nil {
		return fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), err)
	}
	s, initializing, err := t.session(ctx, m)
	if err != nil {
		return err
	}
	// The POST is part of the caller's ctx (its deadline bounds the
	// waits after a 429 or 503) and of the session, whose end cancels it.
	reqCtx, cancelReq := context.WithCancel(ctx)
	defer cancelReq()
	stop := context.AfterFunc(s.ctx, cancelReq)
	defer stop()
	req, out, err := wire.NewPost(reqCtx, http.MethodPost, s.endpoint, body)
	if err != nil {
		return fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), err)
	}
	for k, v := range t.header {
		req.Header[k] = v
	}
	req.Header["Content-Type"] = typeJSON

	resp, err := t.post.Do(req)
	if err != nil {
		if initializing {
			t.initFailed(s)
		}
		return t.failed(ctx, s, m, err, out.Sent())
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if initializing {
			t.initFailed(s)
		}
		return fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), wire.PostError(resp, s.redacted, m.IsRequest() && out.Sent()))
	}
	if resp.ContentLength == 0 {
		return nil // the usual 202: nothing to read
	}
	if n := wire.Drain(resp.Body); n > 0 {
		t.log.Debug("legacy: discarded the body of an accepted POST", "message", wire.Label(m), "status", resp.StatusCode, "bytes", n)
	}
	return nil
}

// session returns the session m may be POSTed on, applying the session
// rules (see Send); initializing is true when m is the initialize request
// that opens a session which came from a reconnection.
func (t *Transport) session(ctx context.Context, m *jsonrpc.Message) (s *session, initializing bool, err error) {
	isInit := m.Method == "initialize" && m.IsRequest()
	for {
		t.mu.Lock()
		s, closed, ready := t.sess, t.closed, t.ready
		switch {
		case closed:
			t.mu.Unlock()
			return nil, false, fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), jsonrpc.ErrClosed)
		case t.ctx.Err() != nil:
			t.mu.Unlock()
			return nil, false, fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), context.Cause(t.ctx))
		case s != nil && !s.needInit:
			t.mu.Unlock()
			return s, false, nil
		case s != nil && isInit:
			s.needInit = false
			t.mu.Unlock()
			return s, true, nil
		case s != nil:
			t.mu.Unlock()
			return nil, false, fmt.Errorf("HTTP+SSE: %s: %w: the SSE stream was reopened and the new session is not initialized; %w", wire.Label(m), jsonrpc.ErrSessionExpired, jsonrpc.ErrNotSent)
		case !isInit:
			t.mu.Unlock()
			return nil, false, fmt.Errorf("HTTP+SSE: %s: %w: the SSE stream was lost and the transport is reconnecting; %w", wire.Label(m), jsonrpc.ErrSessionExpired, jsonrpc.ErrNotSent)
		}
		t.mu.Unlock()
		select {
		case <-ready:
		case <-t.ctx.Done():
		case <-ctx.Done():
			return nil, false, fmt.Errorf("HTTP+SSE: %s: waiting for the SSE stream to reconnect: %w", wire.Label(m), ctx.Err())
		}
	}
}

// initFailed puts back the rule that s needs initialize first, after the
// initialize request that lifted it failed.
func (t *Transport) initFailed(s *session) {
	t.mu.Lock()
	if t.sess == s {
		s.needInit = true
	}
	t.mu.Unlock()
}

// failed turns an error from the HTTP client into Send's error, telling a
// cancelled ctx, a closed transport and a lost stream apart from a network
// failure. sent says whether the POST went out in full
// (wire.Delivery.Sent): when it did, and no answer said the server did not
// run it (a 429 or 503 not waited out, a refused redirect), the error of a
// request also matches jsonrpc.ErrOutcomeUnknown.
func (t *Transport) failed(ctx context.Context, s *session, m *jsonrpc.Message, err error, sent bool) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	_, redirected := errors.AsType[*jsonrpc.RedirectError](err)
	unknown := func(err error) error {
		if sent && m.IsRequest() && !redirected {
			return wire.MayHaveRun(err)
		}
		return err
	}
	if closed {
		return unknown(fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), jsonrpc.ErrClosed))
	}
	if ra, ok := errors.AsType[*reconnect.RetryAfterError](err); ok {
		// A 429 or 503 not waited out: its own error says whether the
		// server may have run the request, whatever cut the wait short
		// (ctx, the cap, a lost stream).
		return fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), ra)
	}
	if ctx.Err() != nil {
		return unknown(fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), ctx.Err()))
	}
	if redirected {
		// The server redirected the POST where the policy does not follow:
		// only the endpoint's origin received it, and did not run it.
		re, _ := errors.AsType[*jsonrpc.RedirectError](err)
		return fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), re)
	}
	if s.ctx.Err() != nil {
		return fmt.Errorf("HTTP+SSE: %s: %w: the SSE stream was lost while the POST was in flight: %w",
			wire.Label(m), jsonrpc.ErrOutcomeUnknown, context.Cause(s.ctx))
	}
	return unknown(fmt.Errorf("HTTP+SSE: %s: %w", wire.Label(m), err))
}
