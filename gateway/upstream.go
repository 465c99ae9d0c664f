package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/pin"
)

// ServerName is the serverInfo name the gateway gives its clients.
const ServerName = "anymcp-gateway"

// fleetUpstream is a bridge.Upstream over a fleet: the whole fleet served
// as one server, each request routed to the one server it names.
//
// The bridge dials an Upstream for its shared connection (every
// stateless client), for each session, and for each stateless call that
// may need input; each gets a fleet of its own over the same servers,
// with the downstream's options (its handlers, its notification
// callbacks) on every server's Conn. A fleet dials a server on first
// use: a session has its own upstream connections, one per server it
// uses, never one per call.
type fleetUpstream struct {
	h *hub
	f *fleet.Fleet

	mu      sync.Mutex
	level   mcp.LoggingLevel        // the last logging/setLevel, "" when none
	leveled map[string]*client.Conn // server → the Conn told level
}

// dial is the Dialer of fleetUpstream, for a view that serves everything.
func (h *hub) dial(ctx context.Context, d bridge.Downstream) (bridge.Upstream, error) {
	return h.dialer(nil)(ctx, d)
}

// dialer is the Dialer of fleetUpstream for a view: heard gives, of a
// client's Changes, those it hears of server (nil: all of them).
func (h *hub) dialer(heard func(server string, c bridge.Changes) bridge.Changes) bridge.Dialer {
	return func(ctx context.Context, d bridge.Downstream) (bridge.Upstream, error) {
		return h.dialWith(ctx, d, heard)
	}
}

func (h *hub) dialWith(_ context.Context, d bridge.Downstream, heard func(string, bridge.Changes) bridge.Changes) (bridge.Upstream, error) {
	servers := make([]fleet.Server, len(h.servers))
	for i, s := range h.servers {
		c := d.Changes
		if heard != nil {
			c = heard(s.Name, c)
		}
		s.Options = slices.Concat(s.Options, d.Options, c.Options())
		servers[i] = s
	}
	f, err := fleet.New(servers, h.fleetOpts...)
	if err != nil {
		return nil, err
	}
	return &fleetUpstream{h: h, f: f, leveled: map[string]*client.Conn{}}, nil
}

// Info is the gateway's own. Its era is the initialize era whatever the
// servers': a fleet mixes eras, and an initialize-era server asks its
// client (sampling, elicitation, roots) on the connection, not on the
// call. Told so, the bridge gives each stateless call that may need
// input a connection (here, a fleet) of its own, carrying that client's
// handlers, so that every question reaches the client that caused it. A
// stateless server's questions come back in the call's result
// (client.ForClient) and cross either way.
func (u *fleetUpstream) Info() client.Info { return u.h.info() }

func (u *fleetUpstream) Close() error { return u.f.Close() }

// Call routes one request to the server it names.
func (u *fleetUpstream) Call(ctx context.Context, method string, params, result any, opts ...client.CallOption) error {
	switch method {
	case "ping":
		return encodeResult(result, struct{}{})
	case "tools/list":
		return u.listTools(ctx, result)
	case "tools/call":
		return u.callTool(ctx, params, result, opts)
	case "prompts/list":
		return u.listPrompts(ctx, result)
	case "prompts/get":
		return u.getPrompt(ctx, params, result, opts)
	case "resources/list", "resources/templates/list":
		return u.listResources(ctx, method, result)
	case "resources/read":
		p, err := paramsOf(method, params)
		if err != nil {
			return err
		}
		server, err := u.resourceServer(ctx, p.str("uri"))
		if err != nil {
			return err
		}
		return u.forward(ctx, server, method, p.raw(), result, opts)
	case "resources/subscribe", "resources/unsubscribe":
		p, err := paramsOf(method, params)
		if err != nil {
			return err
		}
		if method == "resources/subscribe" {
			err = u.Subscribe(ctx, p.str("uri"))
		} else {
			err = u.Unsubscribe(ctx, p.str("uri"))
		}
		if err != nil {
			return err
		}
		return encodeResult(result, struct{}{})
	case "logging/setLevel":
		p, err := paramsOf(method, params)
		if err != nil {
			return err
		}
		if err := u.SetLogLevel(ctx, mcp.LoggingLevel(p.str("level"))); err != nil {
			return err
		}
		return encodeResult(result, struct{}{})
	case "completion/complete":
		return u.complete(ctx, params, result, opts)
	}
	return notRun(jsonrpc.CodeMethodNotFound, "method not found: %q (the gateway does not route it)", method)
}

