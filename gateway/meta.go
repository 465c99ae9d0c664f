package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/toolrank"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/mcp"
)

// Bounds on one listing of a view's tools: what the upstream may make the
// gateway hold.
const (
	maxListedTools = 65536
	maxListPages   = 4096
)

// viewTool is a tool of a view: its fleet name, its name in the view, and
// its definition as the view gives it.
type viewTool struct {
	fleet, name string
	raw         json.RawMessage
}

// toolSet is a view's tools at one listing, in the upstream's order.
type toolSet struct {
	tools   []viewTool
	byName  map[string]int // name in the view → index
	byFleet map[string]int // fleet name → index
	docs    []toolrank.Doc // for search_tools
}

// meta says whether the view offers the meta tools instead of set.
func (s *toolSet) meta(v *view) bool { return v.maxTools > 0 && len(s.tools) > v.maxTools }

// build makes the view's tool set of a listing: the tools the view
// selects, renamed and described, every other byte as sent. A tool that
// cannot be read without doubt (no object, a name member missing, not a
// string, or sent twice) is left out. A rename that meets the name of
// another tool of the view is an error: the listing fails, and says
// which tools.
func (v *view) build(raws []json.RawMessage) (*toolSet, error) {
	s := &toolSet{byName: map[string]int{}, byFleet: map[string]int{}}
	for _, raw := range raws {
		if i := skipSpace(raw, 0); raw[i] != '{' {
			continue
		}
		ms, closeAt := members(raw)
		nm, err := only(ms, "name")
		if err != nil || nm == nil {
			continue
		}
		fleet, ok := stringValue(nm.val)
		if !ok || fleet == "" {
			continue
		}
		if !v.sel.tool(v.facts(fleet, readHints(ms))) {
			continue
		}
		if _, dup := s.byFleet[fleet]; dup {
			continue // the upstream's own duplicate: the first stays
		}
		name := fleet
		if r, ok := v.rename[fleet]; ok {
			name = r
		} else if v.ownNames {
			name = own(v.ownTool, fleet)
		}
		if j, taken := s.byName[name]; taken {
			other := s.tools[j].fleet
			field := "Rename"
			if v.ownNames && v.rename[other] != name && v.rename[fleet] != name {
				field = "OwnNames"
			}
			return nil, v.collision(field, "tools", name, other, fleet)
		}
		var edits []edit
		if name != fleet {
			edits = append(edits, edit{nm.start, nm.end, quoteJSON(name)})
		}
		desc := stringOf(ms, "description")
		if d, ok := v.describe[fleet]; ok {
			dm, err := only(ms, "description")
			switch {
			case err != nil:
				continue
			case dm != nil:
				edits = append(edits, edit{dm.start, dm.end, quoteJSON(d)})
			default:
				edits = append(edits, edit{closeAt, closeAt, append([]byte(`,"description":`), quoteJSON(d)...)})
			}
			desc = d
		}
		out := raw
		if len(edits) > 0 {
			out = splice(raw, edits)
		}
		s.byName[name], s.byFleet[fleet] = len(s.tools), len(s.tools)
		s.tools = append(s.tools, viewTool{fleet: fleet, name: name, raw: out})
		s.docs = append(s.docs, toolrank.Doc{Key: name, Name: name, Title: stringOf(ms, "title"), Description: desc})
	}
	return s, nil
}

// collision is the error of a listing where two tools (or prompts, kind)
// of the view, of fleet names a and b, would both be called name.
func (v *view) collision(field, kind, name, a, b string) error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, (&ViewError{View: v.name, Field: field, Value: name,
		Reason: "the " + kind + " " + a + " and " + b + " would both have this name"}).Error()).WithOutcome(jsonrpc.OutcomeNotRun)
}

// own is the own name of fleet name by lookup; the fleet name itself
// when the lookup knows none.
func own(lookup func(string) (string, bool), fleet string) string {
	if lookup != nil {
		if o, ok := lookup(fleet); ok && o != "" {
			return o
		}
	}
	return fleet
}

// fleetOf is the fleet name of the tool the set calls name.
func (s *toolSet) fleetOf(name string) (string, bool) {
	i, ok := s.byName[name]
	if !ok {
		return "", false
	}
	return s.tools[i].fleet, true
}

// readHints reads a tool's annotations: a hint sent twice, or not as a
// boolean, counts as absent.
func readHints(tool []member) hints {
	var h hints
	am, err := only(tool, "annotations")
	if err != nil || am == nil {
		return h
	}
	if am.val[0] != '{' {
		return h
	}
	ms, _ := members(am.val)
	read := func(key string) *bool {
		m, err := only(ms, key)
		if err != nil || m == nil {
			return nil
		}
		var b bool
		switch string(m.val) {
		case "true":
			b = true
		case "false":
		default:
			return nil
		}
		return &b
	}
	return hints{readOnly: read("readOnlyHint"), destructive: read("destructiveHint"),
		idempotent: read("idempotentHint"), openWorld: read("openWorldHint")}
}

