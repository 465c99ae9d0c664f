package bridge

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// The initialize era on /mcp: a session per client (Mcp-Session-Id), every
// request answered on an SSE stream of its own with event ids, the GET
// stream for what belongs to no request, Last-Event-ID to resume any of
// them, DELETE to end the session.

// httpSession is a session's Streamable HTTP side.
type httpSession struct {
	*session
	mu      sync.Mutex
	get     *eventStream
	streams map[int]*eventStream // POST streams kept for resumption, newest maxKeptStreams
	order   []int
	nextID  int
}

// maxKeptStreams bounds the POST streams a session keeps for resumption.
const maxKeptStreams = 64

func (h *httpSession) newStream() *eventStream {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	st := newEventStream(h.nextID, false, h.b.o.QueueLen)
	h.streams[st.id] = st
	h.order = append(h.order, st.id)
	if len(h.order) > maxKeptStreams {
		delete(h.streams, h.order[0])
		h.order = h.order[1:]
	}
	return st
}

func (h *httpSession) stream(id int) *eventStream {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id == 0 {
		return h.get
	}
	return h.streams[id]
}

// sessions of the HTTP face, by id (the session table holds the core).
type httpSessions struct {
	mu sync.Mutex
	m  map[string]*httpSession
}

// openSession answers initialize; the upstream Conn is dialled in ctx
// (the request's, as the Observer made it), and ob follows the request.
func (b *Bridge) openSession(ctx context.Context, w http.ResponseWriter, msg *jsonrpc.Message, ob *observation) {
	refuse := func(status int, e *jsonrpc.Error) {
		answerJSON(w, status, &jsonrpc.Message{ID: msg.ID, Error: e}, ob)
	}
	var p mcp.InitializeParams
	if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &p) != nil {
		refuse(http.StatusBadRequest, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "initialize: params do not decode"))
		return
	}
	if !b.sessions.reserve(b.o.SessionIdle) {
		refuse(http.StatusServiceUnavailable, jsonrpc.NewError(jsonrpc.CodeInternalError, "too many sessions"))
		return
	}
	get := newEventStream(0, true, b.o.QueueLen)
	s, res, err := b.newSession(ctx, &p, get)
	if err != nil {
		refuse(http.StatusOK, b.rpcError(err))
		return
	}
	hs := &httpSession{session: s, get: get, streams: map[int]*eventStream{}}
	if !b.sessions.add(s) {
		s.close()
		refuse(http.StatusServiceUnavailable, jsonrpc.NewError(jsonrpc.CodeInternalError, "too many sessions"))
		return
	}
	b.httpSessions.mu.Lock()
	b.httpSessions.m[s.id] = hs
	b.httpSessions.mu.Unlock()
	w.Header().Set("Mcp-Session-Id", s.id)
	answerJSON(w, http.StatusOK, &jsonrpc.Message{ID: msg.ID, Result: res}, ob)
}

func (b *Bridge) lookupSession(id string) *httpSession {
	b.httpSessions.mu.Lock()
	defer b.httpSessions.mu.Unlock()
	hs := b.httpSessions.m[id]
	if hs != nil && b.sessions.get(id) == nil { // ended (evicted, closed)
		delete(b.httpSessions.m, id)
		return nil
	}
	return hs
}

func (b *Bridge) endSession(id string) {
	b.httpSessions.mu.Lock()
	delete(b.httpSessions.m, id)
	b.httpSessions.mu.Unlock()
	if s := b.sessions.remove(id); s != nil {
		s.close()
	}
}

func (b *Bridge) serveSession(w http.ResponseWriter, r *http.Request) {
	hs := b.lookupSession(r.Header.Get("Mcp-Session-Id"))
	if hs == nil {
		writeJSONError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.NewError(-32001, "session not found"))
		return
	}
	if v := strings.TrimSpace(r.Header.Get("Mcp-Protocol-Version")); v != "" && !slices.Contains(mcp.InitializeVersions, v) {
		writeJSONError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "unsupported MCP-Protocol-Version "+quote(v)))
		return
	}
	hs.touch()
	switch r.Method {
	case http.MethodDelete:
		b.endSession(hs.id)
		w.WriteHeader(http.StatusOK)
	case http.MethodGet:
		if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			http.Error(w, "GET needs Accept: text/event-stream", http.StatusNotAcceptable)
			return
		}
		st, after := hs.get, -1
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			sid, seq, ok := parseEventID(last)
			if st = hs.stream(sid); !ok || st == nil {
				http.Error(w, "no stream to resume for Last-Event-ID", http.StatusNotFound)
				return
			}
			after = seq
		}
		st.serve(r.Context(), w, after, hs.ctx.Done())
	case http.MethodPost:
		b.sessionPost(w, r, hs)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (b *Bridge) sessionPost(w http.ResponseWriter, r *http.Request, hs *httpSession) {
	body, ok := b.readBody(w, r)
	if !ok {
		return
	}
	msg, err := decodeBody(body)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeParseError, "the body is not one JSON-RPC message"))
		return
	}
	switch {
	case msg.IsResponse():
		hs.answered(msg)
		w.WriteHeader(http.StatusAccepted)
		return
	case msg.IsNotification():
		hs.notification(msg)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// The request runs on the session's context: a broken connection is
	// no cancellation in this era (notifications/cancelled is), and the
	// client may resume the stream to get the answer.
	ctx, ob := b.observe(hs.ctx, msg, hs.face(client.TransportStreamableHTTP, b.httpTrace(r.Header)))
	st := hs.newStream()
	ok = b.goTracked(func() {
		resp := hs.handle(ctx, msg, st)
		ob.end(resp)
		if resp != nil {
			st.send(resp)
		} else {
			st.mu.Lock()
			st.done = true
			close(st.wake)
			st.wake = make(chan struct{})
			st.mu.Unlock()
		}
	})
	if !ok {
		answerJSON(w, http.StatusServiceUnavailable, &jsonrpc.Message{ID: msg.ID, Error: jsonrpc.NewError(jsonrpc.CodeInternalError, errClosed.Error())}, ob)
		return
	}
	st.serve(r.Context(), w, 0, hs.ctx.Done())
}