// notRun is an error of the gateway's own for a request it did not pass
// on: its data says the request did not run.
func notRun(code int64, format string, args ...any) error {
	return jsonrpc.NewError(code, fmt.Sprintf(format, args...)).WithOutcome(jsonrpc.OutcomeNotRun)
}

// hold returns the Conn of server, in use until release: dialled if need
// be, and told the log level the client set, if it was not yet.
func (u *fleetUpstream) hold(ctx context.Context, server string) (*client.Conn, func(), error) {
	c, release, err := u.f.Hold(ctx, server)
	if err != nil {
		return nil, nil, err
	}
	info := c.Info()
	u.h.noteInfo(server, &info)
	u.mu.Lock()
	level, told := u.level, u.leveled[server] == c
	u.mu.Unlock()
	if level != "" && !told && info.Capabilities.Logging != nil {
		if err := c.SetLogLevel(ctx, level); err != nil {
			u.h.log.Info("anymcp gateway: logging/setLevel failed", "server", server, "err", err)
		} else {
			u.mu.Lock()
			u.leveled[server] = c
			u.mu.Unlock()
		}
	}
	return c, release, nil
}

// forward sends method with params to server, its answer into result.
func (u *fleetUpstream) forward(ctx context.Context, server, method string, params, result any, opts []client.CallOption) error {
	c, release, err := u.hold(ctx, server)
	if err != nil {
		return err
	}
	defer release()
	return c.Call(ctx, method, params, result, opts...)
}

// noteConnected records what every connected server said of itself.
func (u *fleetUpstream) noteConnected() {
	for _, st := range u.f.Status() {
		u.h.noteInfo(st.Server, st.Info)
	}
}

// leftOut logs the servers a listing left out.
func (u *fleetUpstream) leftOut(what string, errs map[string]*fleet.ServerError) {
	for _, e := range errs {
		if e.Kind == fleet.KindDisabled {
			continue
		}
		u.h.log.Warn("anymcp gateway: a server is left out of "+what, "server", e.Server, "kind", e.Kind, "err", e.Err)
	}
}

func (u *fleetUpstream) tools(ctx context.Context) (*fleet.Catalogue, error) {
	cat, err := u.f.Tools(ctx)
	if err != nil {
		return nil, err
	}
	u.noteConnected()
	u.leftOut("tools/list", cat.Errors)
	u.h.learnTools(cat.Tools)
	return cat, nil
}

// listTools answers tools/list: every tool under its fleet name, as its
// server sent it but for the name, in one page.
func (u *fleetUpstream) listTools(ctx context.Context, result any) error {
	cat, err := u.tools(ctx)
	if err != nil {
		return err
	}
	list := make([]json.RawMessage, 0, len(cat.Tools))
	for _, t := range cat.Tools {
		raw, err := withName(t.Raw, t.Name)
		if err != nil {
			u.h.log.Warn("anymcp gateway: a tool is left out of tools/list", "server", t.Server, "tool", t.Tool.Name, "err", err)
			continue
		}
		list = append(list, raw)
	}
	return encodeResult(result, map[string]any{"tools": list})
}

// Tools lists the tools under their fleet names.
func (u *fleetUpstream) Tools(ctx context.Context) iter.Seq2[mcp.Tool, error] {
	return func(yield func(mcp.Tool, error) bool) {
		cat, err := u.tools(ctx)
		if err != nil {
			yield(mcp.Tool{}, err)
			return
		}
		for _, t := range cat.Tools {
			tool := t.Tool
			tool.Name = t.Name
			if !yield(tool, nil) {
				return
			}
		}
	}
}

// toolRoute finds the server and own name of a fleet name: from this
// fleet's last listing, from any fleet's of the gateway, or after
// listing this fleet's tools.
func (u *fleetUpstream) toolRoute(ctx context.Context, name string) (route, error) {
	if s, t, ok := u.f.Lookup(name); ok {
		return route{s, t}, nil
	}
	if r, ok := u.h.tool(name); ok && !u.h.pinned {
		return r, nil
	}
	cat, err := u.tools(ctx)
	if err != nil {
		return route{}, err
	}
	if s, t, ok := u.f.Lookup(name); ok {
		return route{s, t}, nil
	}
	if why := heldReason(cat, name); why != "" {
		return route{}, notRun(jsonrpc.CodeInvalidParams, "tool %q is held back: %s; it runs again once its new definition is approved", name, why)
	}
	return route{}, notRun(jsonrpc.CodeInvalidParams, "unknown tool %q: no server of the gateway offers it (tools/list names them)", name)
}

