package legacy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/sse"
)

// run is the stream goroutine: it reads the stream of session s and, when
// that stream ends, either ends the transport (reconnection off) or drops
// the session and opens a new stream, for as long as the policy allows.
func (t *Transport) run(rd *sse.Reader, body io.ReadCloser, s *session) {
	defer t.wg.Done()
	for {
		started := time.Now()
		delivered, cause := t.read(rd, s)
		body.Close()
		t.keepCursor(rd)
		if t.ctx.Err() != nil {
			return // closed (or ended for good)
		}
		lost := lostError(t.sseURL, cause)
		if !t.reopen {
			t.end(lost)
			return
		}
		if !t.drop(s, cause, lost) {
			return // closed meanwhile
		}
		useful := delivered || time.Since(started) >= usefulSession
		var err error
		if rd, body, s, err = t.redial(lost, useful); err != nil {
			t.end(err)
			return
		}
	}
}

// usefulSession is how long a session must last, if it delivered no
// message, for its end to count as progress (see redial).
const usefulSession = 30 * time.Second

// read delivers the events of the stream, after the endpoint event, until
// the stream ends or Close cancels it, and returns whether it delivered a
// message and the read error that ended it. "message" events carry JSON-RPC messages (a batch is split);
// invalid ones are logged and dropped, other event types are ignored.
func (t *Transport) read(rd *sse.Reader, s *session) (delivered bool, err error) {
	for {
		ev, err := rd.Next()
		if err != nil {
			return delivered, err
		}
		switch ev.Type {
		case "message":
		case "endpoint":
			// Its query holds a session id, as the first one's does.
			ignored := origin.RedactString(strings.TrimSpace(string(ev.Data)))
			t.log.Debug("legacy: ignored a later endpoint event; keeping the first",
				"endpoint", s.redacted, "ignored", wire.Excerpt([]byte(ignored)))
			continue
		default:
			t.log.Debug("legacy: ignored an event", "type", wire.Excerpt([]byte(ev.Type)))
			continue
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			t.log.Debug("legacy: ignored a message event without data")
			continue
		}
		msgs, derr := jsonrpc.DecodeOwned(ev.Data)
		if derr != nil {
			t.log.Warn("legacy: dropped invalid input from the server",
				"err", wire.Excerpt([]byte(derr.Error())), "excerpt", wire.Excerpt(ev.Data))
		}
		// A response that finds the protocol layer waiting for the next
		// message, with nothing queued before it, goes straight to its
		// call: nothing is overtaken, and the answer skips the read loop.
		delivered = delivered || len(msgs) > 0
		if len(msgs) == 1 && msgs[0].IsResponse() && t.queue.Drained() && t.take.Offer(msgs[0]) {
			continue
		}
		// A full queue makes Push wait: the stream is not read meanwhile,
		// and TCP flow control pushes back on the server.
		if t.queue.Push(t.ctx, len(ev.Data), msgs...) != nil {
			return delivered, jsonrpc.ErrClosed
		}
	}
}

// keepCursor records where the stream stood when it ended: its last event
// id and the reconnection time it asked for, if any. A stream that sent no
// retry: field keeps the one an earlier stream sent, as an EventSource
// does.
func (t *Transport) keepCursor(rd *sse.Reader) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cursor.lastEventID = rd.ResumeID()
	if d, ok := rd.Retry(); ok {
		t.cursor.retry, t.cursor.hasRetry = d, true
	}
}

// lostError is the error that stands for the end of the stream at sseURL:
// it wraps ErrConnectionLost and, for a broken stream, the read error.
func lostError(sseURL string, cause error) error {
	if errors.Is(cause, io.EOF) {
		return fmt.Errorf("GET %s: the server ended the SSE stream: %w", sseURL, ErrConnectionLost)
	}
	return fmt.Errorf("GET %s: the SSE stream broke: %w: %w", sseURL, ErrConnectionLost, cause)
}

// end ends the transport for good with err (which wraps
// ErrConnectionLost): Send fails with it from now on, waiting Sends
// included, and Recv, once the queue is drained, returns it. An end that
// races with Close is Close's.
func (t *Transport) end(err error) {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return
	}
	t.log.Warn("legacy: the transport is over", "url", t.sseURL, "err", err)
	t.cancel(err)
	t.queue.End(fmt.Errorf("HTTP+SSE: recv: %w", err))
}
