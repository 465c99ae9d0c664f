package bridge

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/servehttp"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// A session is one initialize-era client (Streamable HTTP with
// Mcp-Session-Id, HTTP+SSE, or stdio), with an upstream Conn of its own:
// its log level, resource subscriptions, roots and answers to the
// upstream's questions are its own, and an upstream sees them per
// connection. The transport hands each message to handle; what the
// session sends the client goes through sinks the transport provides.

// sink takes a message for the client; false when the client is gone or
// was cut off for not reading.
type sink interface {
	send(m *jsonrpc.Message) bool
}

type session struct {
	b       *Bridge
	id      string
	digest  string // id's digest, for an Observer (sessionDigest)
	version string
	conn    Upstream
	general sink // the GET stream, or the only channel (HTTP+SSE, stdio)
	ctx     context.Context
	cancel  context.CancelFunc

	mu       sync.Mutex
	active   []*inflight                      // requests being answered, oldest first
	asked    map[string]chan *jsonrpc.Message // the bridge's requests to the client, by id
	lastUsed time.Time
	closed   bool

	nextAsk atomic.Int64
}

// inflight is a request of the client's being answered.
type inflight struct {
	id     string // raw id
	out    sink   // where what relates to it goes
	cancel context.CancelFunc
}

type sinkKey struct{}

// newSession dials the session's upstream Conn for a client that sent
// initialize with p, and returns the session and the initialize result.
func (b *Bridge) newSession(ctx context.Context, p *mcp.InitializeParams, general sink) (*session, json.RawMessage, error) {
	sctx, cancel := context.WithCancel(b.ctx)
	s := &session{b: b, id: servehttp.NewSessionID(), general: general, ctx: sctx, cancel: cancel,
		asked: map[string]chan *jsonrpc.Message{}, lastUsed: time.Now()}
	if b.o.Observer != nil {
		s.digest = sessionDigest(s.id)
	}
	s.version = mcp.Version20251125
	if slices.Contains(mcp.InitializeVersions, p.ProtocolVersion) {
		s.version = p.ProtocolVersion
	}
	capsRaw, _ := json.Marshal(p.Capabilities)
	opts := []client.Option{
		client.WithClientInfo("anymcp-bridge", "1"),
		client.OnLog(func(lp mcp.LoggingMessageParams) { s.notifyRelated("notifications/message", lp) }),
	}
	changes := Changes{
		Tools:           func() { s.notifyGeneral("notifications/tools/list_changed", struct{}{}) },
		Prompts:         func() { s.notifyGeneral("notifications/prompts/list_changed", struct{}{}) },
		Resources:       func() { s.notifyGeneral("notifications/resources/list_changed", struct{}{}) },
		ResourceUpdated: func(uri string) { s.notifyGeneral("notifications/resources/updated", map[string]string{"uri": uri}) },
	}
	dc := capsOf(capsRaw)
	opts = append(opts, boundHandlers(s, dc)...)
	conn, err := b.dial(ctx, Downstream{Options: opts, Changes: changes, Elicit: elicitVia(s, dc)})
	if err != nil {
		cancel()
		return nil, nil, &UpstreamError{Op: "connecting", Err: err}
	}
	s.conn = conn
	info := conn.Info()
	c := info.Capabilities
	if c.Resources != nil && info.Era == mcp.EraStateless {
		rc := *c.Resources
		rc.Subscribe = true // resources/subscribe goes upstream as a listen subscription
		c.Resources = &rc
	}
	c.Extensions = nil // the stateless revision's extensions are not this era's
	if info.Era == mcp.EraStateless {
		c.Logging = &struct{}{} // logging/setLevel is answered for the session
	}
	res, _ := json.Marshal(mcp.InitializeResult{ProtocolVersion: s.version, Capabilities: c, ServerInfo: info.ServerInfo, Instructions: info.Instructions})
	return s, res, nil
}

