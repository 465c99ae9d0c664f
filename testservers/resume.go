package testservers

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/anymcp/anymcp/internal/servehttp"
	"github.com/anymcp/anymcp/jsonrpc"
)

// Bounds of what a session keeps to resume its streams. A stream keeps
// the server core's default of events (servehttp.DefaultLogEvents and
// DefaultLogBytes): the oldest go first (the newest is always kept), so a
// resumption from an old id may miss some.
const (
	// maxRetained and maxRetainedBytes bound the finished POST streams a
	// session keeps because their client did not get everything: the
	// oldest go first (the newest is always kept).
	maxRetained      = 256
	maxRetainedBytes = 64 << 20
)

// eventStream is one logical SSE stream of a Streamable HTTP session: the
// answer to one POST, or the session's standalone GET stream. It outlives
// the HTTP responses (sseConn) that carry it: when its events have ids
// (HTTPOptions.Priming), it keeps them, so that a GET with Last-Event-ID
// resumes it on a new connection. Event ids are the server core's
// "<stream>-<seq>": the stream's number in the session, and the event's in
// the stream (0 is the priming event of a POST stream).
//
// A POST stream is finished once its last response is written; it is
// forgotten as soon as its client has had everything, else kept (up to
// maxRetained per session) until a resumption delivers the rest.
type eventStream struct {
	hs         *httpSession
	id         string
	ids        bool // events carry ids and are kept
	standalone bool // the GET stream

	mu       sync.Mutex
	conn     *sseConn // the connection carrying the stream now; nil while none does
	connMsgs int      // message events written on conn
	cutAt    int      // cut conn once connMsgs reaches it; -1: never
	retry    time.Duration
	cutFault Fault
	log      *servehttp.EventLog // the kept events; nil when events carry no ids
	missed   bool                // some kept event reached no connection
	done     bool                // POST streams: the last response is written
	ended    chan struct{}
}

func (hs *httpSession) newEventStream(ids, standalone bool) *eventStream {
	s := &eventStream{
		hs:         hs,
		id:         strconv.FormatInt(hs.streams.Add(1), 10),
		ids:        ids,
		standalone: standalone,
		cutAt:      -1,
		ended:      make(chan struct{}),
	}
	if ids {
		s.log = servehttp.NewEventLog(s.id, 0, 0)
	}
	return s
}

// eventID returns the id of event seq.
func (s *eventStream) eventID(seq int) string { return servehttp.EventID(s.id, seq) }

// primeID returns the id of a new connection's priming event: the last
// event's id (so that resuming from it replays what follows); "" when
// events carry no ids.
func (s *eventStream) primeIDLocked() string {
	if !s.ids {
		return ""
	}
	return s.log.ID(s.log.Last())
}

// attached reports whether a connection carries the stream now.
func (s *eventStream) attached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn != nil
}

// attach makes conn carry the stream from now on. With after < 0 conn
// is a new connection: it fails (ok false) when another connection
// carries the stream already, and its priming event (when events have
// ids) names the last event; start writes the header at once (else the
// first event does). With after >= 0 it is a resumption: it takes the
// stream over from the connection carrying it, if any, and replays the
// kept events after seq number after. A drop rule, when given, arms the
// cut of conn. complete reports whether the stream is finished and the
// client has all of it.
func (s *eventStream) attach(conn *sseConn, after int, start bool, drop *FaultRule) (complete, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		if after < 0 {
			return false, false
		}
		s.conn.end() // taken over: the newest connection wins
	}
	if after < 0 {
		conn.prime = s.primeIDLocked()
	}
	s.conn, s.connMsgs, s.cutAt = conn, 0, -1
	if drop != nil {
		s.cutAt, s.retry, s.cutFault = drop.AfterEvents, drop.Retry, drop.Fault
	}
	if start || after >= 0 {
		conn.start()
	}
	if after >= 0 {
		missed := false
		if s.log != nil {
			kept, _ := s.log.After(after)
			for _, ev := range kept {
				if conn.event("message", s.eventID(ev.Seq), ev.Data) != nil {
					missed = true
					break
				}
			}
		}
		s.missed = missed
	}
	if s.cutAt == 0 {
		s.cutLocked()
	}
	return s.done && !s.missed, true
}

// armCut cuts the connection carrying the stream after `after` more
// message events (at once when 0); nothing when none carries it.
func (s *eventStream) armCut(r FaultRule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return
	}
	s.cutAt, s.retry, s.cutFault = s.connMsgs+r.AfterEvents, r.Retry, r.Fault
	if r.AfterEvents == 0 {
		s.cutLocked()
	}
}

// cut cuts the connection carrying the stream now, if any, and reports
// whether there was one.
func (s *eventStream) cut(retry time.Duration, f Fault) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return false
	}
	s.retry, s.cutFault = retry, f
	s.cutLocked()
	return true
}

func (s *eventStream) cutLocked() {
	c := s.conn
	s.conn, s.cutAt = nil, -1
	c.cut(s.retry)
	s.hs.h.srv.fault(s.cutFault)
}