// callTool forwards tools/call under the tool's own name. Its params go
// as the Conn's own type when they can, so that a 2025-11-25 server's
// tool that runs only as a task is asked for as one and waited for.
func (u *fleetUpstream) callTool(ctx context.Context, params, result any, opts []client.CallOption) error {
	if raw, ok := params.(json.RawMessage); ok {
		if c, err := readCall(raw); err == nil {
			return u.callRead(ctx, c, result, opts)
		}
	}
	return u.callParams(ctx, params, result, opts)
}

// callRead is callTool of a call read already (its params are c.raw). A
// call of name, arguments and _meta only goes as the Conn's type, built
// from what was read; any other is read again, as callParams reads it.
func (u *fleetUpstream) callRead(ctx context.Context, c *toolCall, result any, opts []client.CallOption) error {
	p, ok := typedOf(c)
	if !ok {
		return u.callParams(ctx, c.raw, result, opts)
	}
	r, err := u.toolRoute(ctx, c.name)
	if err != nil {
		return err
	}
	p.Name = r.name
	return u.forward(ctx, r.server, "tools/call", p, result, opts)
}

// typedOf is c as the Conn's own type, as typedCall makes it, when c
// holds a name and nothing but arguments and _meta (an object), each
// once and in exact letter case; false for anything else.
func typedOf(c *toolCall) (*mcp.CallToolParams, bool) {
	if c.typed != nil || c.name == "" {
		return nil, false
	}
	var meta *member
	seen := 0
	for i := range c.ms {
		m := &c.ms[i]
		bit := 0
		switch string(m.key) {
		case "name":
			bit = 1
		case "arguments":
			bit = 2
		case "_meta":
			bit, meta = 4, m
		default:
			return nil, false // a task asked for, a round's answers, a key in other case
		}
		if seen&bit != 0 {
			return nil, false // sent twice
		}
		seen |= bit
	}
	p := &c.call
	if c.args != nil && string(c.args) != "null" {
		p.Arguments = c.args
	}
	if meta != nil {
		if meta.val[0] != '{' {
			return nil, false
		}
		ms, _ := members(meta.val)
		p.Meta = make(mcp.Meta, len(ms))
		for _, m := range ms {
			if !utf8.Valid(m.key) {
				// Decoding reads such a key as U+FFFD, which encoding
				// writes as is, where Marshal of the raw key escapes it:
				// the older reading sends it as every decoder would.
				c.call = mcp.CallToolParams{}
				return nil, false
			}
			p.Meta[string(m.key)] = json.RawMessage(m.val)
		}
	}
	return p, true
}

// callParams is callTool of params as sent (or of any other type).
func (u *fleetUpstream) callParams(ctx context.Context, params, result any, opts []client.CallOption) error {
	p, err := paramsOf("tools/call", params)
	if err != nil {
		return err
	}
	name := p.str("name")
	if name == "" {
		return notRun(jsonrpc.CodeInvalidParams, "tools/call: name is required")
	}
	r, err := u.toolRoute(ctx, name)
	if err != nil {
		return err
	}
	p.set("name", r.name)
	return u.forward(ctx, r.server, "tools/call", p.typedCall(r.name), result, opts)
}

func (u *fleetUpstream) prompts(ctx context.Context) (*fleet.PromptCatalogue, error) {
	cat, err := u.f.Prompts(ctx)
	if err != nil {
		return nil, err
	}
	u.noteConnected()
	u.leftOut("prompts/list", cat.Errors)
	u.h.learnPrompts(cat.Prompts)
	return cat, nil
}

func (u *fleetUpstream) listPrompts(ctx context.Context, result any) error {
	cat, err := u.prompts(ctx)
	if err != nil {
		return err
	}
	list := make([]mcp.Prompt, 0, len(cat.Prompts))
	for _, p := range cat.Prompts {
		pr := p.Prompt
		pr.Name = p.Name
		list = append(list, pr)
	}
	return encodeResult(result, map[string]any{"prompts": list})
}

func (u *fleetUpstream) promptRoute(ctx context.Context, name string) (route, error) {
	if r, ok := u.h.prompt(name); ok {
		return r, nil
	}
	if _, err := u.prompts(ctx); err != nil {
		return route{}, err
	}
	if r, ok := u.h.prompt(name); ok {
		return r, nil
	}
	return route{}, notRun(jsonrpc.CodeInvalidParams, "unknown prompt %q: no server of the gateway offers it (prompts/list names them)", name)
}

