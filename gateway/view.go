package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/toolrank"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/mcp"
)

// ViewError says why a View cannot be served: which view, which of its
// fields, the value at fault, and why.
type ViewError struct {
	View   string // the view's Name ("" for the default view)
	Field  string // "Name", "Allow", "Deny", "Rename", "Describe", "MaxTools" or "OwnNames"
	Value  string // the pattern, name or number at fault
	Reason string
}

func (e *ViewError) Error() string {
	v := "the default view"
	if e.View != "" {
		v = "view " + strconv.Quote(e.View)
	}
	return fmt.Sprintf("%s: %s %s: %s", v, e.Field, strconv.Quote(toolrank.Clip(e.Value, 200)), e.Reason)
}

// nameRE is what a view's name, a fleet name and a tool's new name match:
// the names LLM APIs accept.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// The kinds of pattern of View.Allow and View.Deny (and Approvals.Require).
type patternKind uint8

const (
	byName   patternKind = iota // a path.Match glob over fleet names
	byServer                    // "server:GLOB", over server names
	byHint                      // "hint:NAME", a tool annotation that is true
)

// hintNames are the annotations a "hint:" pattern may name.
var hintNames = []string{"readOnly", "destructive", "idempotent", "openWorld"}

// pattern is one compiled pattern.
type pattern struct {
	kind patternKind
	arg  string // the glob, or the hint's name
}

// String is the pattern as written.
func (p pattern) String() string {
	switch p.kind {
	case byServer:
		return "server:" + p.arg
	case byHint:
		return "hint:" + p.arg
	}
	return p.arg
}

// parsePattern compiles s: an invalid glob or an unknown hint is an error
// that says so, never a pattern that silently matches nothing.
func parsePattern(s string) (pattern, error) {
	p := pattern{kind: byName, arg: s}
	if g, ok := strings.CutPrefix(s, "server:"); ok {
		p = pattern{kind: byServer, arg: g}
	} else if h, ok := strings.CutPrefix(s, "hint:"); ok {
		if !slices.Contains(hintNames, h) {
			return p, fmt.Errorf("no such hint (the hints are %s)", strings.Join(hintNames, ", "))
		}
		return pattern{kind: byHint, arg: h}, nil
	}
	if p.arg == "" {
		return p, fmt.Errorf("an empty pattern matches nothing")
	}
	if _, err := path.Match(p.arg, ""); err != nil {
		return p, fmt.Errorf("a malformed glob: %v", err)
	}
	return p, nil
}

// parsePatterns compiles the patterns of a View's or Approvals' field.
func parsePatterns(view, field string, ss []string) ([]pattern, error) {
	out := make([]pattern, 0, len(ss))
	for _, s := range ss {
		p, err := parsePattern(s)
		if err != nil {
			return nil, &ViewError{View: view, Field: field, Value: s, Reason: err.Error()}
		}
		out = append(out, p)
	}
	return out, nil
}

// toolFacts are what patterns match a tool by.
type toolFacts struct {
	name   string // fleet name
	server string
	known  bool  // server is known
	hints  hints // read only when a pattern is a hint
}

// hints are a tool's annotations, each as sent: nil when absent (or
// ambiguous, or not a boolean).
type hints struct{ readOnly, destructive, idempotent, openWorld *bool }

// has says whether the annotation named is true, absent ones taking the
// specification's defaults: destructive and openWorld true, readOnly and
// idempotent false; a readOnly tool is never destructive.
func (h hints) has(name string) bool {
	is := func(b *bool, def bool) bool {
		if b == nil {
			return def
		}
		return *b
	}
	switch name {
	case "readOnly":
		return is(h.readOnly, false)
	case "destructive":
		return !is(h.readOnly, false) && is(h.destructive, true)
	case "idempotent":
		return is(h.idempotent, false)
	case "openWorld":
		return is(h.openWorld, true)
	}
	return false
}

// match says whether p matches t. A server pattern matches a tool of
// unknown server when unknown is true (Deny: the safe side).
func (p pattern) match(t toolFacts, unknown bool) bool {
	switch p.kind {
	case byName:
		ok, _ := path.Match(p.arg, t.name)
		return ok
	case byServer:
		if !t.known {
			return unknown
		}
		ok, _ := path.Match(p.arg, t.server)
		return ok
	case byHint:
		return t.hints.has(p.arg)
	}
	return false
}

// selection is what a View's Allow and Deny select.
type selection struct {
	allow, deny []pattern
}