// write sends m on the stream: on its connection, if one carries it,
// and into the kept events, if they have ids. It fails when the message
// reaches nobody and cannot be resumed.
func (s *eventStream) write(m *jsonrpc.Message) error {
	data, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errStreamClosed
	}
	id := ""
	if s.ids {
		seq, _ := s.log.Append(data)
		id = s.eventID(seq)
	}
	if s.conn != nil {
		if err := s.conn.event("message", id, data); err != nil {
			s.conn = nil // broken: its handler returns
		} else {
			s.connMsgs++
			if s.cutAt >= 0 && s.connMsgs >= s.cutAt {
				s.cutLocked()
			}
			return nil
		}
	}
	if !s.ids {
		return errStreamClosed
	}
	s.missed = true
	return nil
}

// finish marks a POST stream whose last response is written: forgotten
// at once if its client had everything and no connection carries it,
// kept for a resumption if not.
func (s *eventStream) finish() {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done = true
	close(s.ended)
	missed, carried := s.missed, s.conn != nil
	s.mu.Unlock()
	switch {
	case missed:
		s.hs.retain(s)
	case !carried:
		s.hs.forget(s)
	} // else the handler of the connection forgets it when it returns
}

// release detaches conn, whose handler is returning, and closes it. It
// reports whether the stream is finished and its client had all of it,
// so that it can be forgotten.
func (s *eventStream) release(conn *sseConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == conn {
		s.conn = nil
	}
	conn.close()
	return s.done && !s.missed
}

// parseEventID splits an event id "<stream>-<seq>".
func parseEventID(id string) (stream string, seq int, ok bool) { return servehttp.ParseEventID(id) }

// register makes a POST stream findable by its id (to resume it, or to
// cut it).
func (hs *httpSession) register(s *eventStream) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.byID[s.id] = s
}

// forget drops a stream and what it kept.
func (hs *httpSession) forget(s *eventStream) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.byID[s.id] == s {
		delete(hs.byID, s.id)
	}
	for i, r := range hs.retained {
		if r.stream == s {
			hs.retainedBytes -= r.bytes
			hs.retained = slices.Delete(hs.retained, i, i+1)
			break
		}
	}
}

// retainedStream is a finished stream kept for a resumption, and the size
// of the events it keeps.
type retainedStream struct {
	stream *eventStream
	bytes  int
}

// retain keeps a finished stream whose client missed some of it, within
// maxRetained.
func (hs *httpSession) retain(s *eventStream) {
	s.mu.Lock()
	size := 0 // final: the stream is finished
	if s.log != nil {
		size = s.log.Bytes()
	}
	s.mu.Unlock()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.byID[s.id] != s {
		return
	}
	hs.retained = append(hs.retained, retainedStream{s, size})
	hs.retainedBytes += size
	for len(hs.retained) > 1 && (len(hs.retained) > maxRetained || hs.retainedBytes > maxRetainedBytes) {
		old := hs.retained[0]
		hs.retained = hs.retained[1:]
		hs.retainedBytes -= old.bytes
		delete(hs.byID, old.stream.id)
	}
}

// stream returns the session's stream with this id: a POST stream, or
// the GET stream.
func (hs *httpSession) stream(id string) *eventStream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.get != nil && hs.get.id == id {
		return hs.get
	}
	return hs.byID[id]
}

// openStreams returns the session's streams.
func (hs *httpSession) openStreams() []*eventStream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	out := make([]*eventStream, 0, len(hs.byID)+1)
	for _, s := range hs.byID {
		out = append(out, s)
	}
	if hs.get != nil {
		out = append(out, hs.get)
	}
	return out
}

// resume serves a GET with Last-Event-ID: the rest of the stream that
// event belongs to.
func (h *StreamableHandler) resume(w http.ResponseWriter, r *http.Request, hs *httpSession, last string) {
	id, seq, ok := parseEventID(last)
	var s *eventStream
	if ok {
		s = hs.stream(id)
	}
	if s == nil || !s.ids {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
			"Last-Event-ID "+strconv.Quote(last)+" names no stream of this session that can be resumed")
		return
	}
	var drop *FaultRule
	if s.standalone {
		if f, ok := first(h.plan.draw(occasion{get: true, session: hs}), FaultDropGET); ok {
			drop = &f
		}
	}
	// Counted first: the client may see the replay before attach returns.
	h.srv.count(func(st *Stats) { st.Resumed++ })
	conn := newSSEConn(w, "")
	defer conn.abortIfDropped()
	complete, _ := s.attach(conn, seq, true, drop)
	if complete {
		s.release(conn)
		hs.forget(s)
		return
	}
	h.serve(r, hs, s, conn)
}

// serve waits while conn carries s, until the client leaves, the server
// cuts the connection, a POST stream finishes, the session ends or the
// front-end closes.
func (h *StreamableHandler) serve(r *http.Request, hs *httpSession, s *eventStream, conn *sseConn) {
	var finished <-chan struct{}
	if !s.standalone {
		finished = s.ended
	}
	select {
	case <-r.Context().Done():
	case <-conn.done:
	case <-finished:
	case <-hs.ended:
	case <-h.closing:
	}
	if s.release(conn) && !s.standalone {
		hs.forget(s)
	}
}
