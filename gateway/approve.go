package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Who decided, as Decision.By says it.
const (
	byClient  = "client"
	byPolicy  = "policy"
	byTimeout = "timeout"
)

// defaultApprovalTimeout bounds the wait for a client's answer when
// Approvals.Timeout is zero.
const defaultApprovalTimeout = 2 * time.Minute

// maxShownArguments bounds the arguments' JSON shown in the question.
const maxShownArguments = 2 << 10

// relistEvery bounds how often the tools are listed again for a name the
// last listing did not have, or after a listing that failed.
const relistEvery = time.Second

// approvalKey is the member of a refused call's error data that says
// who refused it: {"tool", "server", "by"}. The data also carries
// jsonrpc.OutcomeKey "not-run" (docs/gateway-approvals.md).
const approvalKey = "io.github.anymcp/approval"

// approvalSchema is what the client is asked for: one yes or no.
var approvalSchema = json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean","title":"Run it?"}},"required":["approve"]}`)

// approver holds the calls of the tools that need approval until they
// get it. One serves a view; its tool catalogue (annotations by fleet
// name) is shared by every upstream connection it wraps.
type approver struct {
	a       Approvals
	view    string
	lookup  func(fleetName string) (server string, ok bool)
	log     *slog.Logger
	timeout time.Duration
	// byName are the Require patterns decided without annotations
	// (names and servers); byHint those that need them. byServer: some
	// pattern names servers.
	byName, byHint []pattern
	byServer       bool

	mu       sync.Mutex
	tools    map[string]*mcp.ToolAnnotations // fleet name → annotations (nil: none)
	gen      uint64                          // bumped by every tools/list_changed
	freshGen uint64                          // the gen tools reflect
	fresh    bool                            // a listing succeeded
	lastList time.Time                       // when the last listing began
	listing  chan struct{}                   // closed when the listing under way ends; nil: none
}

// newApprovals returns the approver of view for a. lookup gives the
// server of a fleet name. The patterns are checked here.
func newApprovals(a Approvals, view string, lookup func(fleetName string) (server string, ok bool), log *slog.Logger) (*approver, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ap := &approver{a: a, view: view, lookup: lookup, log: log, timeout: a.Timeout, tools: map[string]*mcp.ToolAnnotations{}}
	if ap.timeout <= 0 {
		ap.timeout = defaultApprovalTimeout
	}
	if ap.lookup == nil {
		ap.lookup = func(string) (string, bool) { return "", false }
	}
	pats, err := parsePatterns(view, "Approvals.Require", a.Require)
	if err != nil {
		return nil, err
	}
	for _, p := range pats {
		if p.kind == byHint {
			ap.byHint = append(ap.byHint, p)
		} else {
			ap.byName = append(ap.byName, p)
			ap.byServer = ap.byServer || p.kind == byServer
		}
	}
	return ap, nil
}

// active reports whether any tool can need approval.
func (ap *approver) active() bool {
	return !ap.a.SkipDestructive || len(ap.a.Require) > 0
}

// wrap returns a Dialer whose upstreams hold each tools/call that needs
// approval until it has it. Everything else passes as it is.
func (ap *approver) wrap(next bridge.Dialer) bridge.Dialer {
	if !ap.active() {
		return next
	}
	return func(ctx context.Context, d bridge.Downstream) (bridge.Upstream, error) {
		// Learn of tool changes on every connection: a tool may become
		// destructive.
		d.Options = append(append([]client.Option(nil), d.Options...), client.OnToolsChanged(ap.changed))
		up, err := next(ctx, d)
		if err != nil {
			return nil, err
		}
		return &gated{Upstream: up, ap: ap, elicit: d.Elicit}, nil
	}
}

// changed is told of a tools/list_changed: the next decision lists again.
func (ap *approver) changed() {
	ap.mu.Lock()
	ap.gen++
	ap.mu.Unlock()
}