func (u *fleetUpstream) getPrompt(ctx context.Context, params, result any, opts []client.CallOption) error {
	p, err := paramsOf("prompts/get", params)
	if err != nil {
		return err
	}
	name := p.str("name")
	if name == "" {
		return notRun(jsonrpc.CodeInvalidParams, "prompts/get: name is required")
	}
	r, err := u.promptRoute(ctx, name)
	if err != nil {
		return err
	}
	p.set("name", r.name)
	return u.forward(ctx, r.server, "prompts/get", p.raw(), result, opts)
}

func (u *fleetUpstream) resources(ctx context.Context) ([]fleet.Resource, []fleet.Template, error) {
	cat, err := u.f.Resources(ctx)
	if err != nil {
		return nil, nil, err
	}
	u.noteConnected()
	u.leftOut("resources/list", cat.Errors)
	res, tpl := u.h.mergeResources(cat)
	return res, tpl, nil
}

// listResources answers resources/list and resources/templates/list: the
// URIs are the servers' own; one two servers list is the first's.
func (u *fleetUpstream) listResources(ctx context.Context, method string, result any) error {
	res, tpl, err := u.resources(ctx)
	if err != nil {
		return err
	}
	if method == "resources/templates/list" {
		list := make([]mcp.ResourceTemplate, len(tpl))
		for i, t := range tpl {
			list[i] = t.Template
		}
		return encodeResult(result, map[string]any{"resourceTemplates": list})
	}
	list := make([]mcp.Resource, len(res))
	for i, r := range res {
		list[i] = r.Resource
	}
	return encodeResult(result, map[string]any{"resources": list})
}

// resourceServer returns the server of uri (see hub.resourceServer),
// listing this fleet's resources when no listing has it.
func (u *fleetUpstream) resourceServer(ctx context.Context, uri string) (string, error) {
	if uri == "" {
		return "", notRun(jsonrpc.CodeInvalidParams, "uri is required")
	}
	if s, ok := u.h.resourceServer(uri); ok {
		return s, nil
	}
	if _, _, err := u.resources(ctx); err != nil {
		return "", err
	}
	if s, ok := u.h.resourceServer(uri); ok {
		return s, nil
	}
	return "", notRun(jsonrpc.CodeResourceNotFound, "resource %q: no server of the gateway lists it or a template that matches it", uri)
}

// complete routes completion/complete: a prompt by its fleet name, a
// resource template by its text (or, failing that, as a URI).
func (u *fleetUpstream) complete(ctx context.Context, params, result any, opts []client.CallOption) error {
	p, err := paramsOf("completion/complete", params)
	if err != nil {
		return err
	}
	var ref map[string]json.RawMessage
	if json.Unmarshal(p.m["ref"], &ref) != nil || ref == nil {
		return notRun(jsonrpc.CodeInvalidParams, "completion/complete: ref must be an object")
	}
	refp := &memberParams{m: ref}
	var server string
	switch refp.str("type") {
	case "ref/prompt":
		r, err := u.promptRoute(ctx, refp.str("name"))
		if err != nil {
			return err
		}
		server = r.server
		refp.set("name", r.name)
		p.m["ref"] = refp.raw()
	case "ref/resource":
		uri := refp.str("uri")
		s, ok := u.h.templateServer(uri)
		if !ok {
			if _, _, err := u.resources(ctx); err != nil {
				return err
			}
			s, ok = u.h.templateServer(uri)
		}
		if !ok {
			if s, err = u.resourceServer(ctx, uri); err != nil {
				return err
			}
		}
		server = s
	default:
		return notRun(jsonrpc.CodeInvalidParams, "completion/complete: unknown ref type %q", refp.str("type"))
	}
	return u.forward(ctx, server, "completion/complete", p.raw(), result, opts)
}