// face describes the session's requests to an Observer; tc is the trace
// context of the HTTP request that carried one (Bridge.httpTrace).
func (s *session) face(transport string, tc client.TraceContext) face {
	return face{transport: transport, era: mcp.EraInitialize, version: s.version, session: s.digest, httpTrace: tc}
}

// close ends the session and its upstream Conn.
func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	_ = s.conn.Close()
}

func (s *session) touch() {
	s.mu.Lock()
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

func (s *session) idleSince() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.active) > 0 {
		return time.Now()
	}
	return s.lastUsed
}

func (s *session) notifyGeneral(method string, params any) {
	raw, _ := json.Marshal(params)
	s.general.send(&jsonrpc.Message{Method: method, Params: raw})
}

// notifyRelated sends what the upstream sent without saying which call it
// belongs to (its log messages, on the connection): on the stream of the
// latest request being answered, else on the general one.
func (s *session) notifyRelated(method string, params any) {
	raw, _ := json.Marshal(params)
	s.relatedSink(nil).send(&jsonrpc.Message{Method: method, Params: raw})
}

func (s *session) relatedSink(ctx context.Context) sink {
	if ctx != nil {
		if out, ok := ctx.Value(sinkKey{}).(sink); ok {
			return out
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.active); n > 0 {
		return s.active[n-1].out
	}
	return s.general
}

// ask puts a question of the upstream's to the client as a request of the
// bridge's (asker), on the stream of the call it belongs to when known.
func (s *session) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	id := "bridge-" + strconv.FormatInt(s.nextAsk.Add(1), 10)
	ch := make(chan *jsonrpc.Message, 1)
	s.mu.Lock()
	if s.closed || len(s.asked) >= maxAsks {
		s.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the client cannot be asked now")
	}
	s.asked[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.asked, id)
		s.mu.Unlock()
	}()
	if !s.relatedSink(ctx).send(&jsonrpc.Message{ID: jsonrpc.String(id), Method: method, Params: params}) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the client is not connected")
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		raw, _ := json.Marshal(map[string]any{"requestId": id, "reason": "the upstream gave the request up"})
		s.general.send(&jsonrpc.Message{Method: "notifications/cancelled", Params: raw})
		return nil, ctx.Err()
	case <-s.ctx.Done():
		return nil, errClosed
	}
}

// answered takes the client's answer to a request of the bridge's.
func (s *session) answered(m *jsonrpc.Message) {
	s.mu.Lock()
	ch := s.asked[m.ID.Raw()]
	if ch == nil {
		var str string
		if json.Unmarshal([]byte(m.ID.Raw()), &str) == nil {
			ch = s.asked[str]
		}
	}
	s.mu.Unlock()
	if ch != nil {
		select {
		case ch <- m:
		default:
		}
	}
}

// notification handles a notification of the client's.
func (s *session) notification(m *jsonrpc.Message) {
	switch m.Method {
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.cancelRequest(string(p.RequestID))
		}
	case "notifications/roots/list_changed":
		s.b.goTracked(func() {
			ctx, cancel := context.WithTimeout(s.ctx, unsubscribeTimeout)
			defer cancel()
			_ = s.conn.NotifyRootsChanged(ctx)
		})
	}
}

func (s *session) cancelRequest(rawID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.active {
		if f.id == rawID {
			f.cancel()
		}
	}
}

