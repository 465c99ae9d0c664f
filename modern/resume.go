package modern

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/internal/reqmeta"
	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/sse"
)

// minServerRetry is the least wait before a GET that follows a stream the
// server ended cleanly, whatever its retry: field asks for: a server that
// sends retry: 0 and ends every stream at once is polled ten times a
// second at most, not in a hot loop.
const minServerRetry = 100 * time.Millisecond

// serverPoll reports whether a stream that ended was a poll the server
// asked for, as the specification lets a server do with a long-running
// request and with the standalone stream: it ended the stream cleanly
// (ended) after an event id new to the client (newID), having sent a
// retry: field, on that stream or one before (hasRetry). The client comes
// back after the retry: (see pollWait) for as long as the server asks so,
// for a request's stream (resume) as for the standalone one (listen): a
// poll is no failed attempt, and it starts the policy's run over, as the
// server is plainly there and driving the stream. A stream ended with
// nothing new but an id, and no retry: ever, is a failed attempt: a server
// that primes every stream and ends it is not polled on the policy's
// backoff for ever.
func serverPoll(ended, newID, hasRetry bool) bool {
	return ended && newID && hasRetry
}

// pollWait is the wait before the GET of a poll the server asked for: its
// retry:, within the policy's MaxServerDelay, minServerRetry at least.
func pollWait(p reconnect.Policy, retry time.Duration) time.Duration {
	return max(min(retry, p.MaxServerDelay), minServerRetry)
}

