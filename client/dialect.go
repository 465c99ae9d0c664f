package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/anymcp/anymcp/mcp"
)

// dialect is every rule that differs between the protocol eras — and,
// within the stateless era, between Streamable HTTP and other transports — as
// one value the Conn consults. It is chosen once the server's era is known
// and never changes; nothing else in the Conn asks which era it speaks.
type dialect struct {
	era     mcp.Era
	version string // the revision in use

	// meta holds the _meta members every stateless request carries (its
	// revision, the client's info and capabilities), as JSON object members
	// without braces; nil in the initialize era, whose requests carry none.
	meta []byte
	// headers: mirror the request metadata into HTTP headers (stateless over
	// Streamable HTTP), and leave out tools whose x-mcp-header annotations
	// break the rules.
	headers bool
	// sessions: the initialize-era lifecycle, initialize then
	// notifications/initialized, on a session that may be lost and then
	// initialized again.
	sessions bool
	// inputRequired: the server asks the client for input inside results
	// (input_required, answered by sending the request again), not by
	// requests of its own.
	inputRequired bool
	// cancelNotify: a call given up is cancelled with
	// notifications/cancelled. Stateless Streamable HTTP cancels by closing
	// the request's own response stream instead.
	cancelNotify bool
	// listen: change notifications come on subscriptions/listen, opened
	// with a filter; the initialize era has resources/subscribe and the GET
	// stream.
	listen bool
	// reissue: a request whose answer was lost is sent again, with a new
	// id, when it is safe to repeat (the stateless rule: a broken stream loses
	// the request, and there is no resumption).
	reissue bool
	// ping is the request Ping sends: stateless revisions have no ping, and
	// server/discover is as cheap.
	ping string
	// setLevel: logging/setLevel exists. Stateless requests carry the level
	// in _meta instead.
	setLevel bool
	// rootsChanged: notifications/roots/list_changed exists.
	rootsChanged bool
	// askTasks: an initialize-era server offers the tasks of revision 2025-11-25
	// for tools/call, so a call to a tool that must run as a task asks
	// for one (taskcall.go).
	askTasks bool
	// taskResults: every request declares the tasks extension of
	// 2026-07-28, and a result of type task is awaited.
	taskResults bool
	// noRequestedTasks: the revision has no tasks of revision 2025-11-25,
	// so a tool a server offers only as such a task cannot run
	// (explainTaskRefusal).
	noRequestedTasks bool
}

// newDialect returns the rules for era and revision over the named
// transport, with a server whose capabilities are caps (nil: not known
// yet), for a client with options o.
func newDialect(era mcp.Era, version, transport string, caps *mcp.ServerCapabilities, o *options) *dialect {
	if era == mcp.EraStateless {
		http := transport == TransportStreamableHTTP
		return &dialect{
			era:           era,
			version:       version,
			meta:          statelessMeta(version, o),
			headers:       http,
			inputRequired: true,
			cancelNotify:  !http,
			listen:        true,
			reissue:       true,
			ping:          "server/discover",
			taskResults:   !o.tasks.Never,

			noRequestedTasks: true,
		}
	}
	return &dialect{
		era:          mcp.EraInitialize,
		version:      version,
		sessions:     true,
		cancelNotify: true,
		ping:         "ping",
		setLevel:     true,
		rootsChanged: true,
		askTasks:     !o.tasks.Never && caps != nil && caps.Tasks.ToolCalls(),
	}
}

// preEraDialect is what the Conn speaks before it knows the era: only the
// initialize handshake's own requests go out then.
var preEraDialect = &dialect{era: mcp.EraInitialize, sessions: true, cancelNotify: true, ping: "ping", setLevel: true, rootsChanged: true}

// initializeParams are what initialize offers: the latest revision (or
// the initialize-era one the host pinned), the host's client info, and the
// capabilities its handlers provide.
func initializeParams(o *options) *mcp.InitializeParams {
	version := mcp.LatestInitializeVersion
	if mcp.EraOf(o.version) == mcp.EraInitialize {
		version = o.version
	}
	return &mcp.InitializeParams{
		ProtocolVersion: version,
		Capabilities:    capabilities(o, mcp.EraInitialize),
		ClientInfo:      o.clientInfo,
	}
}

