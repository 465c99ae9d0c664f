package legacy

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
)

// Send POSTs m to the endpoint as application/json, with the static
// headers, and returns nil once the server has accepted it with any 2xx
// status. The answer to a request does not come back in the POST: it
// arrives later on the stream, through Recv.
//
// ctx cancels the POST. An error is a *jsonrpc.HTTPError (wrapped) for a
// status other than 2xx, wraps ctx.Err() when ctx ended the POST, wraps
// jsonrpc.ErrClosed once Close has been called, and wraps ErrConnectionLost
// once the stream has ended (a POST in flight at that moment is cancelled:
// its answer could never arrive). A failed request may still have reached
// the server; that is for the protocol layer to weigh.
func (t *Transport) Send(ctx context.Context, m *jsonrpc.Message) error {
	if err := t.unusable(m); err != nil {
		return err
	}
	body, err := jsonrpc.Encode(m)
	if err != nil {
		return fmt.Errorf("legacy: %s: %w", label(m), err)
	}
	reqCtx, cancelReq := context.WithCancel(t.ctx)
	defer cancelReq()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, cancelReq)
		defer stop()
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, t.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("legacy: %s: %w", label(m), err)
	}
	for k, v := range t.header {
		req.Header[k] = v
	}
	req.Header["Content-Type"] = typeJSON

	resp, err := t.client.Do(req)
	if err != nil {
		return t.failed(ctx, m, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("legacy: %s: %w", label(m), wire.NewHTTPError(resp, http.MethodPost, t.redacted))
	}
	if resp.ContentLength == 0 {
		return nil // the usual 202: nothing to read
	}
	if n := wire.Drain(resp.Body); n > 0 {
		t.log.Debug("legacy: discarded the body of an accepted POST", "message", label(m), "status", resp.StatusCode, "bytes", n)
	}
	return nil
}

// unusable returns the error Send returns for m once the transport is
// closed or its stream has ended, or nil.
func (t *Transport) unusable(m *jsonrpc.Message) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return fmt.Errorf("legacy: %s: %w", label(m), jsonrpc.ErrClosed)
	}
	if t.ctx.Err() != nil {
		return fmt.Errorf("legacy: %s: %w", label(m), context.Cause(t.ctx))
	}
	return nil
}

// failed turns an error from the HTTP client into Send's error, telling a
// cancelled ctx, a closed transport and a lost stream apart from a network
// failure.
func (t *Transport) failed(ctx context.Context, m *jsonrpc.Message, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("legacy: %s: %w", label(m), ctx.Err())
	}
	if uerr := t.unusable(m); uerr != nil {
		return uerr
	}
	return fmt.Errorf("legacy: %s: %w", label(m), err)
}

// label names a message in errors and logs: its method and id.
func label(m *jsonrpc.Message) string {
	switch {
	case m.Method == "":
		return "response (id " + m.ID.String() + ")"
	case m.ID.IsZero():
		return m.Method
	default:
		return m.Method + " (id " + m.ID.String() + ")"
	}
}
