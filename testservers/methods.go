package testservers

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// dispatch runs one client request and returns its result, or an error
// (a *jsonrpc.Error goes to the client as is, anything else as an
// internal error).
func (ss *Session) dispatch(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
	var (
		res any
		err error
	)
	switch m.Method {
	case "initialize":
		res, err = ss.initialize(m.Params)
	case "ping":
		res = struct{}{}
	case "tools/list":
		res, err = ss.listTools(m.Params)
	case "tools/call":
		res, err = ss.callTool(ctx, m.ID, m.Params)
	case "resources/list":
		res, err = ss.listResources(m.Params)
	case "resources/templates/list":
		res, err = ss.listTemplates(m.Params)
	case "resources/read":
		res, err = ss.readResource(m.Params)
	case "resources/subscribe":
		res, err = ss.subscribe(m.Params, true)
	case "resources/unsubscribe":
		res, err = ss.subscribe(m.Params, false)
	case "prompts/list":
		res, err = ss.listPrompts(m.Params)
	case "prompts/get":
		res, err = ss.getPrompt(m.Params)
	case "completion/complete":
		res, err = ss.complete(m.Params)
	case "logging/setLevel":
		res, err = ss.setLevel(m.Params)
	default:
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+m.Method)
	}
	if err != nil {
		return nil, err
	}
	if raw, ok := res.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(res)
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
	ss.srv.count(func(st *Stats) {
		st.Initializations++
		st.ProtocolVersion = version
		st.RequestedVersion = p.ProtocolVersion
		st.ClientInfo = p.ClientInfo
		st.ClientCapabilities = p.Capabilities
	})
	return mcp.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    serverCapabilities(),
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
