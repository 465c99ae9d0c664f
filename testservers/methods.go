package testservers

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// methodDef is one method of the protocol as the core serves it: the
// eras it exists in, and what it does.
type methodDef struct {
	eras era
	run  func(ss *Session, ctx context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error)
}

// methods are the client requests the core serves. initialize, ping,
// logging/setLevel and resources/(un)subscribe are gone in 2026-07-28;
// server/discover and subscriptions/listen came with it.
var methods = map[string]methodDef{
	"initialize": {eraInitialize, func(ss *Session, _ context.Context, m *jsonrpc.Message, _ *reqInfo) (any, error) {
		return ss.initialize(m.Params)
	}},
	"ping": {eraInitialize, func(*Session, context.Context, *jsonrpc.Message, *reqInfo) (any, error) {
		return struct{}{}, nil
	}},
	"logging/setLevel": {eraInitialize, func(ss *Session, _ context.Context, m *jsonrpc.Message, _ *reqInfo) (any, error) {
		return ss.setLevel(m.Params)
	}},
	"resources/subscribe": {eraInitialize, func(ss *Session, _ context.Context, m *jsonrpc.Message, _ *reqInfo) (any, error) {
		return ss.subscribe(m.Params, true)
	}},
	"resources/unsubscribe": {eraInitialize, func(ss *Session, _ context.Context, m *jsonrpc.Message, _ *reqInfo) (any, error) {
		return ss.subscribe(m.Params, false)
	}},
	"server/discover": {eraStateless, func(ss *Session, _ context.Context, _ *jsonrpc.Message, _ *reqInfo) (any, error) {
		return ss.srv.discover(), nil
	}},
	"subscriptions/listen": {eraStateless, func(ss *Session, ctx context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		return ss.listen(ctx, m, rq)
	}},
	"tools/list": {eraBoth, func(ss *Session, _ context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		return ss.listTools(m.Params, rq)
	}},
	"tools/call": {eraBoth, func(ss *Session, ctx context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		return ss.callTool(ctx, m.ID, m.Params, rq)
	}},
	"resources/list": {eraBoth, func(ss *Session, _ context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		return ss.listResources(m.Params, rq)
	}},
	"resources/templates/list": {eraBoth, func(ss *Session, _ context.Context, m *jsonrpc.Message, _ *reqInfo) (any, error) {
		return ss.listTemplates(m.Params)
	}},
	"resources/read": {eraBoth, func(ss *Session, ctx context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		return ss.readResource(ctx, m.ID, m.Params, rq)
	}},
	"prompts/list": {eraBoth, func(ss *Session, _ context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		return ss.listPrompts(m.Params, rq)
	}},
	"prompts/get": {eraBoth, func(ss *Session, ctx context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		return ss.getPrompt(ctx, m.ID, m.Params, rq)
	}},
	"completion/complete": {eraBoth, func(ss *Session, _ context.Context, m *jsonrpc.Message, _ *reqInfo) (any, error) {
		return ss.complete(m.Params)
	}},
	// Tasks: tasks/get and tasks/cancel in both eras (each with its own
	// design), tasks/result and tasks/list in 2025-11-25, tasks/update in
	// the 2026-07-28 extension.
	"tasks/get": {eraBoth, func(ss *Session, _ context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		if rq.era == eraStateless {
			return ss.statelessGetTask(m.Params, rq)
		}
		return ss.initializeGetTask(m.Params)
	}},
	"tasks/cancel": {eraBoth, func(ss *Session, _ context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		if rq.era == eraStateless {
			return ss.statelessCancelTask(m.Params, rq)
		}
		return ss.initializeCancelTask(m.Params)
	}},
	"tasks/result": {eraInitialize, func(ss *Session, ctx context.Context, m *jsonrpc.Message, _ *reqInfo) (any, error) {
		return ss.initializeTaskResult(ctx, m)
	}},
	"tasks/list": {eraInitialize, func(ss *Session, _ context.Context, m *jsonrpc.Message, _ *reqInfo) (any, error) {
		return ss.initializeListTasks(m.Params)
	}},
	"tasks/update": {eraStateless, func(ss *Session, _ context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
		return ss.statelessUpdateTask(m.Params, rq)
	}},
}

