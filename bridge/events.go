package bridge

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/anymcp/anymcp/internal/servehttp"
	"github.com/anymcp/anymcp/jsonrpc"
)

// An eventStream is one SSE stream of a Streamable HTTP session: the
// answer to a POST (its related messages, then the response), or the GET
// stream. Every event has an id, "STREAM-SEQ" (the server core's), and
// the stream keeps its last events so that a client whose connection
// broke resumes it with a GET carrying Last-Event-ID (revision 2025-11-25:
// every stream starts with a priming event, an id and empty data, and
// says retry:).
//
// Bounds: a stream keeps at most qlen events and maxStreamBytes of their
// data. A POST stream that would go past them is cut: the call goes on,
// its answer is lost to that client, and nothing grows. The GET stream
// drops its oldest events instead, and a reader that fell that far behind
// is sent away to resume.
type eventStream struct {
	id  int
	get bool // the GET stream

	mu      sync.Mutex
	log     *servehttp.EventLog
	done    bool // a POST stream's response is in
	cut     bool
	wake    chan struct{}
	readers int
}

// maxStreamBytes bounds the data one stream keeps for resumption.
const maxStreamBytes = 16 << 20

func newEventStream(id int, get bool, qlen int) *eventStream {
	return &eventStream{id: id, get: get, log: servehttp.NewEventLog(strconv.Itoa(id), qlen, maxStreamBytes), wake: make(chan struct{})}
}

// send appends m (sink).
func (st *eventStream) send(m *jsonrpc.Message) bool {
	data, err := jsonrpc.Encode(m)
	if err != nil {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cut || st.done {
		return false
	}
	if _, dropped := st.log.Append(data); dropped > 0 && !st.get {
		st.cut = true
		st.log.Reset()
	}
	if m.IsResponse() && !st.get {
		st.done = true
	}
	close(st.wake)
	st.wake = make(chan struct{})
	return !st.cut
}

func (st *eventStream) eventID(seq int) string { return st.log.ID(seq) }

// parseEventID reads the id of an event of a session's stream.
func parseEventID(s string) (stream, seq int, ok bool) {
	sid, seq, ok := servehttp.ParseEventID(s)
	if !ok {
		return 0, 0, false
	}
	stream, err := strconv.Atoi(sid)
	return stream, seq, err == nil && stream >= 0
}

// serve writes the stream's events after seq after to w until the stream
// is done (a POST stream's response written), cut, ctx ends or stop
// closes. The GET stream's reader starts at the oldest event kept when
// after is -1.
func (st *eventStream) serve(ctx context.Context, w http.ResponseWriter, after int, stop <-chan struct{}) {
	servehttp.StartStream(w, false)
	st.mu.Lock()
	st.readers++
	if after < 0 {
		after = st.log.Last() - st.log.Len()
	}
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		st.readers--
		st.mu.Unlock()
	}()
	// The priming event: where this reader starts, and how soon to come back.
	if servehttp.WritePrime(w, st.eventID(after), retryAfter) != nil {
		return
	}
	_ = servehttp.Flush(w)
	var batch []servehttp.Event
	for {
		st.mu.Lock()
		kept, gap := st.log.After(after)
		batch = append(batch[:0], kept...)
		done, cut, wake := st.done, st.cut, st.wake
		st.mu.Unlock()
		if gap && after > 0 && st.get {
			return // fell behind what is kept: come back and resume
		}
		for _, e := range batch {
			if servehttp.WriteEvent(w, st.eventID(e.Seq), "message", e.Data) != nil {
				return
			}
			after = e.Seq
		}
		_ = servehttp.Flush(w)
		if cut || (done && len(batch) == 0) {
			return
		}
		if done {
			continue // written up to the response: one more look ends it
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-stop:
			return
		}
	}
}

// retryAfter is the retry: the bridge's streams advise.
const retryAfter = time.Second
