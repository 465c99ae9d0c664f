package bridge

import (
	"context"
	"net/http"
	"sync"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/servehttp"
	"github.com/anymcp/anymcp/jsonrpc"
)

// HTTP+SSE (revision 2024-11-05): GET /sse opens the stream, whose first
// event, endpoint, names where to POST (/message?sessionId=…, or
// Options.MessagePath); every answer
// and notification comes on the stream. The stream is the session: when it
// ends, so does the session and its upstream Conn.

type legacyStreams struct {
	mu sync.Mutex
	m  map[string]*channel
}

func (b *Bridge) serveLegacyStream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !b.sessions.reserve(b.o.SessionIdle) {
		http.Error(w, "too many sessions", http.StatusServiceUnavailable)
		return
	}
	id := servehttp.NewSessionID()
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	out := newQueueSink(b.o.QueueLen)
	ch := newChannel(ctx, b, out, client.TransportSSE)
	b.legacy.mu.Lock()
	if len(b.legacy.m) >= b.o.MaxSessions {
		b.legacy.mu.Unlock()
		http.Error(w, "too many sessions", http.StatusServiceUnavailable)
		return
	}
	b.legacy.m[id] = ch
	b.legacy.mu.Unlock()
	defer func() {
		b.legacy.mu.Lock()
		delete(b.legacy.m, id)
		b.legacy.mu.Unlock()
		ch.end()
	}()

	servehttp.StartStream(w, false)
	if servehttp.WriteEvent(w, "", "endpoint", []byte(b.o.MessagePath+"?sessionId="+id)) != nil {
		return
	}
	_ = servehttp.Flush(w)
	for {
		select {
		case m := <-out.q:
			data, err := jsonrpc.Encode(m)
			if err != nil {
				continue
			}
			if servehttp.WriteEvent(w, "", "message", data) != nil {
				return
			}
			_ = servehttp.Flush(w)
		case <-out.gone:
			return
		case <-r.Context().Done():
			return
		case <-b.ctx.Done():
			return
		}
	}
}

func (b *Bridge) serveLegacyPost(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	b.legacy.mu.Lock()
	ch := b.legacy.m[r.URL.Query().Get("sessionId")]
	b.legacy.mu.Unlock()
	if ch == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	body, ok := b.readBody(w, r)
	if !ok {
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		http.Error(w, "the body is not one JSON-RPC message", http.StatusBadRequest)
		return
	}
	ch.dispatch(msg, b.httpTrace(r.Header))
	w.WriteHeader(http.StatusAccepted)
}