// taskMethods exist only with Options.Tasks.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/cancel": true, "tasks/result": true, "tasks/list": true, "tasks/update": true}

// methodIn reports whether the server serves method in era e.
func (s *Server) methodIn(method string, e era) bool {
	def, ok := methods[method]
	return ok && def.eras&e != 0 && (!taskMethods[method] || s.opts.Tasks.Enabled)
}

// dispatch runs one client request in the era rq says and returns its
// result, or an error (a *jsonrpc.Error goes to the client as is,
// anything else as an internal error). A stateless result carries what
// every result of 2026-07-28 does (see decorate); a stateless request that
// needs more input from the client gets an input_required result.
func (ss *Session) dispatch(ctx context.Context, m *jsonrpc.Message, rq *reqInfo) (json.RawMessage, error) {
	if !ss.srv.methodIn(m.Method, rq.era) {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+m.Method)
	}
	res, err := methods[m.Method].run(ss, ctx, m, rq)
	if err != nil {
		if ir, ok := errors.AsType[*inputRequired](err); ok && rq.era == eraStateless {
			return ss.srv.inputRequiredResult(ir)
		}
		return nil, err
	}
	raw, ok := res.(json.RawMessage)
	if !ok {
		if raw, err = json.Marshal(res); err != nil {
			return nil, err
		}
	}
	if rq.era == eraStateless {
		return ss.srv.decorate(raw, m.Method)
	}
	return raw, nil
}

// decodeParams decodes a request's params into v; absent params leave v
// as it is. A decoding failure is an invalid-params error.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: " + err.Error())
	}
	return nil
}

func invalidParams(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, msg)
}

// serverCapabilities are what every test server declares.
func serverCapabilities() mcp.ServerCapabilities {
	return mcp.ServerCapabilities{
		Logging:     &struct{}{},
		Completions: &struct{}{},
		Prompts:     &mcp.ListChanged{ListChanged: true},
		Resources:   &mcp.ResourcesCap{Subscribe: true, ListChanged: true},
		Tools:       &mcp.ListChanged{ListChanged: true},
	}
}

func (ss *Session) initialize(params json.RawMessage) (any, error) {
	var p mcp.InitializeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == "" {
		return nil, invalidParams("initialize: protocolVersion is required")
	}
	opts := ss.srv.opts
	version := opts.Versions[0]
	if slices.Contains(opts.Versions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	ss.mu.Lock()
	ss.version = version
	ss.clientCaps = p.Capabilities
	ss.mu.Unlock()
	caps := serverCapabilities()
	if ss.initializeTasks() {
		caps.Tasks = initializeTasksCap()
	}
	ss.srv.count(func(st *Stats) {
		st.Initializations++
		st.ProtocolVersion = version
		st.RequestedVersion = p.ProtocolVersion
		st.ClientInfo = p.ClientInfo
		st.ClientCapabilities = p.Capabilities
	})
	return mcp.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    caps,
		ServerInfo: mcp.Implementation{
			Name:    opts.Name,
			Title:   "anymcp test server",
			Version: ServerVersion,
		},
		Instructions: opts.Instructions,
	}, nil
}

// logLevels are the logging levels, least severe first.
var logLevels = []mcp.LoggingLevel{
	mcp.LevelDebug, mcp.LevelInfo, mcp.LevelNotice, mcp.LevelWarning,
	mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency,
}

// severity returns the rank of level in logLevels, or -1.
func severity(level mcp.LoggingLevel) int {
	return slices.Index(logLevels, level)
}

func (ss *Session) setLevel(params json.RawMessage) (any, error) {
	var p mcp.SetLevelParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	rank := severity(p.Level)
	if rank < 0 {
		return nil, invalidParams("logging/setLevel: unknown level " + string(p.Level))
	}
	ss.mu.Lock()
	ss.minLevel = rank
	ss.mu.Unlock()
	ss.srv.count(func(st *Stats) { st.LogLevel = p.Level })
	return struct{}{}, nil
}

// logEnabled reports whether a message at level passes the session's
// logging/setLevel threshold (everything passes until it is set).
func (ss *Session) logEnabled(level mcp.LoggingLevel) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return severity(level) >= ss.minLevel
}

// capabilities returns what the client declared in initialize.
func (ss *Session) capabilities() mcp.ClientCapabilities {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.clientCaps
}