// resume picks up the event stream of a request that ended before the
// response, as the specification's resumability rules say: a GET with
// Last-Event-ID set to the last event id seen, read like the original
// stream, after a wait. A stream that ends again is resumed again from the
// newest id. A stream the server ended cleanly after a new event id, with
// a retry: field sent on it or before, is a poll the server asked for (see
// serverPoll): the next GET waits its retry:, minServerRetry at least,
// costs nothing of the policy and starts its run over; a long-running
// request is polled so until its response comes, or the caller gives up.
// Any other end is a failed attempt of the policy. After the answer stream
// (the POST's) broke, the wait is the server's retry: when it sent one,
// else none: the end of the answer stream says nothing of the server. After
// a resumed stream that broke, the wait is the server's retry:, else none
// the first time since progress, and the policy's backoff after that.
// After one the server ended cleanly (with no new id, or no retry: ever)
// it is never none: the server's retry:, minServerRetry at least, or the
// policy's backoff, from InitialDelay — a server that ends every stream at
// once would otherwise get its GETs back at once. A message delivered (a
// notification, a server request) is progress and starts the policy's run
// over; a new event id alone is not, or a server that primes every stream
// and ends it would be resumed for ever. It returns the body of the stream
// that held the response, for the caller to finish, or the error Send
// reports: a *streamError matching jsonrpc.ErrOutcomeUnknown once resuming
// is impossible or the policy gives up. The request is never sent again.
//
// ctx is the request's context: the caller's cancellation and Close end
// the waits and the GETs.
func (x *exchange) resume(ctx context.Context, se *streamError) (io.ReadCloser, error) {
	t := x.t
	b := retry.Start(t.policy)
	session := x.session
	if x.isInit && x.newSession != "" {
		session = []string{x.newSession}
	}
	reason := se.reason()
	// poll: the stream that ended was a poll the server asked for; the
	// answer stream's id is new, as it is the first.
	poll := serverPoll(errors.Is(se.cause, io.EOF), true, se.hasRetry)
	var throttled throttle // the last GET's 429 or 503 with Retry-After
	for {
		if poll {
			reason = "the server ended the stream to be polled"
		}
		// ended: a resumed stream was ended cleanly by the server.
		ended := se.resumes > 0 && errors.Is(se.cause, io.EOF)
		wait, ok := nextGET(b, streamEnd{poll: poll, throttled: throttled, ended: ended, hasRetry: se.hasRetry, retry: se.retry,
			// The first try, or the first since a stream made progress
			// and broke: a cut connection says nothing of the server,
			// and a session may expire during a wait, taking the stream
			// with it.
			atOnce: b.Attempts() == 0 && !ended})
		if !ok {
			se.gaveUp = fmt.Sprintf("resumption exhausted after %d attempts (%s)", se.resumes, why(b))
			t.log.Warn("modern: gave up resuming the event stream of a request", "request", wire.Label(x.req),
				"reason", reason, "attempts", se.resumes, "last_event_id", se.lastEventID)
			return nil, se
		}
		throttled, poll = throttle{}, false
		t.log.Info("modern: resuming the event stream of a request", "request", wire.Label(x.req),
			"reason", reason, "wait", wait, "last_event_id", se.lastEventID, "attempt", se.resumes+1)
		if err := retry.Sleep(ctx, wait); err != nil {
			if ierr := x.interrupted(); ierr != nil {
				return nil, ierr
			}
			return nil, se
		}
		se.resumes++

		req, err := t.newRequest(ctx, http.MethodGet, nil, acceptSSE, session, x.version)
		if err != nil {
			return nil, err
		}
		req.Header["Last-Event-Id"] = []string{se.lastEventID}
		resp, err := t.streamClient.Do(req)
		if err != nil {
			err = origin.RedactError(err)
			if ierr := x.interrupted(); ierr != nil {
				return nil, ierr
			}
			if re, ok := errors.AsType[*jsonrpc.RedirectError](err); ok {
				// The same GET would be redirected the same way.
				se.last = re
				se.gaveUp = "the server redirected the resuming GET"
				t.log.Warn("modern: cannot resume the event stream of a request", "request", wire.Label(x.req), "err", re)
				return nil, se
			}
			se.last, reason = err, err.Error()
			continue
		}
		code := resp.StatusCode
		switch {
		case code == http.StatusMethodNotAllowed, code == http.StatusBadRequest,
			code == http.StatusNotFound && (session == nil || origin.Redirected(resp)):
			se.last = wire.NewHTTPError(resp, http.MethodGet, t.redacted)
			resp.Body.Close()
			se.gaveUp = fmt.Sprintf("the server cannot resume the stream (GET answered %d)", code)
			t.log.Warn("modern: cannot resume the event stream of a request", "request", wire.Label(x.req),
				"status", code, "last_event_id", se.lastEventID)
			return nil, se
		case code == http.StatusNotFound:
			herr := wire.NewHTTPError(resp, http.MethodGet, t.redacted)
			resp.Body.Close()
			// The request may have run: the outcome is unknown, and the
			// error must not match ErrSessionExpired (which says it did
			// not run). Recv tells the protocol layer about the session.
			se.last = herr
			se.gaveUp = "the session expired while resuming the stream"
			t.log.Warn("modern: cannot resume the event stream of a request: the session expired",
				"request", wire.Label(x.req), "last_event_id", se.lastEventID)
			t.sessionLost(session, fmt.Errorf("Streamable HTTP: resuming %s: %w: %w", wire.Label(x.req), jsonrpc.ErrSessionExpired, herr))
			return nil, se
		case code < 200 || code > 299:
			herr := wire.NewHTTPError(resp, http.MethodGet, t.redacted)
			resp.Body.Close()
			se.last, reason = herr, herr.Error()
			throttled = throttleOf(resp)
			continue
		}
		if ct := wire.MediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
			wire.Drain(resp.Body)
			resp.Body.Close()
			se.gaveUp = fmt.Sprintf("the server cannot resume the stream (GET answered %d with content type %q)", code, wire.Excerpt([]byte(ct)))
			t.log.Warn("modern: cannot resume the event stream of a request", "request", wire.Label(x.req),
				"content_type", wire.Excerpt([]byte(ct)), "last_event_id", se.lastEventID)
			return nil, se
		}

		delivered := x.delivered
		err = x.readSSE(resp.Body)
		if err == nil {
			return resp.Body, nil
		}
		resp.Body.Close()
		var next *streamError
		if !errors.As(err, &next) {
			return nil, err // the caller gave up, the transport closed, or an error without an id
		}
		if x.delivered > delivered {
			b.Progress()
		}
		newID := next.lastEventID != "" && next.lastEventID != se.lastEventID
		if newID {
			se.lastEventID = next.lastEventID
		}
		if next.hasRetry {
			se.retry, se.hasRetry = next.retry, true
		}
		poll = serverPoll(errors.Is(next.cause, io.EOF), newID, se.hasRetry)
		se.cause, se.last = next.cause, nil
		reason = se.reason()
		if errors.Is(se.cause, sse.ErrEventTooLarge) {
			se.gaveUp = "an event over the size limit cannot be resumed past"
			t.log.Warn("modern: gave up resuming the event stream of a request", "request", wire.Label(x.req), "reason", reason)
			return nil, se
		}
	}
}

// streamEnd is how the last GET of a stream went, a request's (resume) or
// the standalone one (listen), for the wait before the next.
type streamEnd struct {
	poll      bool     // it was a poll the server asked for (serverPoll)
	throttled throttle // it was answered 429 or 503 with Retry-After
	ended     bool     // the server ended it cleanly
	hasRetry  bool     // the server sent a retry: field, on it or before
	retry     time.Duration
	atOnce    bool // no wait, unless the server asked for one (resume's first try)
}

