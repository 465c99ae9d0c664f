package testservers

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Eras says which protocol eras a server speaks (Options.Eras).
type Eras int

const (
	// InitializeOnly serves the revisions of the initialize handshake
	// (Options.Versions: 2025-11-25 and earlier), exactly as these servers
	// always did. It is the zero value.
	InitializeOnly Eras = iota
	// StatelessOnly serves only the stateless revisions (Options.StatelessVersions,
	// 2026-07-28): every request carries its protocol version and client
	// capabilities in _meta; initialize is refused as Options.StatelessInitialize
	// says; no sessions, no GET stream, no server→client requests.
	StatelessOnly
	// DualEra serves both on the same endpoint or process: a request that
	// carries stateless _meta (or, over HTTP, names a stateless revision in
	// MCP-Protocol-Version) is served statelessly as 2026-07-28; anything
	// else, initialize first, is served as before (sessions, GET stream,
	// server→client requests).
	DualEra
)

// String returns "initialize-only", "stateless-only" or "dual-era".
func (e Eras) String() string {
	switch e {
	case InitializeOnly:
		return "initialize-only"
	case StatelessOnly:
		return "stateless-only"
	case DualEra:
		return "dual-era"
	}
	return "eras(" + strconv.Itoa(int(e)) + ")"
}

// stateless reports whether the server speaks the stateless era at all.
func (e Eras) stateless() bool { return e == StatelessOnly || e == DualEra }

// InitializeAnswer is how a StatelessOnly server answers an initialize
// (Options.StatelessInitialize).
type InitializeAnswer int

const (
	// InitializeUnsupportedVersion refuses it as the specification
	// recommends for a stateless-only server, naming the revisions it
	// supports: error -32022 (UnsupportedProtocolVersion) with data
	// {supported, requested}, and over HTTP status 400. The zero value.
	InitializeUnsupportedVersion InitializeAnswer = iota
	// InitializeMethodNotFound refuses it as an unknown method: error
	// -32601 (over HTTP status 404), whose message names the supported
	// revisions.
	InitializeMethodNotFound
	// InitializeLikeGoSDK mimics the go-sdk v1.8 stateless-only
	// server, over HTTP: initialize is answered with a 2025-11-25 result
	// (no session id), and then every POST whose MCP-Protocol-Version
	// header names an older revision than 2026-07-28 that the server does
	// not speak — notifications/initialized and everything after it — is
	// refused with 400 and the text/plain body "Bad Request: Unsupported
	// protocol version (supported versions: 2026-07-28)". Stateless requests
	// are served normally. Over stdio it is InitializeUnsupportedVersion.
	InitializeLikeGoSDK
)

// era is the era one request is served in.
type era uint8

const (
	eraInitialize era = 1 << iota
	eraStateless
	eraBoth = eraInitialize | eraStateless
)

func (e era) String() string {
	if e == eraStateless {
		return "stateless"
	}
	return "initialize"
}

// reqInfo is what the core knows of one request beyond its method and
// params: the era it is served in and, for a stateless request, what its
// _meta declares.
type reqInfo struct {
	era era
	// The rest is set for stateless requests only.
	version    string
	caps       mcp.ClientCapabilities
	rawCaps    json.RawMessage
	clientInfo *mcp.Implementation
	logLevel   int // the rank in logLevels of the requested level; -1: no logs
	// streamScoped: the request ends with its HTTP response stream (the
	// client cancels by closing it), not by notifications/cancelled.
	streamScoped bool
}

var initializeInfo = &reqInfo{era: eraInitialize, logLevel: -1}

type reqInfoKey struct{}

// withReqInfo returns ctx carrying rq, for a front-end that classified
// the request itself (HTTP, which validates headers against _meta).
func withReqInfo(ctx context.Context, rq *reqInfo) context.Context {
	return context.WithValue(ctx, reqInfoKey{}, rq)
}

func reqInfoFrom(ctx context.Context) *reqInfo {
	rq, _ := ctx.Value(reqInfoKey{}).(*reqInfo)
	return rq
}

