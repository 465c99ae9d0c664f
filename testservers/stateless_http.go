package testservers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Request headers of the Streamable HTTP transport of 2026-07-28 (besides
// MCP-Protocol-Version, HeaderProtocolVersion).
const (
	HeaderMethod = "Mcp-Method"
	HeaderName   = "Mcp-Name"
)

// Causes of a stateless HTTP request's cancellation other than its client.
var (
	errStreamCut     = errors.New("test server: the response stream was cut by a fault")
	errServerClosing = errors.New("test server: server closing")
	errAnswered      = errors.New("test server: answered")
)

// StartStateless starts a Streamable HTTP server that speaks only
// 2026-07-28: StartStreamable with opts.Eras set to StatelessOnly.
func StartStateless(opts HTTPOptions) *HTTPServer {
	opts.Eras = StatelessOnly
	return StartStreamable(opts)
}

// StartDualEra starts a Streamable HTTP server that speaks 2026-07-28 to
// stateless requests and the initialize-era revisions (initialize, sessions, GET
// stream) to the rest, on the same endpoint: StartStreamable with
// opts.Eras set to DualEra.
func StartDualEra(opts HTTPOptions) *HTTPServer {
	opts.Eras = DualEra
	return StartStreamable(opts)
}

// postEra decides the era of a POST: a StatelessOnly server's are stateless; on
// a DualEra server, one message (not initialize) whose _meta names a
// protocol version, or whose MCP-Protocol-Version header names a stateless
// one, is stateless; the rest is legacy.
func (h *StreamableHandler) postEra(r *http.Request, msgs []*jsonrpc.Message, batch bool) era {
	switch h.srv.opts.Eras {
	case StatelessOnly:
		return eraStateless
	case DualEra:
	default:
		return eraInitialize
	}
	if batch || len(msgs) != 1 || msgs[0].Method == "" || msgs[0].Method == "initialize" {
		return eraInitialize
	}
	if _, stateless, _ := metaOf(msgs[0].Params); stateless {
		return eraStateless
	}
	if slices.Contains(h.srv.opts.StatelessVersions, r.Header.Get(HeaderProtocolVersion)) {
		return eraStateless
	}
	return eraInitialize
}

// postStateless serves a POST of the stateless era: one request or
// notification, its headers checked against its body, answered on its
// own JSON body or SSE stream; closing that stream cancels the request.
func (h *StreamableHandler) postStateless(w http.ResponseWriter, r *http.Request, msgs []*jsonrpc.Message, batch bool) {
	if h.goSDKRefuses(w, r) {
		return
	}
	if batch || len(msgs) != 1 {
		h.statelessError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"JSON-RPC batches are not part of revision 2026-07-28"))
		return
	}
	m := msgs[0]
	switch {
	case m.IsResponse():
		h.statelessError(w, http.StatusBadRequest, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"a client sends no responses in revision 2026-07-28"))
		return
	case m.IsNotification():
		// 2026-07-28 defines no client notification over HTTP (closing a
		// stream cancels); one is accepted and ignored.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if m.Method == "initialize" {
		if _, stateless, _ := metaOf(m.Params); !stateless {
			h.answerInitialize(w, m)
			return
		}
	}
	rq, status, rpcErr := h.validateStateless(r, m)
	if rpcErr != nil {
		h.srv.count(func(st *Stats) { st.Refused[m.Method]++ })
		h.statelessError(w, status, m.ID, rpcErr)
		return
	}
	drop, answered := h.injectStateless(w, m.Method)
	if answered {
		return
	}
	h.serveStateless(w, r, m, rq, drop)
}

// statelessError answers a stateless request with status and a JSON-RPC error
// response carrying its id, counted in Stats.Errors.
func (h *StreamableHandler) statelessError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	h.srv.count(func(st *Stats) { st.Errors[e.Code]++ })
	body, _ := jsonrpc.Encode(&jsonrpc.Message{ID: id, Error: e})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// statelessStatus is the HTTP status 2026-07-28 gives a JSON-RPC error.