// nextGET records e on b and returns the wait before the next GET, and
// whether the policy's run allows it: a poll's retry: (see pollWait), at
// no cost; a throttle's Retry-After (see throttle.next); else the server's
// retry: (minServerRetry at least after a clean end), none when e.atOnce,
// or the policy's backoff, each a failed attempt.
func nextGET(b *retry.Backoff, e streamEnd) (time.Duration, bool) {
	switch {
	case e.poll:
		b.Progress()
		return pollWait(b.Policy(), e.retry), true
	case e.throttled.asked:
		return e.throttled.next(b)
	case e.hasRetry && e.ended:
		b.ServerRetry(max(e.retry, minServerRetry))
	case e.hasRetry:
		b.ServerRetry(e.retry)
	case e.atOnce:
		b.Immediate()
	}
	return b.Next()
}

// throttle is a 429 or 503 answer to a GET and the Retry-After it carried.
type throttle struct {
	asked      bool          // the answer carried a Retry-After
	retryAfter time.Duration // what it asked for
}

// throttleOf reads the Retry-After of resp, a 429 or 503 answer to a GET,
// with the reconnect package's parser: delta-seconds or an HTTP date.
func throttleOf(resp *http.Response) throttle {
	if !retry.IsThrottle(resp.StatusCode) {
		return throttle{}
	}
	d, ok := retry.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return throttle{asked: ok, retryAfter: d}
}

// next records the answer as a failed attempt of b's run, as the retrying
// client does for a POST answered so (retry.Backoff's throttle): the
// policy's MaxAttempts and Budget bound how long a server may keep a GET
// waiting, and a resumption that a server throttles for ever ends as
// outcome unknown. It returns the wait before the next GET: the server's
// Retry-After, minServerRetry at least (Retry-After: 0 is no hot loop); or,
// for a Retry-After over the policy's MaxRetryAfter, the cap — where a POST
// gives up at once, a GET waits the cap, as the stream it resumes or
// reopens may yet come back. ok is false when the run is over.
func (th throttle) next(b *retry.Backoff) (wait time.Duration, ok bool) {
	p := b.Policy()
	wait = p.MaxRetryAfter
	if th.retryAfter <= p.MaxRetryAfter {
		wait = max(th.retryAfter, minServerRetry)
	}
	b.ServerRetry(wait) // Next checks the budget with it (within MaxServerDelay)
	_, ok = b.Next()
	return wait, ok
}

// post sends a POST of body, carrying the session in sent, through the
// retrying client: the answers that say the server did not run it (429,
// 503 with Retry-After; a 503 without it too, for a request marked
// retry.WithResendable) are waited out and the POST sent again, as the
// policy says; so is a refused connection. Each time it is sent again it
// carries the session current then (see resendable), and sent is updated
// to say which; a resend refused because the session is gone is a
// *reconnect.ResendRefusedError, which says whether an answer before it
// left open that the server ran the request. A wait the policy or ctx cuts
// short is a *reconnect.RetryAfterError. sentInFull tells, once post has
// returned, whether the latest attempt went out in full (see
// wire.Delivery); it is false when no request was built.
func (t *Transport) post(ctx context.Context, m *jsonrpc.Message, body []byte, sent *carried) (*http.Response, bool, error) {
	if sent.session != nil {
		ctx = retry.BeforeResend(ctx, func(req *http.Request) error {
			cur, err := t.resendable(*sent, m.IsRequest())
			if err != nil {
				t.log.Info("modern: not sending a message again: its session is gone", "message", wire.Label(m), "err", err)
				return err
			}
			if cur.gen != sent.gen {
				t.log.Info("modern: sending a request again on the session that replaced its own", "message", wire.Label(m))
				setOrDelete(req.Header, "Mcp-Session-Id", cur.session)
				setOrDelete(req.Header, "Mcp-Protocol-Version", cur.version)
				*sent = cur
			}
			return nil
		})
	}
	req, out, err := wire.NewPost(ctx, http.MethodPost, t.endpoint, body)
	if err != nil {
		return nil, false, fmt.Errorf("Streamable HTTP: %w", err)
	}
	t.setHeaders(req.Header, true, acceptBoth, sent.session, sent.version)
	for k, v := range reqmeta.From(ctx) {
		req.Header[k] = v
	}
	resp, err := t.poster.Do(req)
	var ra *reconnect.RetryAfterError
	if errors.As(err, &ra) {
		t.log.Warn("modern: gave up sending a message the server would not take yet", "message", wire.Label(m),
			"status", ra.Status, "wait", ra.Wait, "reason", ra.Reason)
	}
	return resp, out.Sent(), err
}

// setOrDelete sets h[key] to v, or deletes it when v is nil.
func setOrDelete(h http.Header, key string, v []string) {
	if v == nil {
		delete(h, key)
		return
	}
	h[key] = v
}

// why says why the run b of a policy gave up.
func why(b *retry.Backoff) string {
	p := b.Policy()
	if p.MaxAttempts > 0 && b.Attempts() > p.MaxAttempts {
		return fmt.Sprintf("%d attempts in a row without progress", p.MaxAttempts)
	}
	return fmt.Sprintf("the %v budget without progress spent", p.Budget)
}