// tools returns the view's tools of the last listing, or lists them when
// the upstream's list changed since.
func (u *viewUpstream) tools(ctx context.Context) (*toolSet, error) {
	u.mu.Lock()
	set := u.set
	u.mu.Unlock()
	if set != nil {
		return set, nil
	}
	set, _, err := u.list(ctx, json.RawMessage(`{}`), nil)
	return set, err
}

// list lists every tool of the upstream (base: the first request's
// params) and makes the view's set of them, kept unless the upstream's
// list changed meanwhile. head is the first page's result.
func (u *viewUpstream) list(ctx context.Context, base json.RawMessage, opts []client.CallOption) (*toolSet, []member, error) {
	u.mu.Lock()
	gen := u.gen
	u.mu.Unlock()
	var raws []json.RawMessage
	var head []member
	params := base
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, nil, fmt.Errorf("tools/list: the upstream's listing goes on past %d pages", maxListPages)
		}
		var raw json.RawMessage
		if err := u.up.Call(ctx, "tools/list", params, &raw, opts...); err != nil {
			return nil, nil, err
		}
		ms, _, err := scanObject(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("tools/list: the upstream's result is no JSON object: %w", err)
		}
		if page == 0 {
			head = ms
		}
		tm, err := only(ms, "tools")
		var tools []json.RawMessage
		if err == nil && tm != nil {
			tools = elements(tm.val)
		}
		if tools == nil {
			return nil, nil, errors.New("tools/list: the upstream's result has no tools array")
		}
		if len(raws)+len(tools) > maxListedTools {
			return nil, nil, fmt.Errorf("tools/list: the upstream lists more than %d tools", maxListedTools)
		}
		raws = append(raws, tools...)
		next := stringOf(ms, "nextCursor")
		if next == "" {
			break
		}
		params = withMember(base, "cursor", quoteJSON(next))
	}
	set, err := u.v.build(raws)
	if err != nil {
		return nil, nil, err
	}
	u.mu.Lock()
	if u.gen == gen {
		u.set = set
	}
	u.mu.Unlock()
	return set, head, nil
}

