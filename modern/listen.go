package modern

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/sse"
)

// startListening opens the standalone GET stream in a goroutine, unless it
// is open already, the server refused it before, or the transport is closed.
// The channel it returns is closed once the server's answer to the GET is
// known (the stream is open, or refused, or failed), so that the caller can
// wait for it: a server notification sent right after the handshake then
// has a stream to travel on.
func (t *Transport) startListening() <-chan struct{} {
	settled := make(chan struct{})
	t.mu.Lock()
	if t.listening || t.noGETStream || t.closed {
		t.mu.Unlock()
		close(settled)
		return settled
	}
	t.listening = true
	session, version := t.session, t.version
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		var once sync.Once
		t.listen(session, version, func() { once.Do(func() { close(settled) }) })
		once.Do(func() { close(settled) })
		t.mu.Lock()
		t.listening = false
		t.mu.Unlock()
	}()
	return settled
}

// listenSettleWait bounds how long Send of notifications/initialized waits
// for the server's answer to the GET that opens the standalone stream.
const listenSettleWait = 2 * time.Second

// streamCursor is where an SSE stream stood when it ended: what resuming it
// with Last-Event-ID will need.
type streamCursor struct {
	lastEventID string
	retry       time.Duration
	hasRetry    bool
}

// listen reads the GET stream until it ends or Close cancels it. A refusal
// (405 per the specification; 404 and 400 from real servers) means the
// server offers no such stream: it is logged at debug level and never asked
// for again. Any other failure is logged once as a warning.
func (t *Transport) listen(session, version []string, settled func()) streamCursor {
	req, err := t.newRequest(t.ctx, http.MethodGet, nil, acceptSSE, session, version)
	if err != nil {
		t.log.Warn("modern: GET stream not opened", "err", err)
		return streamCursor{}
	}
	resp, err := t.streamClient.Do(req)
	if err != nil {
		if t.ctx.Err() == nil {
			t.log.Warn("modern: GET stream not opened", "url", t.redacted, "err", err)
		}
		return streamCursor{}
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusMethodNotAllowed, code == http.StatusNotFound, code == http.StatusBadRequest:
		t.mu.Lock()
		t.noGETStream = true
		t.mu.Unlock()
		t.log.Debug("modern: the server offers no GET stream", "url", t.redacted, "status", code)
		wire.Drain(resp.Body)
		return streamCursor{}
	case code < 200 || code > 299:
		t.log.Warn("modern: GET stream not opened", "err", wire.NewHTTPError(resp, http.MethodGet, t.redacted))
		return streamCursor{}
	}
	if ct := wire.MediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		t.log.Warn("modern: GET stream not opened: unexpected content type",
			"url", t.redacted, "content_type", wire.Excerpt([]byte(ct)))
		return streamCursor{}
	}

	settled()
	rd := sse.NewReader(resp.Body, t.maxSize)
	for {
		ev, err := rd.Next()
		if err != nil {
			cur := streamCursor{lastEventID: rd.LastEventID()}
			cur.retry, cur.hasRetry = rd.Retry()
			switch {
			case t.ctx.Err() != nil:
			case errors.Is(err, io.EOF):
				t.log.Info("modern: the server ended the GET stream; not reopened", "last_event_id", cur.lastEventID)
			default:
				t.log.Warn("modern: the GET stream broke; not reopened", "err", err, "last_event_id", cur.lastEventID)
			}
			return cur
		}
		if ev.Type != "message" {
			t.log.Debug("modern: ignored an event", "stream", "GET", "type", ev.Type)
			continue
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // priming event
		}
		msgs, derr := jsonrpc.Decode(ev.Data)
		if derr != nil {
			t.log.Warn("modern: dropped invalid input from the server", "stream", "GET", "err", derr)
		}
		if len(msgs) > 0 && !t.queue.Push(msgs...) {
			return streamCursor{}
		}
	}
}