func statelessStatus(code int64) int {
	switch code {
	case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingClientCapability, jsonrpc.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusOK
}

// headerMismatch is error -32020, counted by the header at fault.
func (h *StreamableHandler) headerMismatch(header, msg string) (*reqInfo, int, *jsonrpc.Error) {
	h.srv.count(func(st *Stats) { st.HeaderRejects[header]++ })
	return nil, http.StatusBadRequest, jsonrpc.NewError(jsonrpc.CodeHeaderMismatch, "Header mismatch: "+msg)
}

// validateStateless checks a stateless request as 2026-07-28 says, in this
// order: MCP-Protocol-Version present (-32020) and supported (-32022),
// _meta complete (-32602) and naming the same version (-32020), Mcp-Method
// present and equal to the method (-32020), the method known in this
// era (404, -32601), Mcp-Name present and equal to params.name or
// params.uri for tools/call, prompts/get and resources/read, and to
// params.taskId for tasks/get, tasks/update and tasks/cancel (-32020), and
// for tools/call the Mcp-Param-* headers of the tool's x-mcp-header
// parameters (-32020). Every refusal but 404 has status 400.
func (h *StreamableHandler) validateStateless(r *http.Request, m *jsonrpc.Message) (*reqInfo, int, *jsonrpc.Error) {
	s := h.srv
	hv := r.Header.Get(HeaderProtocolVersion)
	if hv == "" {
		return h.headerMismatch("MCP-Protocol-Version", "the MCP-Protocol-Version header is required")
	}
	meta, stateless, _ := metaOf(m.Params)
	if !slices.Contains(s.opts.StatelessVersions, hv) {
		s.count(func(st *Stats) { st.VersionsSeen[hv]++ })
		return nil, http.StatusBadRequest, s.unsupportedVersion(hv, "")
	}
	if !stateless || meta.ProtocolVersion == nil {
		return nil, http.StatusBadRequest, invalidParams("_meta." + mcp.MetaProtocolVersion + " is required")
	}
	if *meta.ProtocolVersion != hv {
		return h.headerMismatch("MCP-Protocol-Version", "MCP-Protocol-Version header value "+strconv.Quote(hv)+
			" does not match body value "+strconv.Quote(*meta.ProtocolVersion))
	}
	rq, rpcErr := s.statelessInfo(meta, true)
	if rpcErr != nil {
		return nil, http.StatusBadRequest, rpcErr
	}
	switch hm := r.Header.Values(HeaderMethod); {
	case len(hm) == 0:
		return h.headerMismatch(HeaderMethod, "the Mcp-Method header is required")
	case len(hm) > 1 || hm[0] != m.Method:
		return h.headerMismatch(HeaderMethod, "Mcp-Method header value "+strconv.Quote(strings.Join(hm, ", "))+
			" does not match body value "+strconv.Quote(m.Method))
	}
	if !s.methodIn(m.Method, eraStateless) {
		return nil, http.StatusNotFound, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+m.Method)
	}
	var p struct {
		Name      *string         `json:"name"`
		URI       *string         `json:"uri"`
		TaskID    *string         `json:"taskId"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &p)
	var body *string
	switch m.Method {
	case "tools/call", "prompts/get":
		body = p.Name
	case "resources/read":
		body = p.URI
	case "tasks/get", "tasks/update", "tasks/cancel":
		body = p.TaskID
	default:
		return rq, 0, nil
	}
	hn := r.Header.Values(HeaderName)
	if len(hn) == 0 {
		return h.headerMismatch(HeaderName, "the Mcp-Name header is required for "+m.Method)
	}
	name, err := decodeHeaderValue(hn[0])
	switch {
	case len(hn) > 1:
		return h.headerMismatch(HeaderName, "the Mcp-Name header is repeated")
	case err != nil:
		return h.headerMismatch(HeaderName, "Mcp-Name: "+err.Error())
	case body == nil || name != *body:
		bv := "absent"
		if body != nil {
			bv = strconv.Quote(*body)
		}
		return h.headerMismatch(HeaderName, "Mcp-Name header value "+strconv.Quote(name)+" does not match body value "+bv)
	}
	if m.Method == "tools/call" {
		if def := s.lookupTool(name, eraStateless); def != nil && len(def.headers) > 0 {
			if header, why := checkParamHeaders(r.Header, def.headers, p.Arguments); header != "" {
				return h.headerMismatch(header, why)
			}
		}
	}
	return rq, 0, nil
}

// goSDKRefuses mimics InitializeLikeGoSDK: a POST naming an old revision
// the server does not speak in MCP-Protocol-Version gets 400 and a plain
// text body. It reports whether it answered.
func (h *StreamableHandler) goSDKRefuses(w http.ResponseWriter, r *http.Request) bool {
	o := h.srv.opts
	if o.Eras != StatelessOnly || o.StatelessInitialize != InitializeLikeGoSDK {
		return false
	}
	v := r.Header.Get(HeaderProtocolVersion)
	if v == "" || slices.Contains(o.StatelessVersions, v) || v >= mcp.Version20260728 {
		return false
	}
	h.srv.count(func(st *Stats) { st.InitializeRejected++ })
	http.Error(w, "Bad Request: Unsupported protocol version (supported versions: "+strings.Join(o.StatelessVersions, ",")+")", http.StatusBadRequest)
	return true
}

// answerInitialize answers an initialize on a StatelessOnly server as
// Options.StatelessInitialize says.
func (h *StreamableHandler) answerInitialize(w http.ResponseWriter, m *jsonrpc.Message) {
	s := h.srv
	if s.opts.StatelessInitialize != InitializeLikeGoSDK {
		s.count(func(st *Stats) { st.Refused[m.Method]++ })
		e := s.refuseInitialize(m.Params)
		h.statelessError(w, statelessStatus(e.Code), m.ID, e)
		return
	}
	s.count(func(st *Stats) { st.Requests[m.Method]++ })
	res, _ := json.Marshal(mcp.InitializeResult{
		ProtocolVersion: mcp.Version20251125,
		Capabilities:    serverCapabilities(),
		ServerInfo:      s.serverInfo(),
		Instructions:    s.opts.Instructions,
	})
	s.count(func(st *Stats) {
		st.Initializations++
		st.ProtocolVersion = mcp.Version20251125
	})
	resp := &jsonrpc.Message{ID: m.ID, Result: res}
	if h.opts.JSONResponse {
		writeJSONResponses(w, []*jsonrpc.Message{resp}, false)
		return
	}
	conn := newSSEConn(w, "")
	_ = conn.message(resp)
	conn.close()
}

// injectStateless draws the faults of a stateless POST: 429 and 503 answer it
// (it never runs); a drop rule cuts its answer stream (there are no
// event ids, so no resumption: a client must send it again, if safe).
func (h *StreamableHandler) injectStateless(w http.ResponseWriter, method string) (*FaultRule, bool) {
	var drop *FaultRule
	for _, f := range h.plan.draw(occasion{methods: []string{method}, sessionless: true}) {
		switch f.Fault {
		case FaultTooManyRequests, FaultUnavailable:
			h.srv.count(func(st *Stats) {
				st.Rejected++
				st.Faults[string(f.Fault)]++
			})
			f.reject(w)
			return nil, true
		case FaultDropStream, FaultDropStreamNoIDs:
			if drop == nil {
				drop = &f
			}
		}
	}
	return drop, false
}

// statelessChannel returns the channel of stateless requests to the core, nil
// once the handler is closed.
func (h *StreamableHandler) statelessChannel() *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	return h.stateless
}

// serveStateless runs a validated stateless request and answers it: on an SSE
// stream (always for subscriptions/listen, never for tasks/get), started
// by its first event, or as one JSON body. An error 2026-07-28 gives a status to (-32021)
// that comes before any event is answered as JSON with that status.
func (h *StreamableHandler) serveStateless(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message, rq *reqInfo, drop *FaultRule) {
	hs := h.statelessChannel()
	if hs == nil {
		httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "server closing")
		return
	}
	listen := m.Method == "subscriptions/listen"
	hctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(errAnswered)

	var (
		stream   *eventStream
		conn     *sseConn
		connDone <-chan struct{}
	)
	if listen || (!h.opts.JSONResponse && !pollOnly([]string{m.Method}, false)) {
		stream = hs.newEventStream(false, false)
		hs.register(stream) // for DropStreams
		conn = newSSEConn(w, "")
		defer conn.abortIfDropped()
		conn.noBuffering = true
		connDone = conn.done
		stream.attach(conn, -1, false, drop)
	}
	ex := newExchange(1, stream)
	if conn != nil {
		ex.beforeReply = func(resp *jsonrpc.Message) {
			if resp == nil || resp.Error == nil {
				return
			}
			if status := statelessStatus(resp.Error.Code); status != http.StatusOK {
				if body, err := jsonrpc.Encode(resp); err == nil {
					conn.answerInstead(status, body)
				}
			}
		}
	}
	rq.streamScoped = true
	ctx := withReqInfo(context.WithValue(hctx, exchangeKey{}, ex), rq)
	hs.core.Handle(ctx, m)

	stopKeepAlive := func() {}
	if listen && h.opts.KeepAlive > 0 {
		stopKeepAlive = keepAlive(conn, h.opts.KeepAlive)
	}
	select {
	case <-ex.done:
	case <-connDone:
		cancel(errStreamCut)
	case <-r.Context().Done():
		// Closing the stream is how a client cancels (set here too: the
		// deferred cancel may otherwise come before the parent's).
		cancel(errCancelledByClient)
	case <-hs.ended:
	case <-h.closing:
		cancel(errServerClosing)
	}
	stopKeepAlive()
	responses, complete, _ := ex.abandon()
	if stream != nil {
		stream.release(conn)
		hs.forget(stream)
		return
	}
	if r.Context().Err() != nil {
		return
	}
	switch {
	case !complete && ex.ran():
		// The request began to run: a 503 would say it did not. Its
		// answer is lost with the connection, as when a server fails.
		panic(http.ErrAbortHandler)
	case !complete:
		httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "server closing")
	case drop != nil:
		// The request ran; its answer is lost with the connection.
		h.srv.fault(drop.Fault)
		panic(http.ErrAbortHandler)
	case len(responses) == 0:
		w.WriteHeader(http.StatusNoContent)
	default:
		resp := responses[0]
		body, err := jsonrpc.Encode(resp)
		if err != nil {
			httpError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, err.Error())
			return
		}
		status := http.StatusOK
		if resp.Error != nil {
			status = statelessStatus(resp.Error.Code)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// keepAlive writes an SSE comment on conn every period until the
// returned stop is called (which waits for the writer to be gone).
func keepAlive(conn *sseConn, period time.Duration) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-conn.done:
				return
			case <-t.C:
				_ = conn.comment()
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