// tool says whether t is selected: a pattern of allow matches it (or
// allow is empty) and none of deny does. Deny always wins.
func (s selection) tool(t toolFacts) bool {
	for _, p := range s.deny {
		if p.match(t, true) {
			return false
		}
	}
	if len(s.allow) == 0 {
		return true
	}
	for _, p := range s.allow {
		if p.match(t, false) {
			return true
		}
	}
	return false
}

// server says whether the prompts and resources of a server are
// selected: only the server patterns apply (see serves).
func (s selection) server(server string, known bool) bool { return s.serves(server, known, false) }

// serves says whether what server offers may be selected: no server
// pattern of deny matches it (a server not known matches every one), and
// allow is empty or one of its server patterns matches it. For tools,
// any other pattern of allow may match a tool of any server.
func (s selection) serves(server string, known, tools bool) bool {
	t := toolFacts{server: server, known: known}
	for _, p := range s.deny {
		if p.kind == byServer && p.match(t, true) {
			return false
		}
	}
	if len(s.allow) == 0 {
		return true
	}
	for _, p := range s.allow {
		if p.kind != byServer && tools || p.kind == byServer && p.match(t, false) {
			return true
		}
	}
	return false
}

// needs says whether a pattern of s is of kind k.
func (s selection) needs(k patternKind) bool {
	has := func(p pattern) bool { return p.kind == k }
	return slices.ContainsFunc(s.allow, has) || slices.ContainsFunc(s.deny, has)
}

// view is a compiled View: its patterns, its renames both ways, and the
// lookups that tell a name's or a URI's server.
type view struct {
	name     string
	sel      selection
	hinted   bool              // a pattern is a hint: a call needs the tool's annotations
	rename   map[string]string // fleet name → view name
	back     map[string]string // view name → fleet name, for renamed tools
	describe map[string]string // fleet name → description
	maxTools int
	ownNames bool // serve tools and prompts under their servers' own names

	serverOf    func(name string) (server string, ok bool) // a tool's or prompt's fleet name
	serverOfURI func(uri string) (server string, ok bool)  // a resource's URI or a template's uriTemplate

	// With ownNames: the own name of a tool's or a prompt's fleet name,
	// and the fleet names of the prompts whose own name is given.
	ownTool, ownPrompt func(fleet string) (own string, ok bool)
	promptsNamed       func(own string) []string
}

// ownNamesFrom gives the view the lookups OwnNames needs (see view).
func (v *view) ownNamesFrom(ownTool, ownPrompt func(string) (string, bool), promptsNamed func(string) []string) {
	v.ownTool, v.ownPrompt, v.promptsNamed = ownTool, ownPrompt, promptsNamed
}

// newView compiles v. serverOf tells the server of a tool's or prompt's
// fleet name, as the upstream below the view serves them; serverOfURI
// that of a resource URI (or a template's uriTemplate), as the upstream
// routes it. An invalid name or pattern, a rename that is no valid name
// or that two tools would share, is a *ViewError.
func newView(v View, serverOf, serverOfURI func(string) (string, bool)) (*view, error) {
	fail := func(field, value, reason string) error {
		return &ViewError{View: v.Name, Field: field, Value: value, Reason: reason}
	}
	if v.Name != "" && !nameRE.MatchString(v.Name) {
		return nil, fail("Name", v.Name, "a view's name is 1 to 64 of A-Z, a-z, 0-9, _ and -")
	}
	if v.MaxTools < 0 {
		return nil, fail("MaxTools", strconv.Itoa(v.MaxTools), "a limit is 0 (none) or more")
	}
	if serverOf == nil || serverOfURI == nil {
		return nil, fail("Name", v.Name, "the gateway gave the view no way to tell a name's server")
	}
	out := &view{name: v.Name, maxTools: v.MaxTools, ownNames: v.OwnNames, serverOf: serverOf, serverOfURI: serverOfURI,
		rename: map[string]string{}, back: map[string]string{}, describe: map[string]string{}}
	var err error
	if out.sel.allow, err = parsePatterns(v.Name, "Allow", v.Allow); err != nil {
		return nil, err
	}
	if out.sel.deny, err = parsePatterns(v.Name, "Deny", v.Deny); err != nil {
		return nil, err
	}
	out.hinted = out.sel.needs(byHint)
	for _, from := range slices.Sorted(mapKeys(v.Rename)) {
		to := v.Rename[from]
		switch {
		case !nameRE.MatchString(from):
			return nil, fail("Rename", from, "not a fleet name (1 to 64 of A-Z, a-z, 0-9, _ and -)")
		case !nameRE.MatchString(to):
			return nil, fail("Rename", to, "a tool's new name is 1 to 64 of A-Z, a-z, 0-9, _ and -")
		case out.back[to] != "":
			return nil, fail("Rename", to, "the new name of both "+out.back[to]+" and "+from)
		case v.MaxTools > 0 && isMeta(to):
			return nil, fail("Rename", to, "the name of a meta tool this view offers above MaxTools")
		}
		if from == to {
			continue
		}
		out.rename[from], out.back[to] = to, from
	}
	for from, d := range v.Describe {
		if !nameRE.MatchString(from) {
			return nil, fail("Describe", from, "not a fleet name (1 to 64 of A-Z, a-z, 0-9, _ and -)")
		}
		out.describe[from] = d
	}
	return out, nil
}

