package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// The stateless face (revision 2026-07-28): every request stands alone,
// carrying its revision and the client's capabilities in _meta. The
// transport (HTTP at /mcp, or stdio) hands each request to serveStateless
// with a function that sends the notifications related to it.

// notifier sends a notification related to the request being served.
type notifier func(method string, params any)

// removedMethods are the initialize era's requests that revision 2026-07-28
// removed: a stateless client sending one gets -32601.
var removedMethods = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

// inputMethods may answer input_required.
var inputMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// cacheable results carry ttlMs and cacheScope.
var cacheable = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true,
	"resources/templates/list": true, "resources/read": true,
}

// checkMeta checks the _meta every stateless request must carry.
func checkMeta(r *request) *jsonrpc.Error {
	if r.meta == nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params._meta is required in revision "+mcp.LatestStatelessVersion)
	}
	// The common case is decided without decoding.
	if string(r.meta[mcp.MetaProtocolVersion]) != `"`+mcp.LatestStatelessVersion+`"` {
		var v string
		if raw, ok := r.meta[mcp.MetaProtocolVersion]; !ok || json.Unmarshal(raw, &v) != nil || v == "" {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params._meta lacks "+mcp.MetaProtocolVersion)
		}
		if v != mcp.LatestStatelessVersion {
			return unsupportedVersion(v)
		}
	}
	if raw, ok := r.meta[mcp.MetaClientCapabilities]; !ok || !present(raw) || raw[0] != '{' {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params._meta lacks "+mcp.MetaClientCapabilities)
	}
	return nil
}

func unsupportedVersion(v string) *jsonrpc.Error {
	e := jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion, "unsupported protocol version "+quote(v))
	e.Data, _ = json.Marshal(map[string]any{"supported": []string{mcp.LatestStatelessVersion}, "requested": v})
	return e
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// serveStateless answers one stateless request (msg has an id; r is its
// params parsed, nil: not yet). The returned message is its response.
func (b *Bridge) serveStateless(ctx context.Context, msg *jsonrpc.Message, r *request, notify notifier) *jsonrpc.Message {
	resp := &jsonrpc.Message{ID: msg.ID}
	result, err := b.statelessResult(ctx, msg, r, notify)
	if err != nil {
		resp.Error = err
		return resp
	}
	resp.Result = result
	return resp
}

func (b *Bridge) statelessResult(ctx context.Context, msg *jsonrpc.Message, r *request, notify notifier) (json.RawMessage, *jsonrpc.Error) {
	if r == nil {
		var perr *jsonrpc.Error
		if r, perr = parseRequest(msg.Method, msg.Params); perr != nil {
			return nil, perr
		}
	}
	if e := checkMeta(r); e != nil {
		return nil, e
	}
	r.forClient = r.meta[mcp.MetaClientCapabilities]
	if l := mcp.LoggingLevel(metaString(r.meta, mcp.MetaLogLevel)); severity(l) >= 0 {
		r.logLevel = l
	}
	switch {
	case msg.Method == "server/discover":
		return b.discover(), nil
	case removedMethods[msg.Method]:
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+msg.Method+" (removed in revision "+mcp.LatestStatelessVersion+")")
	case !b.knownMethod(msg.Method):
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+quote(msg.Method))
	case inputMethods[msg.Method]:
		return b.inputCall(ctx, r, capsOf(r.meta[mcp.MetaClientCapabilities]), notify)
	}
	raw, err := b.call(ctx, b.shared, r, r.upstreamParams(nil), notify)
	if err != nil {
		return nil, b.rpcError(err)
	}
	return b.complete(r.method, raw), nil
}

// knownMethod says whether the upstream offers method: a request of
// revision 2026-07-28 whose capability it declared. Anything else is
// answered -32601 here, not sent upstream (whose refusal may be anything
// from an HTTP 400 to silence).
func (b *Bridge) knownMethod(method string) bool {
	c := b.info.Capabilities
	switch method {
	case "tools/list", "tools/call":
		return c.Tools != nil
	case "prompts/list", "prompts/get":
		return c.Prompts != nil
	case "resources/list", "resources/read", "resources/templates/list", "subscriptions/listen":
		return c.Resources != nil || method == "subscriptions/listen"
	case "completion/complete":
		return c.Completions != nil
	case "tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "tasks/update":
		return c.HasExtension(mcp.ExtensionTasks) || c.Tasks != nil
	}
	return false
}

