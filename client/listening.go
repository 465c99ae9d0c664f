package client

import (
	"context"
	"fmt"
)

// Listening returns once the Conn's stream of change notifications is
// live: a change the server makes afterwards reaches the handlers. With a
// stateless server, that is subscriptions/listen, once acknowledged (after a
// break, once acknowledged again). With an initialize-era server, it is the
// GET stream, once open or known unavailable. The transport waits a bounded
// time for it. Listening returns nil at once when the Conn listens for
// nothing (no change handler, no subscription) or asked for no such stream.
//
// It returns an error when the server refused the first listen stream, when
// the Conn ended (wrapping its error, or ErrClosed), or when ctx ended
// first.
func (c *Conn) Listening(ctx context.Context) error {
	if c.ctx.Err() != nil {
		return fmt.Errorf("listening: %w", c.endErr())
	}
	if !c.dialect().listen {
		if !c.streamOpen.Load() {
			return c.Err()
		}
		select {
		case <-c.streamSettled:
			return c.Err()
		case <-c.ctx.Done():
			return fmt.Errorf("listening: %w", c.endErr())
		case <-ctx.Done():
			return fmt.Errorf("listening: waiting for the stream to open: %w", context.Cause(ctx))
		}
	}
	l, err := c.awaitListening(ctx, c.startListening())
	for err == nil && l != nil {
		l.mu.Lock()
		live, replaced := l.live, l.replaced
		l.mu.Unlock()
		select {
		case <-live: // live already: so said, even if ctx ended
			return nil
		default:
		}
		select {
		case <-live:
			return nil
		case <-replaced:
			l, err = c.awaitListening(ctx, l)
		case <-c.ctx.Done():
			return fmt.Errorf("subscriptions/listen: %w", c.endErr())
		case <-ctx.Done():
			return fmt.Errorf("subscriptions/listen: waiting for the acknowledgement: %w", context.Cause(ctx))
		}
	}
	return err
}