// requestMeta is the part of _meta the server reads.
type requestMeta struct {
	ProtocolVersion    *string             `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities json.RawMessage     `json:"io.modelcontextprotocol/clientCapabilities"`
	ClientInfo         *mcp.Implementation `json:"io.modelcontextprotocol/clientInfo"`
	LogLevel           *string             `json:"io.modelcontextprotocol/logLevel"`
}

// metaOf returns the _meta of a request's params and whether it carries
// a protocol version (the mark of a stateless request); ok is false when
// params or _meta are not JSON objects of the expected shape.
func metaOf(params json.RawMessage) (meta requestMeta, stateless, ok bool) {
	if len(params) == 0 || string(params) == "null" {
		return meta, false, true
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return meta, false, false
	}
	if len(p.Meta) == 0 || string(p.Meta) == "null" {
		return meta, false, true
	}
	if err := json.Unmarshal(p.Meta, &meta); err != nil {
		// _meta is there but not as expected: a stateless request if it
		// names a version at all.
		var loose map[string]json.RawMessage
		if json.Unmarshal(p.Meta, &loose) == nil {
			_, stateless = loose[mcp.MetaProtocolVersion]
		}
		return meta, stateless, false
	}
	return meta, meta.ProtocolVersion != nil, true
}

// supportedVersions are the revisions the server names in -32022 and in
// server/discover: its stateless ones, then (dual-era) its legacy ones.
func (s *Server) supportedVersions() []string {
	out := slices.Clone(s.opts.StatelessVersions)
	if s.opts.Eras == DualEra {
		out = append(out, s.opts.Versions...)
	}
	return out
}

// unsupportedVersion is error -32022 for a request asking for requested.
func (s *Server) unsupportedVersion(requested, why string) *jsonrpc.Error {
	supported := s.supportedVersions()
	data, _ := json.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{supported, requested})
	msg := "Unsupported protocol version " + strconv.Quote(requested) + " (supported versions: " + strings.Join(supported, ", ") + ")"
	if why != "" {
		msg += ": " + why
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedProtocolVersion, Message: msg, Data: data}
}

// refuseInitialize is a stateless-only server's error for initialize.
func (s *Server) refuseInitialize(params json.RawMessage) *jsonrpc.Error {
	s.count(func(st *Stats) { st.InitializeRejected++ })
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	if s.opts.StatelessInitialize == InitializeMethodNotFound {
		return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: initialize (this server speaks only "+
			strings.Join(s.opts.StatelessVersions, ", ")+", without initialize; supported versions: "+strings.Join(s.supportedVersions(), ", ")+")")
	}
	return s.unsupportedVersion(p.ProtocolVersion, "this server speaks only revisions without initialize")
}

// classify decides the era of a request that no front-end classified,
// and reads a stateless request's _meta. An error is the request's answer.
func (s *Server) classify(m *jsonrpc.Message) (*reqInfo, *jsonrpc.Error) {
	eras := s.opts.Eras
	if !eras.stateless() {
		return initializeInfo, nil
	}
	if m.Method == "initialize" {
		if eras == DualEra {
			return initializeInfo, nil
		}
		return nil, s.refuseInitialize(m.Params)
	}
	meta, stateless, _ := metaOf(m.Params)
	if !stateless && eras == DualEra {
		return initializeInfo, nil
	}
	return s.statelessInfo(meta, stateless)
}

// statelessInfo checks the _meta of a stateless request: a version the server
// speaks, client capabilities, a known log level.
func (s *Server) statelessInfo(meta requestMeta, hasVersion bool) (*reqInfo, *jsonrpc.Error) {
	if !hasVersion || meta.ProtocolVersion == nil {
		return nil, invalidParams("_meta." + mcp.MetaProtocolVersion + " is required")
	}
	v := *meta.ProtocolVersion
	s.count(func(st *Stats) { st.VersionsSeen[v]++ })
	if !slices.Contains(s.opts.StatelessVersions, v) {
		return nil, s.unsupportedVersion(v, "")
	}
	rq := &reqInfo{era: eraStateless, version: v, clientInfo: meta.ClientInfo, logLevel: -1}
	caps := bytes.TrimSpace(meta.ClientCapabilities)
	if len(caps) == 0 || caps[0] != '{' {
		return nil, invalidParams("_meta." + mcp.MetaClientCapabilities + " is required (an object)")
	}
	if err := json.Unmarshal(caps, &rq.caps); err != nil {
		return nil, invalidParams("_meta." + mcp.MetaClientCapabilities + ": " + err.Error())
	}
	rq.rawCaps = json.RawMessage(caps)
	if meta.LogLevel != nil {
		rq.logLevel = severity(mcp.LoggingLevel(*meta.LogLevel))
		if rq.logLevel < 0 {
			return nil, invalidParams("_meta." + mcp.MetaLogLevel + ": unknown level " + strconv.Quote(*meta.LogLevel))
		}
	}
	s.count(func(st *Stats) {
		if meta.ClientInfo != nil {
			st.StatelessClientInfo = *meta.ClientInfo
		}
		st.StatelessClientCapabilities = rq.caps
	})
	return rq, nil
}

// serverInfo is the server's Implementation, in initialize and in every
// stateless result's _meta.
func (s *Server) serverInfo() mcp.Implementation {
	return mcp.Implementation{Name: s.opts.Name, Title: "anymcp test server", Version: ServerVersion}
}

// cacheable are the methods whose complete results carry ttlMs and
// cacheScope.
var cacheable = map[string]bool{
	"server/discover":          true,
	"tools/list":               true,
	"prompts/list":             true,
	"resources/list":           true,
	"resources/templates/list": true,
	"resources/read":           true,
}

// ttlFor returns ttlMs for a method's results.
func (s *Server) ttlFor(method string) int64 {
	if d, ok := s.opts.CacheTTLs[method]; ok {
		return max(d.Milliseconds(), 0)
	}
	return max(s.opts.CacheTTL.Milliseconds(), 0)
}

// decorate adds to a stateless complete result what every result of
// 2026-07-28 carries: resultType, _meta with serverInfo and, for
// cacheable ones, ttlMs and cacheScope. res must be a JSON object.
func (s *Server) decorate(res json.RawMessage, method string) (json.RawMessage, error) {
	head := map[string]any{"resultType": mcp.ResultComplete}
	if cacheable[method] {
		head["ttlMs"] = s.ttlFor(method)
		head["cacheScope"] = s.opts.CacheScope
	}
	return s.withResultFields(res, head)
}

// withResultFields adds fields and _meta.serverInfo to the object res;
// fields already in res stay (a _meta of res is merged).
func (s *Server) withResultFields(res json.RawMessage, fields map[string]any) (json.RawMessage, error) {
	info := s.serverInfo()
	trimmed := bytes.TrimLeft(res, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "result is not a JSON object")
	}
	if !bytes.Contains(res, []byte(`"_meta"`)) && !bytes.Contains(res, []byte(`"resultType"`)) {
		// The common case, without decoding the result: the fields go in
		// front of the object's own.
		fields["_meta"] = map[string]any{mcp.MetaServerInfo: info}
		head, err := json.Marshal(fields)
		if err != nil {
			return nil, err
		}
		body := bytes.TrimSpace(trimmed[1:])
		out := make([]byte, 0, len(head)+len(body)+1)
		out = append(out, head[:len(head)-1]...)
		if len(body) > 0 && body[0] != '}' {
			out = append(out, ',')
		}
		return append(out, body...), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(res, &obj); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
	}
	if _, ok := meta[mcp.MetaServerInfo]; !ok {
		b, _ := json.Marshal(info)
		meta[mcp.MetaServerInfo] = b
	}
	for k, v := range fields {
		if _, ok := obj[k]; !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			obj[k] = b
		}
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = b
	return json.Marshal(obj)
}