// discover answers server/discover from what the upstream negotiated.
func (b *Bridge) discover() json.RawMessage {
	c := b.info.Capabilities
	c.Tasks = nil // the initialize era's tasks are not the extension
	if c.Resources != nil {
		rc := *c.Resources
		rc.Subscribe = false // subscriptions/listen carries resource updates
		c.Resources = &rc
	}
	out := map[string]any{
		"resultType":        mcp.ResultComplete,
		"supportedVersions": []string{mcp.LatestStatelessVersion},
		"capabilities":      c,
		"ttlMs":             b.o.CacheTTL.Milliseconds(),
		"cacheScope":        mcp.CachePrivate,
		"_meta":             map[string]any{mcp.MetaServerInfo: b.info.ServerInfo},
	}
	if b.info.Instructions != "" {
		out["instructions"] = b.info.Instructions
	}
	raw, _ := json.Marshal(out)
	return raw
}

// complete returns an upstream result as a stateless result: resultType,
// the caching hints of a cacheable one, and the server's identity.
func (b *Bridge) complete(method string, raw json.RawMessage) json.RawMessage {
	if out, ok := b.completePlain(method, raw); ok {
		return out
	}
	return b.completeMaps(method, raw)
}

// completeMaps is complete through maps, for any result.
func (b *Bridge) completeMaps(method string, raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	if _, ok := m["resultType"]; !ok {
		m["resultType"] = json.RawMessage(`"complete"`)
	}
	if cacheable[method] {
		if _, ok := m["ttlMs"]; !ok {
			m["ttlMs"], _ = json.Marshal(b.o.CacheTTL.Milliseconds())
		}
		if _, ok := m["cacheScope"]; !ok {
			m["cacheScope"] = json.RawMessage(`"private"`)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// completePlain is complete without maps: the same bytes, or false when
// raw is not an object of plain members (appendMembers).
func (b *Bridge) completePlain(method string, raw json.RawMessage) (json.RawMessage, bool) {
	var arr [maxFastMembers + 3]member
	ms := arr[:0]
	var hasType, hasTTL, hasScope bool
	ok := eachMember(raw, func(m member) bool {
		if len(ms) == maxFastMembers {
			return false
		}
		ms = append(ms, m)
		hasType = hasType || m.key == "resultType"
		hasTTL = hasTTL || m.key == "ttlMs"
		hasScope = hasScope || m.key == "cacheScope"
		return true
	})
	if !ok || len(ms) == maxFastMembers {
		return nil, false
	}
	if !hasType {
		ms = append(ms, member{key: "resultType", val: json.RawMessage(`"complete"`)})
	}
	if cacheable[method] {
		if !hasTTL {
			ms = append(ms, member{key: "ttlMs", val: strconv.AppendInt(nil, b.o.CacheTTL.Milliseconds(), 10)})
		}
		if !hasScope {
			ms = append(ms, member{key: "cacheScope", val: json.RawMessage(`"private"`)})
		}
	}
	if len(ms) > maxFastMembers {
		return nil, false
	}
	return appendMembers(make([]byte, 0, len(raw)+32), ms)
}

// inputCall serves tools/call, prompts/get and resources/read, which may
// need input from the client: a new call, or the retry of a round.
func (b *Bridge) inputCall(ctx context.Context, r *request, c caps, notify notifier) (json.RawMessage, *jsonrpc.Error) {
	name := r.str("name")
	if r.method == "resources/read" {
		name = r.str("uri")
	}
	var responses map[string]json.RawMessage
	if v, ok := r.members["inputResponses"]; ok && present(v) {
		if json.Unmarshal(v, &responses) != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "inputResponses must be an object")
		}
	}
	if v, ok := r.members["requestState"]; ok && present(v) {
		var text string
		if json.Unmarshal(v, &text) != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "requestState must be a string")
		}
		st, err := b.seal.open(text, r.method, name, time.Now())
		if err != nil {
			return nil, stateError(err.Error())
		}
		switch st.Kind {
		case kindPass:
			// The upstream keeps its own state: a new upstream call
			// carries the answers and that state, on any replica.
			extra := map[string]json.RawMessage{"requestState": nil}
			if st.State != nil {
				extra["requestState"], _ = json.Marshal(*st.State)
			}
			return b.newCall(ctx, r, name, c, r.upstreamParams(extra), notify)
		case kindPending:
			if st.Owner != b.o.ReplicaID {
				return nil, stateError("the round is pending on another bridge replica (" + st.Owner + "); call again without requestState").WithOutcome(jsonrpc.OutcomeUnknown)
			}
			p := b.rounds.get(st.Round)
			if p == nil {
				return nil, stateError("the round has ended (given up, or timed out); call again without requestState").WithOutcome(jsonrpc.OutcomeUnknown)
			}
			if !p.resume() {
				return nil, stateError("the round is being resumed by another request")
			}
			p.setNotify(notify)
			p.answer(responses)
			return b.drive(ctx, r, name, p)
		}
		return nil, stateError("unknown round kind")
	}
	// No state: a new call (inputResponses without state go to the upstream as they are).
	return b.newCall(ctx, r, name, c, r.upstreamParams(nil), notify)
}

