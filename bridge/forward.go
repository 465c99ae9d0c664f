package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// request is a downstream request as the bridge forwards it: its params
// split into the members the upstream gets and the _meta members that
// were the downstream's own business.
type request struct {
	method  string
	params  json.RawMessage            // as sent
	members map[string]json.RawMessage // params, _meta included (slices of params)
	// foldedMeta: a member's key is "_meta" only without regard to case
	// (which encoding/json would read as _meta into a struct).
	foldedMeta bool
	token      json.RawMessage            // the downstream's progressToken, nil when none
	meta       map[string]json.RawMessage // the downstream's _meta as sent
	// forClient are the capabilities of a stateless client: a stateless
	// upstream sees them, and its input_required answers come back raw.
	forClient json.RawMessage
	// trace is the downstream's trace context (SEP-414), which the
	// upstream request continues (through the client's seam, see
	// traced).
	trace client.TraceContext
	// logLevel is the level a stateless client asked log records at
	// (its _meta's io.modelcontextprotocol/logLevel); "": none.
	logLevel mcp.LoggingLevel
}

// parseRequest splits params (a JSON object or nothing). The members are
// slices of params, not copies.
func parseRequest(method string, params json.RawMessage) (*request, *jsonrpc.Error) {
	r := &request{method: method, params: params}
	if p := bytes.TrimSpace(params); len(p) != 0 && string(p) != "null" {
		var ok bool
		if r.members, r.foldedMeta, ok = rawMap(params, "_meta"); !ok {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params must be a JSON object")
		}
	} else {
		r.members = map[string]json.RawMessage{}
	}
	if m, ok := r.members["_meta"]; ok && present(m) {
		var isObject bool
		if r.meta, _, isObject = rawMap(m, ""); !isObject {
			r.meta = nil
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params._meta must be a JSON object")
		}
	}
	if t, ok := r.meta["progressToken"]; ok && present(t) {
		r.token = t
	}
	r.trace = client.TraceContext{Traceparent: metaString(r.meta, "traceparent"), Tracestate: metaString(r.meta, "tracestate"), Baggage: metaString(r.meta, "baggage")}
	return r, nil
}

// ownMeta are the _meta keys that describe the downstream hop: the bridge
// answers them itself and the upstream Conn sets its own (the trace
// context goes in the request's context: see traced).
var ownMeta = []string{"progressToken", mcp.MetaProtocolVersion, mcp.MetaClientInfo, mcp.MetaClientCapabilities, mcp.MetaLogLevel, "traceparent", "tracestate", "baggage"}

// metaString returns the string member key of meta, "" when absent or not
// a string.
func metaString(meta map[string]json.RawMessage, key string) string {
	if v, ok := meta[key]; ok {
		return plainString(v)
	}
	return ""
}

// traced returns ctx carrying the downstream's trace context, so that the
// upstream request continues its trace: the upstream Conn passes it on in
// _meta as it came, or, with an Observer (the otel module's), makes its
// span a child of it. A trace context the bridge's Observer set in ctx
// (its SERVER span's) goes instead.
func (r *request) traced(ctx context.Context) context.Context {
	if ctx.Value(observedTrace{}) != nil {
		return ctx
	}
	return client.WithTraceContext(ctx, r.trace)
}

// str returns the string member name of the params, "" when absent or not a string.
func (r *request) str(name string) string {
	if v, ok := r.members[name]; ok {
		return plainString(v)
	}
	return ""
}

// upstreamParams are the params to send upstream: the downstream's less
// its hop-level _meta, with extra members set (nil values removed).
func (r *request) upstreamParams(extra map[string]json.RawMessage) json.RawMessage {
	if extra == nil {
		if out, ok := r.plainUpstreamParams(); ok {
			return out
		}
	}
	return r.upstreamParamsMaps(extra)
}

