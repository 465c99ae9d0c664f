package modern

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/sse"
)

// listener is one run of the standalone GET stream, with its reconnects.
// It belongs to the session that was current when it started: once that
// session is replaced or forgotten it stops at its next reconnect, and the
// next notifications/initialized starts a new one.
type listener struct {
	generation uint64
	cancel     context.CancelFunc
}

// startListening opens the standalone GET stream in a goroutine, unless it
// is open already for the current session, the server refused it before,
// or the transport is closed. A stream left over from an earlier session is
// stopped. The channel it returns is closed once the server's first answer
// to the GET is known (the stream is open, or refused, or failed), so that
// the caller can wait for it: a server notification sent right after the
// handshake then has a stream to travel on.
func (t *Transport) startListening() <-chan struct{} {
	settled := make(chan struct{})
	t.mu.Lock()
	if t.closed || t.noGETStream || (t.listener != nil && t.listener.generation == t.generation) {
		t.mu.Unlock()
		close(settled)
		return settled
	}
	if old := t.listener; old != nil {
		old.cancel() // its stream belongs to an earlier session
	}
	ctx, cancel := context.WithCancel(t.ctx)
	l := &listener{generation: t.generation, cancel: cancel}
	t.listener = l
	session, version := t.session, t.version
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		defer cancel()
		var once sync.Once
		settle := func() { once.Do(func() { close(settled) }) }
		t.listen(ctx, l, session, version, settle)
		settle()
		t.mu.Lock()
		if t.listener == l {
			t.listener = nil
		}
		t.mu.Unlock()
	}()
	return settled
}

// listenSettleWait bounds how long Send of notifications/initialized waits
// for the server's answer to the GET that opens the standalone stream.
const listenSettleWait = 2 * time.Second

// streamCursor is where an SSE stream stood when it ended: what resuming it
// with Last-Event-ID needs.
type streamCursor struct {
	lastEventID string
	retry       time.Duration
	hasRetry    bool
}

// cursorAt returns where the stream rd read stood when it ended: the id in
// force at the end of the last event received whole (sse.Reader.ResumeID:
// a priming event's counts; that of an event cut in the middle, by a clean
// end or a broken read, does not, as resuming after it would lose that
// event), and the retry: field, if any.
func cursorAt(rd *sse.Reader) streamCursor {
	c := streamCursor{lastEventID: rd.ResumeID()}
	c.retry, c.hasRetry = rd.Retry()
	return c
}

// listenAttempt is how one GET of the standalone stream went.
type listenAttempt struct {
	stop      bool // do not reconnect
	opened    bool // the server answered with an event stream
	ended     bool // the server ended the stream it opened cleanly
	newID     bool // the stream brought an event id other than the one it resumed from
	delivered bool // a message arrived
	throttled throttle
	reason    string // why the stream ended or failed, for the log
}

// listen runs the standalone GET stream for the life of the transport (or
// of its session): when the stream ends or fails it reconnects after the
// wait the policy gives (the server's retry: when it sent one: exactly
// after a failure, and minServerRetry at least after a clean end), sending
// Last-Event-ID of the last event seen. A stream the server ended cleanly
// after a new event id, having sent a retry: on it or before, is a poll it
// asked for (see serverPoll): reopened after the retry: (minServerRetry at
// least), every time, as progress. So is a stream that delivered a message,
// or that stayed open for the policy's InitialDelay (from the GET sent to
// its end): it starts the policy's run over, and one that a server or an
// idle proxy ends after a quiet while is reopened after InitialDelay,
// every time. A stream that ends at once with nothing delivered and is no
// poll (a new event id alone is nothing) is not progress, nor is a refusal
// or a failed connection: they climb the policy's backoff. A 429 or 503
// with Retry-After is a failed attempt too, as for a POST, but the wait
// before the next GET is the one it asked for (see throttle.next). When
// the policy's attempts or budget run out it warns once and goes on trying
// every MaxDelay (with jitter; or the longer wait a throttling server
// asked for), so that the stream comes back when the server does.
//
// A refusal of the first GET (405 per the specification; 404 and 400 from
// real servers) means the server offers no such stream: it is logged at
// debug level and never asked for again. A 404 on a reconnect while a
// session is held means the session is gone: it is forgotten, Recv
// reports a *jsonrpc.SessionLostError, and the stream stays closed until
// the next notifications/initialized.
func (t *Transport) listen(ctx context.Context, l *listener, session, version []string, settle func()) {
	b := retry.Start(t.policy)
	var cur streamCursor
	opened := false // refusals mean "no stream" only before the first stream
	exhausted := false
	ended := "" // why the last stream that opened ended
	for {
		start := time.Now()
		gap := "" // a stream opened before, and cannot be resumed: why it ended
		if opened && cur.lastEventID == "" {
			gap = ended
		}
		a := t.listenOnce(ctx, session, version, &cur, !opened, gap, settle)
		if a.stop || ctx.Err() != nil || !t.current(l) {
			return
		}
		if a.opened {
			opened, ended = true, a.reason
		}
		p := b.Policy()
		poll := serverPoll(a.ended, a.newID, cur.hasRetry)
		if poll || a.delivered || a.opened && time.Since(start) >= p.InitialDelay {
			b.Progress()
			exhausted = false
		}
		if poll {
			a.reason = "the server ended the stream to be polled"
		}
		wait, ok := nextGET(b, streamEnd{poll: poll, throttled: a.throttled, ended: a.ended, hasRetry: cur.hasRetry, retry: cur.retry})
		if !ok {
			if !exhausted {
				exhausted = true
				t.log.Warn("modern: the GET stream keeps failing; the policy's retries are used up, trying every max delay from now on",
					"url", t.redacted, "reason", a.reason, "attempts", b.Attempts()-1, "max_delay", p.MaxDelay)
			}
			asked := time.Duration(0) // the server's wait, when it asked for one
			if a.throttled.asked {
				asked = wait
			}
			wait = max(jitter(p.MaxDelay, p.Jitter), asked)
		}
		t.log.Info("modern: reconnecting the GET stream", "url", t.redacted, "reason", a.reason,
			"wait", wait, "last_event_id", cur.lastEventID, "attempt", b.Attempts())
		if retry.Sleep(ctx, wait) != nil || !t.current(l) {
			return
		}
	}
}