// gated is an upstream whose tool calls wait for approval where they need it.
type gated struct {
	bridge.Upstream
	ap     *approver
	elicit func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// Call passes every request on, but a tools/call that needs approval only
// once approved; refused, it fails with a *jsonrpc.Error whose data says
// it did not run.
func (g *gated) Call(ctx context.Context, method string, params, result any, opts ...client.CallOption) error {
	if method != "tools/call" {
		return g.Upstream.Call(ctx, method, params, result, opts...)
	}
	c, err := readCall(params)
	if err != nil {
		return err
	}
	return g.call(ctx, c, params, result, opts)
}

// callRead is Call of a tools/call the view has read already: its params
// are c.raw.
func (g *gated) callRead(ctx context.Context, c *toolCall, result any, opts []client.CallOption) error {
	return g.call(ctx, c, nil, result, opts)
}

// call gates the tools/call c, whose params are params (c.raw when nil),
// and passes it on once approved: read already, to an upstream that
// takes it so.
func (g *gated) call(ctx context.Context, c *toolCall, params, result any, opts []client.CallOption) error {
	if c.name == "" {
		return errUnreadable
	}
	name := c.name
	server, why, err := g.ap.needs(ctx, g.Upstream, name)
	if errors.Is(err, errNotListed) {
		// No listing has it: refused as the core and the view refuse
		// an unknown tool, without a question no one could answer.
		return notServed("tool", name)
	}
	if err != nil {
		return refusedCall(name, server, "", "not run: the gateway could not tell whether tool "+strconv.Quote(name)+" needs approval: "+err.Error())
	}
	if why != "" {
		if rerr := g.ap.decide(ctx, g.elicit, name, server, why, c.args); rerr != nil {
			return rerr
		}
	}
	if rc, ok := g.Upstream.(readCaller); ok && c.typed == nil {
		return rc.callRead(ctx, c, result, opts)
	}
	if params == nil {
		params = c.raw
	}
	return g.Upstream.Call(ctx, "tools/call", params, result, opts...)
}

// readCaller is an upstream of the gateway's own chain that takes a
// tools/call read already (its params are c.raw), so that the params
// are read once per call, not once per layer.
type readCaller interface {
	callRead(ctx context.Context, c *toolCall, result any, opts []client.CallOption) error
}

// callOf reads the tool's name and arguments (nil when absent) from
// tools/call params as the view reads them (readCall): by exact member
// names, as the core reads them. Params it cannot read are refused,
// never passed ungated. So are a "name" or "arguments" given twice or in
// other letter case (a server's decoder may take that one): the gate
// would judge one call, the server run another.
func callOf(params any) (name string, args json.RawMessage, err error) {
	c, err := readCall(params)
	if err != nil {
		return "", nil, err
	}
	if c.name == "" {
		return "", nil, errUnreadable
	}
	return c.name, c.args, nil
}

// errUnreadable refuses a call whose name is empty.
var errUnreadable = jsonrpc.NewError(jsonrpc.CodeInvalidParams, `tools/call: not run: the params must be a JSON object with a "name" string`).WithOutcome(jsonrpc.OutcomeNotRun)

// errNotListed is needs' error for a tool no listing has.
var errNotListed = errors.New("the tool is in no listing")

// needs returns the tool's server and why it needs approval ("" when it
// does not). What the gateway cannot see it does not trust: a tool no
// listing has, or a server lookup does not know, matches the patterns
// that need them. err is set only when ctx ended.
func (ap *approver) needs(ctx context.Context, up bridge.Upstream, name string) (server, why string, err error) {
	server, known := ap.lookup(name)
	if !known && ap.byServer {
		// The router may learn a tool's server from a listing: list,
		// then look again.
		if _, _, err := ap.annotations(ctx, up, name); err != nil {
			return server, "", err
		}
		server, known = ap.lookup(name)
	}
	facts := toolFacts{name: name, server: server, known: known}
	for _, p := range ap.byName {
		if p.match(facts, true) { // a server not known matches: the safe side
			return server, "it matches the approval policy (" + p.String() + ")", nil
		}
	}
	if ap.a.SkipDestructive && len(ap.byHint) == 0 {
		return server, "", nil
	}
	ann, listed, err := ap.annotations(ctx, up, name)
	if err != nil {
		return server, "", err
	}
	if !listed {
		return server, "", errNotListed
	}
	if !ap.a.SkipDestructive && ann != nil && ann.DestructiveHint != nil && *ann.DestructiveHint {
		return server, "it is marked destructive", nil
	}
	facts.hints = hintsOf(ann)
	for _, p := range ap.byHint {
		if p.match(facts, true) {
			return server, "it matches the approval policy (" + p.String() + ")", nil
		}
	}
	return server, "", nil
}

// annotations returns the tool's annotations from the catalogue, listing
// the tools through up when none was made, after tools/list_changed, or
// (at most once a second) when the catalogue lacks name. One listing runs
// at a time; the others wait for it. No lock is held while listing.
func (ap *approver) annotations(ctx context.Context, up bridge.Upstream, name string) (*mcp.ToolAnnotations, bool, error) {
	for round := 0; ; round++ {
		ap.mu.Lock()
		changed := ap.fresh && ap.freshGen != ap.gen
		ann, have := ap.tools[name]
		switch {
		case ap.fresh && !changed && have:
			ap.mu.Unlock()
			return ann, true, nil
		case ap.listing != nil:
			wait := ap.listing
			ap.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
		case round > 0 || !changed && !ap.lastList.IsZero() && time.Since(ap.lastList) < relistEvery:
			// Listed just now (or failing, or changing without end):
			// what is known decides.
			ap.mu.Unlock()
			return ann, have, nil
		}
		done := make(chan struct{})
		ap.listing, ap.lastList = done, time.Now()
		gen := ap.gen
		ap.mu.Unlock()

		got := map[string]*mcp.ToolAnnotations{}
		var lerr error
		for t, err := range up.Tools(ctx) {
			if err != nil {
				lerr = err
				break
			}
			got[t.Name] = t.Annotations
		}

		ap.mu.Lock()
		ap.listing = nil
		if lerr == nil {
			ap.tools, ap.fresh, ap.freshGen = got, true, gen
		} else {
			// Keep what is known; a partial listing adds to it.
			for k, v := range got {
				ap.tools[k] = v
			}
			ap.fresh = false
		}
		ann, have = ap.tools[name]
		again := lerr == nil && ap.gen != gen
		ap.mu.Unlock()
		close(done)
		switch {
		case ctx.Err() != nil:
			return nil, false, ctx.Err()
		case lerr != nil:
			ap.log.WarnContext(ctx, "listing the tools for approvals failed; a tool not listed needs approval", "view", ap.view, "err", lerr)
			return ann, have, nil
		case !again:
			return ann, have, nil
		}
		// The tools changed while they were listed: once more.
	}
}

// decide asks the calling client, or applies the policy, and records the
// decision. It returns nil when the call may run, else the refusal.
func (ap *approver) decide(ctx context.Context, elicit func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error), name, server, why string, args json.RawMessage) error {
	d := Decision{View: ap.view, Tool: name, Server: server}
	var reason string
	if elicit == nil {
		d.By, d.Approved = byPolicy, ap.a.Default
		reason = "the client cannot be asked (it declared no form elicitation) and the gateway's policy denies it"
	} else {
		tctx, cancel := context.WithTimeout(ctx, ap.timeout)
		res, err := elicit(tctx, &mcp.ElicitParams{Message: question(name, server, why, args), RequestedSchema: approvalSchema})
		timedOut := tctx.Err() != nil
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			// The call was given up while asking: nothing was decided.
			ap.log.InfoContext(ctx, "tool call not run: cancelled while waiting for approval", "view", ap.view, "tool", name, "server", server)
			return refusedCall(name, server, "", "not run: the call was cancelled while waiting for approval of tool "+strconv.Quote(name))
		case err != nil && timedOut:
			d.By = byTimeout
			reason = "no answer to the approval request within " + ap.timeout.String()
		case err != nil:
			d.By = byClient
			reason = "the approval request failed: " + err.Error()
		default:
			d.By = byClient
			d.Approved, reason = answered(res)
		}
	}
	d.At = time.Now()
	ap.log.InfoContext(ctx, "tool call approval", "view", ap.view, "tool", name, "server", server, "approved", d.Approved, "by", d.By)
	if ap.a.OnDecision != nil {
		ap.a.OnDecision(d)
	}
	if d.Approved {
		return nil
	}
	return refusedCall(name, server, d.By, "not run: tool "+strconv.Quote(name)+ofServer(server)+" needs approval because "+why+"; "+reason+". Do not call it again unless the user asks you to.")
}