func mapKeys(m map[string]string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// whole says whether the view is the whole fleet, unchanged: nothing to
// filter, rename, describe or bound.
func (v *view) whole() bool {
	return len(v.sel.allow) == 0 && len(v.sel.deny) == 0 && len(v.rename) == 0 && len(v.describe) == 0 && v.maxTools == 0 && !v.ownNames
}

// facts are what the patterns need of the tool of fleet name name.
func (v *view) facts(name string, h hints) toolFacts {
	t := toolFacts{name: name, hints: h}
	if v.sel.needs(byServer) {
		t.server, t.known = v.serverOf(name)
	}
	return t
}

// servesServer says whether the view serves the prompts or resources of
// the server whose lookup gave server, known.
func (v *view) servesServer(server string, known bool) bool { return v.sel.server(server, known) }

// heard are the changes of c a client of the view hears from server: of
// tools, unless no tool of server can be in the view; of prompts and
// resources, when the view serves the server's (docs/gateway.md,
// "Notifications").
func (v *view) heard(server string, c bridge.Changes) bridge.Changes {
	if !v.sel.serves(server, true, true) {
		c.Tools = nil
	}
	if !v.sel.server(server, true) {
		c.Prompts, c.Resources, c.ResourceUpdated = nil, nil, nil
	}
	return c
}

// wrap returns next with the view in front: every upstream it dials is
// served through the view (see viewUpstream). A view of the whole fleet
// returns next itself.
func (v *view) wrap(next bridge.Dialer) bridge.Dialer {
	if v.whole() {
		return next
	}
	return func(ctx context.Context, d bridge.Downstream) (bridge.Upstream, error) {
		u := &viewUpstream{v: v}
		// First, so that the view forgets its tools before the bridge
		// tells the clients to list them again.
		d.Options = append([]client.Option{client.OnToolsChanged(u.forget)}, d.Options...)
		up, err := next(ctx, d)
		if err != nil {
			return nil, err
		}
		u.up = up
		return u, nil
	}
}

// notServed refuses a request for a tool, prompt or resource (kind) the
// view does not serve, with the words and code of one that does not
// exist: a client learns nothing of what its view leaves out. The
// outcome says it did not run. The gateway answers its own unknown names
// with it too, so that the two cannot be told apart.
func notServed(kind, name string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown "+kind+": "+strconv.Quote(toolrank.Clip(name, 128))).WithOutcome(jsonrpc.OutcomeNotRun)
}

// badParams refuses params the view cannot read without doubt.
func badParams(method, why string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, method+": "+why).WithOutcome(jsonrpc.OutcomeNotRun)
}

// viewUpstream is one upstream connection served through a view.
type viewUpstream struct {
	v  *view
	up bridge.Upstream

	mu  sync.Mutex
	set *toolSet // the view's tools at the last listing; nil: list again
	gen uint64   // counts the upstream's tools/list_changed
}

var _ bridge.Upstream = (*viewUpstream)(nil)

// forget drops the tools listed: the upstream said its list changed.
func (u *viewUpstream) forget() {
	u.mu.Lock()
	u.set = nil
	u.gen++
	u.mu.Unlock()
}

func (u *viewUpstream) Info() client.Info                   { return u.up.Info() }
func (u *viewUpstream) Listening(ctx context.Context) error { return u.up.Listening(ctx) }
func (u *viewUpstream) NotifyRootsChanged(ctx context.Context) error {
	return u.up.NotifyRootsChanged(ctx)
}
func (u *viewUpstream) Close() error { return u.up.Close() }
func (u *viewUpstream) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	return u.up.SetLogLevel(ctx, level)
}

// Subscribe refuses a URI the view does not serve, as the upstream would
// refuse one it does not have.
func (u *viewUpstream) Subscribe(ctx context.Context, uri string) error {
	if !u.servesURI(uri) {
		return notServed("resource", uri)
	}
	return u.up.Subscribe(ctx, uri)
}

