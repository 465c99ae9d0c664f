package legacy

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/sse"
)

// read delivers the events of the stream, after the endpoint event, until
// the stream ends or Close cancels it. "message" events carry JSON-RPC
// messages (a batch is split); invalid ones are logged and dropped, other
// event types are ignored. The end of the stream is the end of the session:
// it is recorded as lost, with the stream's cursor kept for later.
func (t *Transport) read(rd *sse.Reader) {
	for {
		ev, err := rd.Next()
		if err != nil {
			t.lost(rd, err)
			return
		}
		switch ev.Type {
		case "message":
		case "endpoint":
			t.log.Debug("legacy: ignored a later endpoint event; keeping the first",
				"endpoint", t.redacted, "ignored", wire.Excerpt(ev.Data))
			continue
		default:
			t.log.Debug("legacy: ignored an event", "type", wire.Excerpt([]byte(ev.Type)))
			continue
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			t.log.Debug("legacy: ignored a message event without data")
			continue
		}
		msgs, derr := jsonrpc.Decode(ev.Data)
		if derr != nil {
			t.log.Warn("legacy: dropped invalid input from the server",
				"err", wire.Excerpt([]byte(derr.Error())), "excerpt", wire.Excerpt(ev.Data))
		}
		if len(msgs) > 0 && !t.queue.Push(msgs...) {
			return // closed
		}
	}
}

// lost records the end of the stream: Send fails from now on and Recv,
// once the queue is drained, returns an error wrapping ErrConnectionLost
// and the cause. An end caused by Close is not a loss.
func (t *Transport) lost(rd *sse.Reader, cause error) {
	cur := streamCursor{lastEventID: rd.LastEventID()}
	cur.retry, cur.hasRetry = rd.Retry()
	t.mu.Lock()
	t.cursor = cur
	closed := t.closed
	t.mu.Unlock()
	if closed || t.ctx.Err() != nil {
		return
	}
	// err is the cause of the session's context: Send reports it too.
	var err error
	if errors.Is(cause, io.EOF) {
		err = fmt.Errorf("GET %s: the server ended the SSE stream: %w", t.sseURL, ErrConnectionLost)
		t.log.Info("legacy: the server ended the SSE stream; the session is over", "url", t.sseURL)
	} else {
		err = fmt.Errorf("GET %s: the SSE stream broke: %w: %w", t.sseURL, ErrConnectionLost, cause)
		t.log.Warn("legacy: the SSE stream broke; the session is over", "url", t.sseURL, "err", cause)
	}
	t.cancel(err)
	t.queue.End(fmt.Errorf("legacy: recv: %w", err))
}