// current reports whether l still belongs to the transport's session.
func (t *Transport) current(l *listener) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.closed && t.generation == l.generation
}

// jitter spreads d by ± fraction j.
func jitter(d time.Duration, j float64) time.Duration {
	if j <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + j*(2*rand.Float64()-1)))
}

// listenOnce opens the GET stream once, from cur, and reads it until it
// ends, updating cur. first says no stream has been opened yet. gap, when
// not "", says why the last stream ended that this one cannot resume: once
// open, the Recv loop is told that messages may be lost (see gap).
func (t *Transport) listenOnce(ctx context.Context, session, version []string, cur *streamCursor, first bool, gap string, settle func()) listenAttempt {
	req, err := t.newRequest(ctx, http.MethodGet, nil, acceptSSE, session, version)
	if err != nil {
		t.log.Warn("modern: GET stream not opened", "err", err)
		return listenAttempt{stop: true}
	}
	if cur.lastEventID != "" {
		req.Header["Last-Event-Id"] = []string{cur.lastEventID}
	}
	resp, err := t.streamClient.Do(req)
	if err != nil {
		err = origin.RedactError(err)
		settle()
		if re, ok := errors.AsType[*jsonrpc.RedirectError](err); ok {
			// The same GET would be redirected the same way: not reopened.
			t.refuseGETStream()
			t.log.Warn("modern: the GET stream is not opened: its redirect was refused", "url", t.redacted, "err", re)
			return listenAttempt{stop: true}
		}
		return listenAttempt{reason: err.Error()}
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case first && (code == http.StatusMethodNotAllowed || code == http.StatusNotFound || code == http.StatusBadRequest):
		t.refuseGETStream()
		t.log.Debug("modern: the server offers no GET stream", "url", t.redacted, "status", code)
		wire.Drain(resp.Body)
		return listenAttempt{stop: true}
	case code == http.StatusMethodNotAllowed:
		t.refuseGETStream()
		t.log.Info("modern: the server no longer offers the GET stream; not reopened", "url", t.redacted)
		wire.Drain(resp.Body)
		return listenAttempt{stop: true}
	case code == http.StatusNotFound && session != nil && !origin.Redirected(resp):
		herr := wire.NewHTTPError(resp, http.MethodGet, t.redacted)
		t.sessionLost(session, fmt.Errorf("Streamable HTTP: reopening the GET stream: %w: %w", jsonrpc.ErrSessionExpired, herr))
		return listenAttempt{stop: true}
	case code < 200 || code > 299:
		herr := wire.NewHTTPError(resp, http.MethodGet, t.redacted)
		settle()
		return listenAttempt{reason: herr.Error(), throttled: throttleOf(resp)}
	}
	if ct := wire.MediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		wire.Drain(resp.Body)
		settle()
		return listenAttempt{reason: "unexpected content type " + fmt.Sprintf("%q", wire.Excerpt([]byte(ct)))}
	}

	settle()
	if gap != "" {
		t.gap(gap)
	}
	a := listenAttempt{opened: true}
	rd := sse.NewReader(resp.Body, t.maxSize)
	defer rd.Release()
	for {
		ev, err := rd.Next()
		if err != nil {
			c := cursorAt(rd)
			if c.lastEventID != "" && c.lastEventID != cur.lastEventID {
				cur.lastEventID, a.newID = c.lastEventID, true
			}
			if c.hasRetry {
				cur.retry, cur.hasRetry = c.retry, true
			}
			if errors.Is(err, io.EOF) {
				a.ended = true
				a.reason = "the server ended the stream"
			} else {
				a.reason = "the stream broke: " + err.Error()
			}
			return a
		}
		if ev.Type != "message" {
			t.log.Debug("modern: ignored an event", "stream", "GET", "type", ev.Type)
			continue
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // priming event
		}
		msgs, derr := jsonrpc.DecodeOwned(ev.Data) // the event's own buffer, not used again
		if derr != nil {
			t.log.Warn("modern: dropped invalid input from the server", "stream", "GET", "err", derr)
		}
		if len(msgs) > 0 {
			if t.queue.Push(t.ctx, len(ev.Data), msgs...) != nil {
				return listenAttempt{stop: true} // closed
			}
			a.delivered = true
		}
	}
}

// refuseGETStream records that the server offers no GET stream.
func (t *Transport) refuseGETStream() {
	t.mu.Lock()
	t.noGETStream = true
	t.mu.Unlock()
}