// Listening connects every server and waits until each listens for
// changes. A server that fails is logged, and does not fail the others.
func (u *fleetUpstream) Listening(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, s := range u.h.serverNames() {
		wg.Go(func() {
			c, release, err := u.hold(ctx, s)
			if err == nil {
				err = c.Listening(ctx)
				release()
			}
			if err != nil && ctx.Err() == nil {
				u.h.log.Warn("anymcp gateway: a server's changes are not listened to", "server", s, "err", err)
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

func (u *fleetUpstream) Subscribe(ctx context.Context, uri string) error {
	server, err := u.resourceServer(ctx, uri)
	if err != nil {
		return err
	}
	c, release, err := u.hold(ctx, server)
	if err != nil {
		return err
	}
	defer release()
	return c.Subscribe(ctx, uri)
}

func (u *fleetUpstream) Unsubscribe(ctx context.Context, uri string) error {
	server, err := u.resourceServer(ctx, uri)
	if err != nil {
		return err
	}
	c, release, err := u.hold(ctx, server)
	if err != nil {
		return err
	}
	defer release()
	return c.Unsubscribe(ctx, uri)
}

// SetLogLevel tells every connected server that takes it, and every
// server connected later on its first use. A server that refuses is
// logged: the level is the session's, not one server's.
func (u *fleetUpstream) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	if level == "" {
		return notRun(jsonrpc.CodeInvalidParams, "logging/setLevel: level is required")
	}
	u.mu.Lock()
	u.level = level
	clear(u.leveled)
	u.mu.Unlock()
	u.eachConnected(ctx, func(string, *client.Conn) {}) // hold tells each the level
	return nil
}

// NotifyRootsChanged tells every connected server.
func (u *fleetUpstream) NotifyRootsChanged(ctx context.Context) error {
	var errs []error
	var mu sync.Mutex
	u.eachConnected(ctx, func(server string, c *client.Conn) {
		if err := c.NotifyRootsChanged(ctx); err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("%s: %w", server, err))
			mu.Unlock()
		}
	})
	return errors.Join(errs...)
}

// eachConnected runs f, at once, on every server connected now (none is
// dialled for it).
func (u *fleetUpstream) eachConnected(ctx context.Context, f func(string, *client.Conn)) {
	var wg sync.WaitGroup
	for _, st := range u.f.Status() {
		if st.State != fleet.StateReady {
			continue
		}
		wg.Go(func() {
			c, release, err := u.hold(ctx, st.Server)
			if err != nil {
				return // gone since: it hears on its next connection
			}
			defer release()
			f(st.Server, c)
		})
	}
	wg.Wait()
}

// encodeResult gives result (the bridge's *json.RawMessage, or any pointer)
// the JSON of v.
func encodeResult(result, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if rm, ok := result.(*json.RawMessage); ok {
		*rm = raw
		return nil
	}
	return json.Unmarshal(raw, result)
}

// memberParams are a request's params as members, as the client sent them.
type memberParams struct{ m map[string]json.RawMessage }

// paramsOf reads params (the bridge's json.RawMessage, or any value that
// encodes to a JSON object).
func paramsOf(method string, params any) (*memberParams, error) {
	var raw []byte
	switch p := params.(type) {
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	case nil:
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return nil, notRun(jsonrpc.CodeInvalidParams, "%s: params: %v", method, err)
		}
		raw = b
	}
	r := &memberParams{m: map[string]json.RawMessage{}}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &r.m); err != nil || r.m == nil {
			return nil, notRun(jsonrpc.CodeInvalidParams, "%s: params must be a JSON object", method)
		}
	}
	return r, nil
}

func (r *memberParams) str(name string) string {
	var s string
	_ = json.Unmarshal(r.m[name], &s)
	return s
}

func (r *memberParams) set(name, value string) {
	r.m[name], _ = json.Marshal(value)
}

func (r *memberParams) raw() json.RawMessage {
	b, _ := json.Marshal(r.m)
	return b
}

// typedCall returns tools/call params as the Conn's own type when they
// hold nothing it lacks (name, arguments, _meta), else as they are.
func (r *memberParams) typedCall(name string) any {
	for k := range r.m {
		if k != "name" && k != "arguments" && k != "_meta" {
			return r.raw() // a task asked for, a round's answers: as sent
		}
	}
	p := &mcp.CallToolParams{Name: name}
	if a, ok := r.m["arguments"]; ok && string(a) != "null" {
		p.Arguments = a
	}
	if raw, ok := r.m["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) != nil {
			return r.raw()
		}
		p.Meta = make(mcp.Meta, len(meta))
		for k, v := range meta {
			p.Meta[k] = v
		}
	}
	return p
}

// heldReason says why the tool of fleet name is held back (its pinned
// definition changed: what changed), "" when it is not.
func heldReason(cat *fleet.Catalogue, name string) string {
	for _, e := range cat.Errors {
		if e.Kind != fleet.KindHeld {
			continue
		}
		for _, err := range unwrapAll(e.Err) {
			var ce *pin.ChangedError
			if errors.As(err, &ce) && strings.Replace(ce.Key, "/", "__", 1) == name {
				return ce.Error()
			}
		}
	}
	return ""
}

// unwrapAll is err and, when it joins several, each of them.
func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