func stateError(why string) *jsonrpc.Error {
	e := jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid requestState: "+why)
	return e
}

// newCall starts an upstream call that may ask for input, and drives it
// until it ends or needs the client.
func (b *Bridge) newCall(ctx context.Context, r *request, name string, c caps, params json.RawMessage, notify notifier) (json.RawMessage, *jsonrpc.Error) {
	// The call may outlive this request (its rounds' retries resume it).
	cctx, cancel := b.detach(ctx)
	p := newPendingCall(r.method, name, cancel)
	if !b.rounds.add(p) {
		cancel()
		return nil, outcomeError("the bridge has too many calls waiting for input; try again later", jsonrpc.OutcomeNotRun)
	}
	p.resume()
	stateless := b.info.Era == mcp.EraStateless
	ok := b.goTracked(func() {
		defer cancel()
		conn := b.shared
		if !stateless && c.any() {
			// An initialize-era upstream asks on the connection, not
			// the call: a connection of this call's own, declaring
			// what the client declared, so every question is its.
			// Its list changes go to the listeners too.
			opts := append([]client.Option{client.WithClientInfo("anymcp-bridge", "1")}, boundHandlers(p, c)...)
			dc, err := b.dial(cctx, Downstream{Options: opts, Changes: b.listChanges(), Elicit: elicitVia(p, c)})
			if err != nil {
				b.ended(p, outcome{err: &UpstreamError{Op: "connecting", Err: err}})
				return
			}
			defer dc.Close()
			conn = dc
		}
		// A stateless upstream's input_required comes back raw (the
		// call is made ForClient): finish makes it a pass-through round.
		raw, err := b.call(cctx, conn, r, params, p.relay(notify))
		b.ended(p, outcome{raw: raw, err: err})
	})
	if !ok {
		cancel()
		b.rounds.remove(p.id)
		return nil, outcomeError(errClosed.Error(), jsonrpc.OutcomeNotRun)
	}
	return b.drive(ctx, r, name, p)
}

// ended records the end of p's upstream call. A call that ended while
// its client was away answering (parked) keeps its round until the
// retry comes for the outcome, or the round times out: the answer of a
// call is not lost because it came first.
func (b *Bridge) ended(p *pendingCall, o outcome) {
	if !p.finish(o) {
		b.rounds.remove(p.id)
	}
}