// upstreamParamsMaps is upstreamParams through maps, for any request.
func (r *request) upstreamParamsMaps(extra map[string]json.RawMessage) json.RawMessage {
	out := make(map[string]json.RawMessage, len(r.members)+len(extra))
	for k, v := range r.members {
		out[k] = v
	}
	delete(out, "_meta")
	if len(r.meta) > 0 {
		meta := make(map[string]json.RawMessage, len(r.meta))
		for k, v := range r.meta {
			meta[k] = v
		}
		for _, k := range ownMeta {
			delete(meta, k)
		}
		if len(meta) > 0 {
			b, _ := json.Marshal(meta)
			out["_meta"] = b
		}
	}
	for k, v := range extra {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// plainUpstreamParams is upstreamParams with no extra members, when the
// downstream's _meta holds only hop-level keys (the common case): the
// same bytes, made without maps. false: not that case.
func (r *request) plainUpstreamParams() (json.RawMessage, bool) {
	for k := range r.meta {
		if !slices.Contains(ownMeta, k) {
			return nil, false
		}
	}
	var arr [maxFastMembers]member
	ms := arr[:0]
	for k, v := range r.members {
		if k == "_meta" {
			continue
		}
		if len(ms) == len(arr) {
			return nil, false
		}
		ms = append(ms, member{key: k, val: v})
	}
	out, ok := appendMembers(make([]byte, 0, len(r.params)), ms)
	return out, ok
}

// call sends the request upstream on conn with params and returns the raw
// result, passing progress to notify under the downstream's token.
func (b *Bridge) call(ctx context.Context, conn Upstream, r *request, params json.RawMessage, notify func(method string, params any)) (json.RawMessage, error) {
	var opts []client.CallOption
	if r.forClient != nil {
		opts = append(opts, client.ForClient(r.forClient))
	}
	if r.logLevel != "" && notify != nil {
		min := severity(r.logLevel)
		opts = append(opts, client.WithCallLogs(r.logLevel, func(p mcp.LoggingMessageParams) {
			// An initialize-era upstream sends at its session's level:
			// the client gets what it asked for only.
			if severity(p.Level) >= min {
				notify("notifications/message", p)
			}
		}))
	}
	if r.token != nil && notify != nil {
		token := r.token
		opts = append(opts, client.WithProgress(func(p mcp.ProgressParams) {
			notify("notifications/progress", progressOut{Token: token, Progress: p.Progress, Total: p.Total, Message: p.Message})
		}))
	}
	var p any = params
	if r.method == "tools/call" && r.forClient != nil && offersTasks(conn) {
		if tp := typedCall(params); tp != nil {
			// A 2025-11-25 upstream runs some tools only as tasks, asked
			// for in the call: given typed params, the Conn asks when the
			// tool must be one and waits for it, for a client whose era
			// has no such task (a 2026-07-28 client).
			p = tp
		}
	}
	var raw json.RawMessage
	err := conn.Call(r.traced(ctx), r.method, p, &raw, opts...)
	if _, typed := p.(*mcp.CallToolParams); typed && err == nil {
		raw = withoutTaskMeta(raw)
	}
	return raw, err
}

// offersTasks reports whether conn's upstream serves the tasks of revision
// 2025-11-25.
func offersTasks(conn Upstream) bool {
	info := conn.Info()
	return info.Era == mcp.EraInitialize && info.Capabilities.Tasks != nil
}

// typedCall returns the tools/call params as the Conn's own type, or nil
// when they ask for a task already (a 2025-11-25 client's call, passed on
// as it is) or carry members the type does not.
func typedCall(params json.RawMessage) *mcp.CallToolParams {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return nil
	}
	for k := range m {
		if k != "name" && k != "arguments" && k != "_meta" {
			return nil
		}
	}
	var p mcp.CallToolParams
	if json.Unmarshal(m["name"], &p.Name) != nil || p.Name == "" {
		return nil
	}
	if a, ok := m["arguments"]; ok {
		p.Arguments = a // as sent, not as decoded
	}
	if raw, ok := m["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) != nil {
			return nil
		}
		p.Meta = make(mcp.Meta, len(meta))
		for k, v := range meta {
			p.Meta[k] = v // as sent: a number keeps its digits
		}
	}
	return &p
}

// logLevels are the logging levels, least severe first.
var logLevels = []mcp.LoggingLevel{mcp.LevelDebug, mcp.LevelInfo, mcp.LevelNotice, mcp.LevelWarning,
	mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency}

// severity is the rank of l in logLevels, -1 when unknown.
func severity(l mcp.LoggingLevel) int { return slices.Index(logLevels, l) }

type progressOut struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    float64         `json:"total,omitempty"`
	Message  string          `json:"message,omitempty"`
}

// rpcError is what a downstream client is told of err: the upstream's own
// JSON-RPC error as it sent it, anything else as an internal error whose
// text says what failed. Either way the data says when the request may
// have run (jsonrpc.OutcomeKey), and an error of the bridge's own says
// when it did not. Secrets the bridge was told of are removed.
func (b *Bridge) rpcError(err error) *jsonrpc.Error {
	unknown := errors.Is(err, jsonrpc.ErrOutcomeUnknown)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		out := *rpcErr
		out.Message = b.redact(out.Message)
		if len(out.Data) > 0 {
			out.Data = json.RawMessage(b.redact(string(out.Data)))
		}
		if unknown && out.Outcome() != jsonrpc.OutcomeUnknown {
			return out.WithOutcome(jsonrpc.OutcomeUnknown)
		}
		return &out
	}
	var ie *client.InputError
	switch {
	case errors.As(err, &ie):
		return jsonrpc.NewError(jsonrpc.CodeInternalError, b.redact(err.Error()))
	case unknown:
		return outcomeError(b.redact("the upstream's answer was lost; the request may have run: "+err.Error()), jsonrpc.OutcomeUnknown)
	}
	// The Conn says the request did not run (docs/outcomes.md).
	return outcomeError(b.redact("upstream: "+err.Error()), jsonrpc.OutcomeNotRun)
}

// outcomeError is an internal error of the bridge's own whose data says
// whether the request ran: jsonrpc.OutcomeUnknown when it was passed on
// and its answer lost, jsonrpc.OutcomeNotRun when it was refused before.
// Every such answer of the bridge is made here.
func outcomeError(message, outcome string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, message).WithOutcome(outcome)
}

// outcomeOf is the outcome err says: jsonrpc.OutcomeUnknown when it
// matches jsonrpc.ErrOutcomeUnknown, else jsonrpc.OutcomeNotRun.
func outcomeOf(err error) string {
	if errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		return jsonrpc.OutcomeUnknown
	}
	return jsonrpc.OutcomeNotRun
}

// redact removes every secret the bridge knows of from s.
func (b *Bridge) redact(s string) string {
	for _, sec := range b.o.Secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	if b.o.Redact != nil {
		s = b.o.Redact(s)
	}
	return s
}