// listTools answers tools/list: every tool of the view in one page, or
// the meta tools when they are more than MaxTools. The tools are listed
// again each time (the upstream keeps its own cache, and knows best when
// it is stale). The other members of the upstream's first page are kept.
func (u *viewUpstream) listTools(ctx context.Context, params, result any, opts []client.CallOption) error {
	const method = "tools/list"
	raw, ms, err := paramsObject(method, params)
	if err != nil {
		return err
	}
	if c, err := only(ms, "cursor"); err != nil || c != nil {
		return badParams(method, "this view lists every tool in one page: the cursor is none it gave")
	}
	set, head, err := u.list(ctx, raw, opts)
	if err != nil {
		return err
	}
	var arr json.RawMessage
	if set.meta(u.v) {
		arr = metaToolsJSON()
	} else {
		items := make([]json.RawMessage, len(set.tools))
		for i, t := range set.tools {
			items[i] = t.raw
		}
		arr = joinArray(items)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, m := range head {
		if string(m.key) == "nextCursor" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(m.rawKey)
		b.WriteByte(':')
		if string(m.key) == "tools" {
			b.Write(arr)
		} else {
			b.Write(m.val)
		}
	}
	b.WriteByte('}')
	return setResult(b.Bytes(), result)
}

// metaToolsJSON is the tools array of search_tools, describe_tool and
// call_tool, as llm.MetaTools defines them.
var metaToolsJSON = sync.OnceValue(func() json.RawMessage {
	b, err := json.Marshal(llm.MetaTools())
	if err != nil {
		panic(err) // a constant: cannot happen
	}
	return b
})

// resolve maps a name a client called to its fleet name: a new name to
// the tool renamed, a fleet name renamed away to none.
func (v *view) resolve(name string) (string, bool) {
	if f, ok := v.back[name]; ok {
		return f, true
	}
	if _, renamed := v.rename[name]; renamed {
		return "", false
	}
	return name, true
}

// callTool answers tools/call: the meta tools here, a tool of the view
// upstream under its fleet name, anything else refused as an unknown
// tool without reaching the upstream.
func (u *viewUpstream) callTool(ctx context.Context, params, result any, opts []client.CallOption) error {
	c, err := readCall(params)
	if err != nil {
		return err
	}
	if u.v.maxTools > 0 && isMeta(c.name) {
		set, err := u.tools(ctx)
		if err != nil {
			return err
		}
		if set.meta(u.v) {
			return u.answerMeta(ctx, set, c, result, opts)
		}
	}
	if u.v.ownNames {
		// Own names are known from a listing only.
		set, err := u.tools(ctx)
		if err != nil {
			return err
		}
		fleet, ok := set.fleetOf(c.name)
		if !ok {
			return notServed("tool", c.name)
		}
		return u.forward(ctx, c, fleet, nil, result, opts)
	}
	fleet, ok := u.v.resolve(c.name)
	if !ok {
		return notServed("tool", c.name)
	}
	if u.v.hinted {
		// Whether a hint matches is in the tool's annotations, as listed.
		set, err := u.tools(ctx)
		if err != nil {
			return err
		}
		if _, ok := set.byFleet[fleet]; !ok {
			return notServed("tool", c.name)
		}
	} else if !u.v.sel.tool(u.v.facts(fleet, hints{})) {
		return notServed("tool", c.name)
	}
	return u.forward(ctx, c, fleet, nil, result, opts)
}

// toolCall is a tools/call request as the view reads it.
type toolCall struct {
	name  string
	args  json.RawMessage     // the arguments, nil when absent
	typed *mcp.CallToolParams // the bridge's typed params, or nil
	raw   json.RawMessage     // the params as JSON, when not typed
	ms    []member            // raw's members
	room  [4]member           // ms's first room: a call's members fit
	call  mcp.CallToolParams  // the Conn's params, when typedOf makes them
}

func readCall(params any) (*toolCall, error) {
	const method = "tools/call"
	c := &toolCall{}
	if raw, ok := params.(json.RawMessage); ok && len(raw) > 0 && raw[0] == '{' {
		c.raw = raw // the bridge's params, most often: no copy
	}
	if p, ok := params.(*mcp.CallToolParams); ok && p != nil {
		c.typed, c.name = p, p.Name
		if p.Arguments != nil {
			b, err := json.Marshal(p.Arguments)
			if err != nil {
				return nil, badParams(method, "arguments do not encode")
			}
			c.args = b
		}
		return c, nil
	}
	raw := c.raw
	if raw == nil {
		var err error
		if raw, err = rawParams(params); err != nil {
			return nil, badParams(method, err.Error())
		}
	}
	var err error
	if c.ms, _, err = scanObjectInto(c.room[:0], raw); err != nil {
		return nil, badParams(method, "params must be a JSON object")
	}
	c.raw = raw
	var jerr *jsonrpc.Error
	if c.name, jerr = stringMember(method, c.ms, "name"); jerr != nil {
		return nil, jerr
	}
	a, err := only(c.ms, "arguments")
	if err != nil {
		return nil, badParams(method, err.Error())
	}
	if a != nil {
		c.args = a.val
	}
	return c, nil
}

// forward sends the call upstream under its fleet name, with args
// instead of its own arguments when not nil; everything else of the
// params (its _meta, a task) as the client sent it.
func (u *viewUpstream) forward(ctx context.Context, c *toolCall, fleet string, args json.RawMessage, result any, opts []client.CallOption) error {
	if c.typed != nil {
		p := *c.typed
		p.Name = fleet
		if args != nil {
			p.Arguments = args
		}
		return u.up.Call(ctx, "tools/call", &p, result, opts...)
	}
	nm, _ := only(c.ms, "name")
	if args == nil && isString(nm.val, fleet) {
		// The params go as sent: read once, handed down when the
		// upstream takes a call read already.
		if rc, ok := u.up.(readCaller); ok {
			return rc.callRead(ctx, c, result, opts)
		}
		return u.up.Call(ctx, "tools/call", c.raw, result, opts...)
	}
	edits := []edit{{nm.start, nm.end, quoteJSON(fleet)}}
	var params json.RawMessage
	if args != nil {
		if am, _ := only(c.ms, "arguments"); am != nil {
			edits = append(edits, edit{am.start, am.end, args})
			params = splice(c.raw, edits)
		} else {
			params = withMember(splice(c.raw, edits), "arguments", args)
		}
	} else {
		params = splice(c.raw, edits)
	}
	return u.up.Call(ctx, "tools/call", params, result, opts...)
}

// answerMeta answers search_tools, describe_tool and call_tool over the
// view's tools, as the library's Toolbox does over a context budget.
func (u *viewUpstream) answerMeta(ctx context.Context, set *toolSet, c *toolCall, result any, opts []client.CallOption) error {
	args := c.args
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	switch c.name {
	case llm.SearchToolsName:
		text, ok := toolrank.Search(set.docs, args, nil)
		return setResult(toolResult(text, !ok), result)
	case llm.DescribeToolName:
		var a struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(args, &a); err != nil || a.Name == "" {
			return setResult(toolResult(`describe_tool takes {"name": string}`, true), result)
		}
		i, ok := set.byName[a.Name]
		if !ok {
			return setResult(toolResult("no tool is named "+strconv.Quote(toolrank.Clip(a.Name, 100))+"; find the right one with "+llm.SearchToolsName, true), result)
		}
		return setResult(toolResult(string(set.tools[i].raw)+"\nCall it with "+llm.CallToolName+".", false), result)
	}
	// call_tool: the tool's own answer, or the refusal of an unknown tool.
	var a struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.Name == "" || (len(a.Arguments) > 0 && !isObject(a.Arguments)) {
		return setResult(toolResult(`call_tool takes {"name": string, "arguments": object}`, true), result)
	}
	if len(a.Arguments) == 0 {
		a.Arguments = json.RawMessage(`{}`)
	}
	fleet, ok := set.fleetOf(a.Name)
	if !ok {
		return notServed("tool", a.Name)
	}
	return u.forward(ctx, c, fleet, a.Arguments, result, opts)
}

// toolResult is a tools/call result of one text block.
func toolResult(text string, isError bool) json.RawMessage {
	b, _ := json.Marshal(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}, IsError: isError})
	return b
}