// drive waits for p's next turn: its end, or questions for the client,
// which it answers as an input_required round (p stays pending). ctx
// ending gives the call up.
func (b *Bridge) drive(ctx context.Context, r *request, name string, p *pendingCall) (json.RawMessage, *jsonrpc.Error) {
	gather := func() (json.RawMessage, *jsonrpc.Error) {
		t := time.NewTimer(b.o.SettleInterval)
		defer t.Stop()
		for {
			select {
			case <-p.events:
				t.Reset(b.o.SettleInterval)
				continue
			case o := <-p.result:
				b.rounds.remove(p.id)
				return b.finish(r, name, o)
			case <-t.C:
			case <-ctx.Done():
				p.cancel()
				return nil, outcomeError("cancelled", jsonrpc.OutcomeUnknown)
			}
			asks := p.unanswered()
			if len(asks) == 0 {
				return nil, nil
			}
			return b.roundOut(r, name, p, asks)
		}
	}
	for {
		if len(p.unanswered()) > 0 {
			if res, err := gather(); res != nil || err != nil {
				return res, err
			}
			continue
		}
		select {
		case o := <-p.result:
			b.rounds.remove(p.id)
			return b.finish(r, name, o)
		case <-p.events:
			if res, err := gather(); res != nil || err != nil {
				return res, err
			}
		case <-ctx.Done():
			// The client is gone (its stream closed): the call is
			// cancelled upstream too.
			p.cancel()
			return nil, outcomeError("cancelled", jsonrpc.OutcomeUnknown)
		}
	}
}

// roundOut answers the client with an input_required round for asks; p
// stays pending until the retry or the round's timeout.
func (b *Bridge) roundOut(r *request, name string, p *pendingCall, asks []*ask) (json.RawMessage, *jsonrpc.Error) {
	slices.SortFunc(asks, func(x, y *ask) int { return compareStrings(x.key, y.key) })
	reqs := make(map[string]mcp.InputRequest, len(asks))
	for _, a := range asks {
		reqs[a.key] = mcp.InputRequest{Method: a.method, Params: a.params}
	}
	state, err := b.seal.seal(roundState{Owner: b.o.ReplicaID, Round: p.id, Kind: kindPending, Expires: time.Now().Add(b.o.RoundTimeout).Unix()}, r.method, name)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "sealing the round's state: "+err.Error())
	}
	p.park(b.o.RoundTimeout, func() { b.rounds.remove(p.id) })
	out, _ := json.Marshal(map[string]any{"resultType": mcp.ResultInputRequired, "inputRequests": reqs, "requestState": state})
	return out, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// finish answers the end of a call: its error, its result, or, when an
// initialize-era upstream answered with input requests of its own (a
// server that speaks multi round-trip in any revision), a pass-through
// round whose sealed state carries the upstream's.
func (b *Bridge) finish(r *request, name string, o outcome) (json.RawMessage, *jsonrpc.Error) {
	if o.err != nil {
		if errors.Is(o.err, context.Canceled) && b.ctx.Err() != nil {
			return nil, outcomeError(errClosed.Error(), outcomeOf(o.err))
		}
		return nil, b.rpcError(o.err)
	}
	if plainResult(o.raw) {
		return b.complete(r.method, o.raw), nil
	}
	var ir struct {
		ResultType    string          `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
		RequestState  *string         `json:"requestState"`
	}
	if json.Unmarshal(o.raw, &ir) == nil && (ir.ResultType == mcp.ResultInputRequired ||
		(ir.ResultType == "" && present(ir.InputRequests) && string(ir.InputRequests) != "{}")) {
		state, err := b.seal.seal(roundState{Owner: b.o.ReplicaID, Kind: kindPass, State: ir.RequestState, Expires: time.Now().Add(b.o.RoundTimeout).Unix()}, r.method, name)
		if err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "sealing the round's state: "+err.Error())
		}
		round := map[string]any{"resultType": mcp.ResultInputRequired, "requestState": state}
		if present(ir.InputRequests) {
			round["inputRequests"] = ir.InputRequests
		}
		out, _ := json.Marshal(round)
		return out, nil
	}
	return b.complete(r.method, o.raw), nil
}

// plainResult reports, without decoding raw, that it is a result and not
// an input_required round: no member named inputRequests (in any case), a
// resultType, if any, of "complete". false: decode it to know.
func plainResult(raw json.RawMessage) bool {
	plain := true
	ok := eachMember(raw, func(m member) bool {
		switch {
		case strings.EqualFold(m.key, "inputRequests"),
			strings.EqualFold(m.key, "resultType") && (m.key != "resultType" || string(m.val) != `"complete"`):
			plain = false
		}
		return plain
	})
	return ok && plain
}
