package ladder

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// A server that does not speak the revision an initialize asks for must
// answer with one it does speak. Some refuse instead, naming theirs in the
// error (go-mcp v0.2: -32603 "protocol version not supported, supported
// version is 2025-03-26"). A refused initialize ran nothing, so asking
// once more with the revision the refusal names is safe; this is the only
// second initialize the ladder sends on one transport.

// refusalScan bounds how much of a refusal is searched for a revision.
const refusalScan = 4 << 10

var revisionPattern = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)

// namedRevision returns the newest initialize-based revision that we speak,
// that e names in its message or data, and that is not sent: the revision
// to ask for again. It returns "" when e names none.
func namedRevision(e *jsonrpc.Error, sent string) string {
	if e == nil {
		return ""
	}
	text := e.Message + " " + string(e.Data)
	if len(text) > refusalScan {
		text = text[:refusalScan]
	}
	named := revisionPattern.FindAllString(text, 16)
	for _, v := range mcp.InitializeVersions { // newest first
		if v != sent && slices.Contains(named, v) {
			return v
		}
	}
	return ""
}

// revisionOf returns the protocolVersion an initialize request asks for.
func revisionOf(m *jsonrpc.Message) string {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.ProtocolVersion
}

// askingFor returns a copy of the initialize request m that asks for
// revision v, the rest of its params kept as they were.
func askingFor(m *jsonrpc.Message, v string) (*jsonrpc.Message, error) {
	var params map[string]json.RawMessage
	if err := json.Unmarshal(m.Params, &params); err != nil {
		return nil, err
	}
	q, _ := json.Marshal(v)
	params["protocolVersion"] = q
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c := *m
	c.Params = raw
	return &c, nil
}

// againWithNamed returns the initialize to send once more when resp, the
// answer to sent, refuses it naming a revision we speak; nil otherwise.
func againWithNamed(sent, resp *jsonrpc.Message) *jsonrpc.Message {
	if resp == nil || resp.Error == nil || statelessRefusal(resp.Error) {
		return nil
	}
	v := namedRevision(resp.Error, revisionOf(sent))
	if v == "" {
		return nil
	}
	m, err := askingFor(sent, v)
	if err != nil {
		return nil
	}
	return m
}

// sendInitialize sends the initialize request over t, the transport named
// name, and waits, through p,
// for its answer; a refusal that names a revision we speak is answered by
// one more initialize asking for it. note says so, for the report.
func (l *ladder) sendInitialize(ctx context.Context, name string, t jsonrpc.Transport, p *pump) (resp *jsonrpc.Message, note string, err error) {
	resp, err = l.exchange(ctx, name, t, p, l.request(l.hello.Initialize))
	if err != nil {
		return resp, "", err
	}
	again := againWithNamed(l.hello.Initialize, resp)
	if again == nil {
		return resp, "", nil
	}
	note = "initialize of " + revisionOf(l.hello.Initialize) + " refused naming " + revisionOf(again) + ": asked again for it; "
	resp, err = l.exchange(ctx, name, t, p, l.request(again))
	return resp, note, err
}