// ofServer names the server in a sentence, if it is known.
func ofServer(server string) string {
	if server == "" {
		return ""
	}
	return " of server " + strconv.Quote(server)
}

// answered reads the client's answer: approved only on accept with
// approve true.
func answered(res *mcp.ElicitResult) (bool, string) {
	switch {
	case res == nil:
		return false, "the client gave no answer"
	case res.Action == mcp.ElicitDecline:
		return false, "the user declined it"
	case res.Action == mcp.ElicitCancel:
		return false, "the user dismissed the approval request"
	case res.Action != mcp.ElicitAccept:
		return false, "the client answered with the unknown action " + strconv.Quote(res.Action)
	}
	if v, ok := res.Content["approve"].(bool); ok && v {
		return true, ""
	}
	return false, "the user answered no"
}

// question is the message a person reads: the tool, its server, why it
// is asked, and the start of the arguments.
func question(name, server, why string, args json.RawMessage) string {
	var b strings.Builder
	b.WriteString("Allow the tool call " + strconv.Quote(name) + ofServer(server))
	b.WriteString("? It needs approval because " + why + ".\nArguments: ")
	b.WriteString(shownArguments(args))
	return b.String()
}

// shownArguments is the arguments' JSON on one line, cut to
// maxShownArguments bytes at a character's edge.
func shownArguments(args json.RawMessage) string {
	var c bytes.Buffer
	s := string(args)
	if json.Compact(&c, args) == nil {
		s = c.String()
	}
	if s == "" || s == "null" {
		return "(none)"
	}
	if len(s) <= maxShownArguments {
		return s
	}
	cut := maxShownArguments
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)-cut) + " more bytes)"
}

// notRun is the refusal of a call that was not passed on: its data says
// so (jsonrpc.OutcomeKey "not-run") and, when a decision was made, who
// made it.
func refusedCall(name, server, by, message string) error {
	e := jsonrpc.NewError(jsonrpc.CodeInternalError, message)
	if by != "" {
		e.Data, _ = json.Marshal(map[string]map[string]string{approvalKey: {"tool": name, "server": server, "by": by}})
	}
	return e.WithOutcome(jsonrpc.OutcomeNotRun)
}

// hintsOf are a tool's annotations as the patterns read them.
func hintsOf(a *mcp.ToolAnnotations) hints {
	if a == nil {
		return hints{}
	}
	return hints{readOnly: a.ReadOnlyHint, destructive: a.DestructiveHint, idempotent: a.IdempotentHint, openWorld: a.OpenWorldHint}
}