// capabilities declares what the host's handlers can answer and, in the
// stateless era, the extensions the Conn speaks (tasks, unless the host turned
// them off: tasks.go).
func capabilities(o *options, era mcp.Era) mcp.ClientCapabilities {
	var caps mcp.ClientCapabilities
	if era == mcp.EraStateless && !o.tasks.Never {
		caps.Extensions = map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage(`{}`)}
	}
	if o.roots != nil {
		caps.Roots = &mcp.RootsCap{ListChanged: true}
	}
	if o.sampling != nil {
		caps.Sampling = &mcp.SamplingCap{}
	}
	if o.elicitForm != nil || o.elicitURL != nil {
		caps.Elicitation = &mcp.ElicitCap{}
		if o.elicitForm != nil {
			caps.Elicitation.Form = &struct{}{}
		}
		if o.elicitURL != nil {
			caps.Elicitation.URL = &struct{}{}
		}
	}
	return caps
}

// awaitDesign is the design a task known only by its id is waited by, the
// server's capabilities being caps: the extension when the server declared
// it, else the design of 2025-11-25 when it offers that, else the era's.
func (d *dialect) awaitDesign(caps *mcp.ServerCapabilities) taskDesign {
	switch {
	case d.taskResults && caps.HasExtension(mcp.ExtensionTasks):
		return tasksExtension
	case caps.Tasks.ToolCalls() || !d.taskResults:
		return tasksRequested
	}
	return tasksExtension
}

// cancelsByNotice reports whether a request of method that is given up
// after it may have reached the server is cancelled with
// notifications/cancelled. The lifecycle forbids cancelling initialize; a
// stateless request over Streamable HTTP is cancelled by closing its stream.
func (d *dialect) cancelsByNotice(method string) bool {
	return d.cancelNotify && method != "initialize"
}

// statelessMeta encodes the _meta members of every stateless request.
func statelessMeta(version string, o *options) []byte {
	info, _ := json.Marshal(o.clientInfo)
	caps, _ := json.Marshal(capabilities(o, mcp.EraStateless))
	b := make([]byte, 0, 128+len(info)+len(caps))
	b = append(b, `"`+mcp.MetaProtocolVersion+`":`...)
	b = strconv.AppendQuote(b, version)
	b = append(b, `,"`+mcp.MetaClientInfo+`":`...)
	b = append(b, info...)
	b = append(b, `,"`+mcp.MetaClientCapabilities+`":`...)
	return append(b, caps...)
}

// requestMeta returns the _meta members a request carries: the dialect's,
// a progress token (0: none), and a log level ("" : none).
func (d *dialect) requestMeta(token int64, level mcp.LoggingLevel) []byte {
	if token == 0 && level == "" {
		return d.meta
	}
	b := make([]byte, 0, len(d.meta)+64)
	b = append(b, d.meta...)
	if token != 0 {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"progressToken":`...)
		b = strconv.AppendInt(b, token, 10)
	}
	if level != "" {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"`+mcp.MetaLogLevel+`":`...)
		b = strconv.AppendQuote(b, string(level))
	}
	return b
}

// withMeta puts members (JSON object members without braces) into the
// _meta object of params, creating it (or params) when missing. Members the
// params' own _meta also has are replaced by ours: the revision must match
// what the headers say, and the progress token is the Conn's.
func withMeta(params json.RawMessage, members []byte) (json.RawMessage, error) {
	if len(members) == 0 {
		return params, nil
	}
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		out := make([]byte, 0, len(members)+12)
		out = append(out, `{"_meta":{`...)
		out = append(out, members...)
		return append(out, "}}"...), nil
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("params must be a JSON object to carry _meta")
	}
	if !bytes.Contains(trimmed, []byte(`"_meta"`)) {
		return prependMembers(trimmed, []byte(`"_meta":{`), members, []byte(`}`)), nil
	}
	// The slow path: the params have a _meta of their own to merge with.
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if m := obj["_meta"]; len(m) > 0 && string(m) != "null" {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, fmt.Errorf("params _meta: %w", err)
		}
	}
	var ours map[string]json.RawMessage
	if err := json.Unmarshal(append(append([]byte{'{'}, members...), '}'), &ours); err != nil {
		return nil, err
	}
	for k, v := range ours {
		meta[k] = v
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = b
	return json.Marshal(obj)
}

// prependMembers returns the object obj with open+members+close inserted
// as its first member(s).
func prependMembers(obj, open, members, close []byte) json.RawMessage {
	rest := bytes.TrimSpace(obj[1:])
	out := make([]byte, 0, len(obj)+len(open)+len(members)+len(close)+2)
	out = append(out, '{')
	out = append(out, open...)
	out = append(out, members...)
	out = append(out, close...)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}