func (u *viewUpstream) Unsubscribe(ctx context.Context, uri string) error {
	if !u.servesURI(uri) {
		return notServed("resource", uri)
	}
	return u.up.Unsubscribe(ctx, uri)
}

func (u *viewUpstream) servesURI(uri string) bool {
	return u.v.servesServer(u.v.serverOfURI(uri))
}

// Tools yields the view's tools, under their names in the view.
func (u *viewUpstream) Tools(ctx context.Context) iter.Seq2[mcp.Tool, error] {
	return func(yield func(mcp.Tool, error) bool) {
		set, err := u.tools(ctx)
		if err != nil {
			yield(mcp.Tool{}, err)
			return
		}
		for _, t := range set.tools {
			var tool mcp.Tool
			if err := json.Unmarshal(t.raw, &tool); err != nil {
				continue
			}
			if !yield(tool, nil) {
				return
			}
		}
	}
}

// Call serves method through the view: the tools methods by meta.go,
// prompts and resources by their server, the rest as it is.
func (u *viewUpstream) Call(ctx context.Context, method string, params, result any, opts ...client.CallOption) error {
	switch method {
	case "tools/list":
		return u.listTools(ctx, params, result, opts)
	case "tools/call":
		return u.callTool(ctx, params, result, opts)
	case "prompts/list":
		return u.listFiltered(ctx, method, params, result, opts, "prompts", "name", u.v.serverOf)
	case "resources/list":
		return u.listFiltered(ctx, method, params, result, opts, "resources", "uri", u.v.serverOfURI)
	case "resources/templates/list":
		return u.listFiltered(ctx, method, params, result, opts, "resourceTemplates", "uriTemplate", u.v.serverOfURI)
	case "prompts/get":
		if u.v.ownNames {
			return u.getOwnPrompt(ctx, params, result, opts)
		}
		if err := u.check(method, params, "prompt", "name", u.v.serverOf); err != nil {
			return err
		}
	case "resources/read":
		if err := u.check(method, params, "resource", "uri", u.v.serverOfURI); err != nil {
			return err
		}
	case "completion/complete":
		p, err := u.checkCompletion(ctx, params)
		if err != nil {
			return err
		}
		params = p
	}
	return u.up.Call(ctx, method, params, result, opts...)
}

// check refuses a request whose member key (a prompt's name, a resource's
// URI) is of a server the view leaves out.
func (u *viewUpstream) check(method string, params any, kind, key string, lookup func(string) (string, bool)) error {
	_, ms, err := paramsObject(method, params)
	if err != nil {
		return err
	}
	name, jerr := stringMember(method, ms, key)
	if jerr != nil {
		return jerr
	}
	if !u.v.servesServer(lookup(name)) {
		return notServed(kind, name)
	}
	return nil
}

// getOwnPrompt answers prompts/get in a view of own names: the prompt
// goes upstream under its fleet name.
func (u *viewUpstream) getOwnPrompt(ctx context.Context, params, result any, opts []client.CallOption) error {
	const method = "prompts/get"
	raw, ms, err := paramsObject(method, params)
	if err != nil {
		return err
	}
	name, jerr := stringMember(method, ms, "name")
	if jerr != nil {
		return jerr
	}
	fleet, err := u.promptFleet(ctx, name)
	if err != nil {
		return err
	}
	nm, _ := only(ms, "name")
	return u.up.Call(ctx, method, json.RawMessage(splice(raw, []edit{{nm.start, nm.end, quoteJSON(fleet)}})), result, opts...)
}

// promptFleet is the fleet name of the prompt of the view whose own name
// is ownName: from the routes known when they name one, else from a fresh
// listing (routes may be stale). Two prompts of the view of that own name
// in the listing are an error naming both.
func (u *viewUpstream) promptFleet(ctx context.Context, ownName string) (string, error) {
	served := func(fleet string) bool { return u.v.servesServer(u.v.serverOf(fleet)) }
	if u.v.promptsNamed != nil {
		var hits []string
		for _, f := range u.v.promptsNamed(ownName) {
			if served(f) {
				hits = append(hits, f)
			}
		}
		if len(hits) == 1 {
			return hits[0], nil
		}
	}
	const method = "prompts/list"
	var raw json.RawMessage
	if err := u.up.Call(ctx, method, json.RawMessage(`{}`), &raw); err != nil {
		return "", err
	}
	var hits []string
	if ms, _, err := scanObject(raw); err == nil {
		if arr, err := only(ms, "prompts"); err == nil && arr != nil {
			for _, it := range elements(arr.val) {
				if it[0] != '{' {
					continue
				}
				ims, _ := members(it)
				f, jerr := stringMember(method, ims, "name")
				if jerr == nil && served(f) && own(u.v.ownPrompt, f) == ownName && !slices.Contains(hits, f) {
					hits = append(hits, f)
				}
			}
		}
	}
	slices.Sort(hits)
	switch len(hits) {
	case 0:
		return "", notServed("prompt", ownName)
	case 1:
		return hits[0], nil
	}
	return "", u.v.collision("OwnNames", "prompts", ownName, hits[0], hits[1])
}

