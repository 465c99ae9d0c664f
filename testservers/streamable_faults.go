package testservers

import (
	"net/http"
	"time"
)

// inject draws the faults of a POST carrying requests (hs is nil for an
// initialize that opens a session). It reports whether a fault answered
// the POST itself, so that the core must not see it; else it returns the
// first drop-stream fault that fired, for the POST's stream, after
// arming the cut of the GET stream if that fired.
func (h *StreamableHandler) inject(w http.ResponseWriter, hs *httpSession, methods []string) (*FaultRule, bool) {
	o := occasion{methods: methods, sessionless: h.opts.Stateless}
	if hs != nil {
		o.session, o.getOpen = hs, hs.getOpen()
	}
	var drop *FaultRule
	for _, f := range h.plan.draw(o) {
		switch f.Fault {
		case FaultTooManyRequests, FaultUnavailable:
			h.srv.count(func(st *Stats) {
				st.Rejected++
				st.Faults[string(f.Fault)]++
			})
			f.reject(w)
			return nil, true
		case FaultExpireSession:
			if f.LetRun {
				h.expireLetRun(hs)
			} else {
				h.expire(hs)
			}
			httpError(w, http.StatusNotFound, CodeSessionNotFound, "session expired")
			return nil, true
		case FaultRestart:
			h.Restart()
			httpError(w, http.StatusNotFound, CodeSessionNotFound, "session lost: the server restarted")
			return nil, true
		case FaultDropGET:
			hs.getStream().armCut(f)
		case FaultDropStream, FaultDropStreamNoIDs:
			if drop == nil {
				drop = &f
			}
		}
	}
	return drop, false
}

// Inject arms more faults, after those of HTTPOptions.Faults.
func (h *StreamableHandler) Inject(rules ...FaultRule) { h.plan.add(rules...) }

// ExpireSession ends the session id as if the server had expired it: its
// streams close, its requests are cancelled, what it kept to resume its
// streams is gone, and later requests carrying the id get 404. It
// reports whether the session existed.
func (h *StreamableHandler) ExpireSession(id string) bool {
	h.mu.Lock()
	hs, _ := h.sessions.Get(id)
	h.mu.Unlock()
	return hs != nil && h.expire(hs)
}

// ExpireAll expires every session (see ExpireSession) and returns how
// many there were.
func (h *StreamableHandler) ExpireAll() int {
	n := 0
	for _, hs := range h.live() {
		if h.expire(hs) {
			n++
		}
	}
	return n
}

// expire ends a session and counts it as expired, unless it had ended.
func (h *StreamableHandler) expire(hs *httpSession) bool {
	if !h.endSession(hs) {
		return false
	}
	h.srv.count(func(st *Stats) {
		st.SessionsExpired++
		st.Faults[string(FaultExpireSession)]++
	})
	return true
}

// Bounds of the sessions expired with LetRun that the handler keeps for
// the resumption of their streams.
const (
	expiredGrace = 30 * time.Second
	maxExpired   = 256
)

// expiredSession is a session expired with LetRun, and when.
type expiredSession struct {
	hs *httpSession
	at time.Time
}

// expireLetRun expires a session for new requests: its running requests
// finish (in a goroutine Close waits for), then it ends; meanwhile and
// for expiredGrace its streams can be resumed.
func (h *StreamableHandler) expireLetRun(hs *httpSession) {
	hs.admit.Lock()
	defer hs.admit.Unlock()
	h.mu.Lock()
	if h.closed || !h.sessions.RemoveIf(hs.id, func(x *httpSession) bool { return x == hs }) {
		h.mu.Unlock()
		return
	}
	now := time.Now()
	for id, e := range h.expired {
		if now.Sub(e.at) > expiredGrace {
			delete(h.expired, id)
		}
	}
	for len(h.expired) >= maxExpired {
		oldest := ""
		for id, e := range h.expired {
			if oldest == "" || e.at.Before(h.expired[oldest].at) {
				oldest = id
			}
		}
		delete(h.expired, oldest)
	}
	h.expired[hs.id] = expiredSession{hs, now}
	h.bg.Add(1)
	h.mu.Unlock()
	h.srv.count(func(st *Stats) {
		st.SessionsExpired++
		st.Faults[string(FaultExpireSession)]++
	})
	go func() {
		defer h.bg.Done()
		hs.core.Drain()
		h.endSession(hs)
	}()
}