// handle answers a request of the client's; what relates to it goes to
// out. Requests run concurrently; the same request sent again (same id,
// same params) while it runs or soon after gets the first one's answer.
func (s *session) handle(ctx context.Context, msg *jsonrpc.Message, out sink) *jsonrpc.Message {
	s.touch()
	k := keyOf("session\x00"+s.id, msg)
	e, first, ok := s.b.dedupe.begin(k, time.Now())
	if ok && !first {
		select {
		case <-e.done:
			if e.resp != nil {
				return e.resp
			}
		case <-ctx.Done():
			return nil
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &inflight{id: msg.ID.Raw(), out: out, cancel: cancel}
	s.mu.Lock()
	s.active = append(s.active, f)
	s.mu.Unlock()
	resp := &jsonrpc.Message{ID: msg.ID}
	result, err := s.result(context.WithValue(cctx, sinkKey{}, out), msg)
	s.mu.Lock()
	s.active = slices.DeleteFunc(s.active, func(x *inflight) bool { return x == f })
	s.lastUsed = time.Now()
	s.mu.Unlock()
	if err != nil {
		resp.Error = err
	} else {
		resp.Result = result
	}
	if ok {
		if cctx.Err() != nil && ctx.Err() != nil {
			s.b.dedupe.forget(k, e)
		} else {
			s.b.dedupe.end(e, resp, time.Now())
		}
	}
	if cctx.Err() != nil && ctx.Err() == nil && err != nil {
		return nil // cancelled by the client: no answer is expected
	}
	return resp
}

func (s *session) result(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, *jsonrpc.Error) {
	r, perr := parseRequest(msg.Method, msg.Params)
	if perr != nil {
		return nil, perr
	}
	ctx = r.traced(ctx)
	var err error
	switch msg.Method {
	case "initialize":
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "the session is initialized already")
	case "ping":
		return json.RawMessage(`{}`), nil
	case "logging/setLevel":
		var p mcp.SetLevelParams
		if json.Unmarshal(msg.Params, &p) != nil || p.Level == "" {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "logging/setLevel: level is required")
		}
		err = s.conn.SetLogLevel(ctx, p.Level)
	case "resources/subscribe", "resources/unsubscribe":
		uri := r.str("uri")
		if uri == "" {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, msg.Method+": uri is required")
		}
		if msg.Method == "resources/subscribe" {
			err = s.conn.Subscribe(ctx, uri)
		} else {
			err = s.conn.Unsubscribe(ctx, uri)
		}
	default:
		if !s.b.knownMethod(msg.Method) && !s.knownHere(msg.Method) {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+quote(msg.Method))
		}
		out, _ := ctx.Value(sinkKey{}).(sink)
		notify := func(method string, params any) {
			if out != nil {
				raw, _ := json.Marshal(params)
				out.send(&jsonrpc.Message{Method: method, Params: raw})
			}
		}
		raw, err := s.b.call(ctx, s.conn, r, r.upstreamParams(nil), notify)
		if err != nil {
			return nil, s.b.rpcError(err)
		}
		// The client is of the initialize era, whatever the upstream's.
		return forInitializeEra(raw), nil
	}
	if err != nil {
		return nil, s.b.rpcError(err)
	}
	return json.RawMessage(`{}`), nil
}

// knownHere are requests the session's own upstream offers beyond the
// shared one's (none today: both dial the same server).
func (s *session) knownHere(method string) bool { return false }

// sessionTable holds the sessions, bounded: the server core's table,
// which asks each session when it was last used (one with a request in
// progress is never idle).
type sessionTable struct {
	t *servehttp.Table[*session]
}

func newSessionTable(max int) *sessionTable {
	return &sessionTable{t: servehttp.NewTable(max, (*session).idleSince)}
}

// reserve makes room for one more session, ending one idle longer than
// idle if need be; false when none can be made.
func (t *sessionTable) reserve(idle time.Duration) bool {
	oldest, was, ok := t.t.MakeRoom(idle)
	if was {
		oldest.close()
	}
	return ok
}

func (t *sessionTable) add(s *session) bool { return t.t.Add(s.id, s) }

func (t *sessionTable) get(id string) *session {
	s, _ := t.t.Get(id)
	return s
}

func (t *sessionTable) remove(id string) *session {
	s, _ := t.t.Remove(id)
	return s
}

func (t *sessionTable) closeAll() {
	for _, s := range t.t.Drain() {
		s.close()
	}
}

// idle returns the sessions idle since before cutoff, removed from the table.
func (t *sessionTable) idle(cutoff time.Time) []*session { return t.t.Idle(cutoff) }

func (t *sessionTable) len() int { return t.t.Len() }