// checkCompletion refuses a completion for a prompt or resource template
// the view leaves out, and a reference of a kind it cannot judge. It
// returns the params to send: in a view of own names, a prompt's name
// is its fleet name.
func (u *viewUpstream) checkCompletion(ctx context.Context, params any) (any, error) {
	const method = "completion/complete"
	raw, ms, err := paramsObject(method, params)
	if err != nil {
		return nil, err
	}
	ref, err := only(ms, "ref")
	if err != nil || ref == nil {
		return nil, badParams(method, "params need one ref object")
	}
	rms, _, err := scanObject(ref.val)
	if err != nil {
		return nil, badParams(method, "ref must be a JSON object")
	}
	typ, jerr := stringMember(method, rms, "type")
	if jerr != nil {
		return nil, jerr
	}
	switch typ {
	case "ref/prompt":
		name, jerr := stringMember(method, rms, "name")
		if jerr != nil {
			return nil, jerr
		}
		if u.v.ownNames {
			fleet, err := u.promptFleet(ctx, name)
			if err != nil {
				return nil, err
			}
			nm, _ := only(rms, "name")
			return json.RawMessage(splice(raw, []edit{{ref.start + nm.start, ref.start + nm.end, quoteJSON(fleet)}})), nil
		}
		if !u.v.servesServer(u.v.serverOf(name)) {
			return nil, notServed("prompt", name)
		}
	case "ref/resource":
		uri, jerr := stringMember(method, rms, "uri")
		if jerr != nil {
			return nil, jerr
		}
		if !u.v.servesServer(u.v.serverOfURI(uri)) {
			return nil, notServed("resource", uri)
		}
	default:
		return nil, badParams(method, "unknown ref type "+strconv.Quote(toolrank.Clip(typ, 64)))
	}
	return params, nil
}

// listFiltered passes a list request on and keeps, of the array member
// list of its result, the items whose member key names a server the
// view serves. Everything else, nextCursor included, is kept as sent.
func (u *viewUpstream) listFiltered(ctx context.Context, method string, params, result any, opts []client.CallOption, list, key string, lookup func(string) (string, bool)) error {
	var raw json.RawMessage
	if err := u.up.Call(ctx, method, params, &raw, opts...); err != nil {
		return err
	}
	ms, _, err := scanObject(raw)
	if err != nil {
		return fmt.Errorf("%s: the upstream's result is no JSON object: %w", method, err)
	}
	arr, err := only(ms, list)
	if err != nil {
		return fmt.Errorf("%s: the upstream's result: %w", method, err)
	}
	if arr == nil {
		return setResult(raw, result)
	}
	items := elements(arr.val)
	if items == nil {
		return fmt.Errorf("%s: the upstream's %s is no JSON array", method, list)
	}
	kept := make([]json.RawMessage, 0, len(items))
	owners := map[string]string{} // own name → fleet name, for prompts in a view of own names
	for _, it := range items {
		if it[0] != '{' {
			continue
		}
		ims, _ := members(it)
		name, jerr := stringMember(method, ims, key)
		if jerr != nil || !u.v.servesServer(lookup(name)) {
			continue
		}
		if list == "prompts" && u.v.ownNames {
			o := own(u.v.ownPrompt, name)
			if other, dup := owners[o]; dup {
				return u.v.collision("OwnNames", "prompts", o, other, name)
			}
			owners[o] = name
			if o != name {
				nm, _ := only(ims, key)
				it = splice(it, []edit{{nm.start, nm.end, quoteJSON(o)}})
			}
		}
		kept = append(kept, it)
	}
	return setResult(splice(raw, []edit{{arr.start, arr.end, joinArray(kept)}}), result)
}

// isMeta says whether name is one of the meta tools a view offers above
// its MaxTools.
func isMeta(name string) bool {
	return name == llm.SearchToolsName || name == llm.DescribeToolName || name == llm.CallToolName
}