// resumable returns the session a GET with Last-Event-ID names: open,
// or expired with LetRun within expiredGrace.
func (h *StreamableHandler) resumable(id string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if hs, ok := h.sessions.Get(id); ok {
		return hs
	}
	if e, ok := h.expired[id]; ok && time.Since(e.at) <= expiredGrace {
		return e.hs
	}
	return nil
}

// Restart loses every session at once, as a restarted server does: their
// streams are cut, their requests cancelled, and every old session id
// gets 404 from now on (a stateless server gets a fresh shared session).
// Stateless requests running are cancelled too and their streams cut,
// subscriptions/listen ones included, without an answer. The handler goes
// on serving: clients initialize (or listen) again.
func (h *StreamableHandler) Restart() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	old, oldStateless := h.shared, h.stateless
	if old != nil {
		h.shared = h.newHTTPSession("")
	}
	if oldStateless != nil {
		h.stateless = h.newStatelessChannel()
	}
	expired := h.expired
	h.expired = make(map[string]expiredSession)
	h.mu.Unlock()
	for _, e := range expired {
		h.endSession(e.hs)
	}
	n := 0
	for _, hs := range h.live() {
		if h.endSession(hs) {
			n++
		}
	}
	if old != nil {
		h.endSession(old)
	}
	if oldStateless != nil {
		h.endSession(oldStateless) // its requests are cancelled, its streams cut
	}
	h.srv.count(func(st *Stats) {
		st.SessionsExpired += n
		st.Faults[string(FaultRestart)]++
	})
}

// DropStreams cuts every open SSE stream now (the answers to POSTs and
// the GET streams): with retry > 0 it sends "retry: <ms>" and ends each
// cleanly, as a server that has its clients poll; without, it aborts
// their connections, as a network failure would. Streams whose events
// have ids can be resumed; the others are lost. It returns how many
// streams it cut.
func (h *StreamableHandler) DropStreams(retry time.Duration) int {
	h.mu.Lock()
	all := h.liveLocked()
	if h.shared != nil {
		all = append(all, h.shared)
	}
	if h.stateless != nil {
		all = append(all, h.stateless)
	}
	h.mu.Unlock()
	n := 0
	for _, hs := range all {
		for _, s := range hs.openStreams() {
			f := FaultDropStreamNoIDs
			switch {
			case s.standalone:
				f = FaultDropGET
			case s.ids:
				f = FaultDropStream
			}
			if s.cut(retry, f) {
				n++
			}
		}
	}
	return n
}

// live returns the sessions with an id open now.
func (h *StreamableHandler) live() []*httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.liveLocked()
}

func (h *StreamableHandler) liveLocked() []*httpSession {
	return h.sessions.All()
}

// Inject arms more faults; see StreamableHandler.Inject.
func (s *HTTPServer) Inject(rules ...FaultRule) { s.h.Inject(rules...) }

// ExpireSession expires a session; see StreamableHandler.ExpireSession.
func (s *HTTPServer) ExpireSession(id string) bool { return s.h.ExpireSession(id) }

// ExpireAll expires every session; see StreamableHandler.ExpireAll.
func (s *HTTPServer) ExpireAll() int { return s.h.ExpireAll() }

// Restart loses every session; see StreamableHandler.Restart.
func (s *HTTPServer) Restart() { s.h.Restart() }

// DropStreams cuts every open SSE stream; see StreamableHandler.DropStreams.
func (s *HTTPServer) DropStreams(retry time.Duration) int { return s.h.DropStreams(retry) }
