package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/jsondec"
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
		}
		if j, taken := s.byName[name]; taken {
			other := s.tools[j].fleet
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, (&ViewError{View: v.name, Field: "Rename", Value: name,
				Reason: "the tools " + other + " and " + fleet + " would both have this name"}).Error()).WithOutcome(jsonrpc.OutcomeNotRun)
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
	raw, err := rawParams(params)
	if err != nil {
		return badParams(method, err.Error())
	}
	ms, _, err := scanObject(raw)
	if err != nil {
		return badParams(method, "params must be a JSON object")
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
	args  json.RawMessage     // the arguments, {} when absent
	typed *mcp.CallToolParams // the bridge's typed params, or nil
	raw   json.RawMessage     // the params as JSON, when not typed
	ms    []member            // raw's members
}

func readCall(params any) (*toolCall, error) {
	const method = "tools/call"
	c := &toolCall{args: json.RawMessage(`{}`)}
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
	raw, err := rawParams(params)
	if err != nil {
		return nil, badParams(method, err.Error())
	}
	if c.ms, _, err = scanObject(raw); err != nil {
		return nil, badParams(method, "params must be a JSON object")
	}
	c.raw = raw
	var jerr *jsonrpc.Error
	if c.name, jerr = stringMember(method, c.ms, "name"); jerr != nil {
		return nil, jerr
	}
	if a, err := only(c.ms, "arguments"); err == nil && a != nil {
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
	switch c.name {
	case llm.SearchToolsName:
		text, ok := toolrank.Search(set.docs, c.args, nil)
		return setResult(toolResult(text, !ok), result)
	case llm.DescribeToolName:
		var a struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(c.args, &a); err != nil || a.Name == "" {
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
	if err := json.Unmarshal(c.args, &a); err != nil || a.Name == "" || (len(a.Arguments) > 0 && !isObject(a.Arguments)) {
		return setResult(toolResult(`call_tool takes {"name": string, "arguments": object}`, true), result)
	}
	if len(a.Arguments) == 0 {
		a.Arguments = json.RawMessage(`{}`)
	}
	fleet, ok := u.v.resolve(a.Name)
	if !ok {
		return notServed("tool", a.Name)
	}
	if _, ok := set.byFleet[fleet]; !ok {
		return notServed("tool", a.Name)
	}
	return u.forward(ctx, c, fleet, a.Arguments, result, opts)
}

// toolResult is a tools/call result of one text block.
func toolResult(text string, isError bool) json.RawMessage {
	b, _ := json.Marshal(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}, IsError: isError})
	return b
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// A member is one member of a JSON object, as sent.
type member struct {
	key        []byte // decoded
	rawKey     []byte // as sent, quotes included
	val        []byte // as sent
	start, end int    // val's offsets in the object
}

var errNotObject = errors.New("not a JSON object")

// scanObject reads the members of the JSON object obj, in order, and the
// offset of its closing brace. Anything but one valid object is an error.
func scanObject(obj []byte) ([]member, int, error) {
	if !jsondec.Valid(obj) {
		return nil, 0, errors.New("not valid JSON")
	}
	i := skipSpace(obj, 0)
	if obj[i] != '{' {
		return nil, 0, errNotObject
	}
	ms, closeAt := members(obj)
	return ms, closeAt, nil
}

// members reads the members of obj, a valid JSON object (a part of one
// that scanObject or jsondec.Valid passed), without checking it again.
func members(obj []byte) ([]member, int) {
	ms := make([]member, 0, 8)
	i := skipSpace(obj, 0) + 1 // past {
	for {
		i = skipSpace(obj, i)
		switch obj[i] {
		case '}':
			return ms, i
		case ',':
			i = skipSpace(obj, i+1)
		}
		ks := i
		ke := skipString(obj, i)
		i = skipSpace(obj, ke) + 1 // past :
		vs := skipSpace(obj, i)
		ve := skipValue(obj, vs)
		ms = append(ms, member{key: keyAt(obj[ks:ke]), rawKey: obj[ks:ke], val: obj[vs:ve], start: vs, end: ve})
		i = ve
	}
}

// elements returns the elements of arr, a valid JSON array, as slices of
// it; nil when arr is no array.
func elements(arr []byte) []json.RawMessage {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil
	}
	out := []json.RawMessage{}
	for i++; ; {
		i = skipSpace(arr, i)
		switch arr[i] {
		case ']':
			return out
		case ',':
			i = skipSpace(arr, i+1)
		}
		e := skipValue(arr, i)
		out = append(out, arr[i:e])
		i = e
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the end of the valid JSON value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// keyAt decodes a valid JSON string literal, sharing its bytes when it
// holds no escape.
func keyAt(lit []byte) []byte {
	if bytes.IndexByte(lit, '\\') < 0 {
		return lit[1 : len(lit)-1]
	}
	var s string
	_ = json.Unmarshal(lit, &s)
	return []byte(s)
}

// stringValue decodes val, a valid JSON value, when it is a string.
func stringValue(val []byte) (string, bool) {
	if len(val) == 0 || val[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(val, '\\') < 0 && utf8.Valid(val) {
		return string(val[1 : len(val)-1]), true
	}
	var s string
	return s, json.Unmarshal(val, &s) == nil
}

// only returns the member key of ms, nil when there is none. A key sent
// twice, or in another case too (a decoder that ignores case could read
// either), is an error: the view never guesses which one counts.
func only(ms []member, key string) (*member, error) {
	var found *member
	for i := range ms {
		if !strings.EqualFold(string(ms[i].key), key) {
			continue
		}
		if found != nil || string(ms[i].key) != key {
			return nil, fmt.Errorf("the member %q is ambiguous", key)
		}
		found = &ms[i]
	}
	return found, nil
}

// stringMember is the string member key of a request's params.
func stringMember(method string, ms []member, key string) (string, *jsonrpc.Error) {
	m, err := only(ms, key)
	if err != nil {
		return "", badParams(method, err.Error())
	}
	if m == nil {
		return "", badParams(method, key+" must be a string")
	}
	s, ok := stringValue(m.val)
	if !ok {
		return "", badParams(method, key+" must be a string")
	}
	return s, nil
}

// stringOf is the string member key of ms, "" when absent, ambiguous or
// not a string.
func stringOf(ms []member, key string) string {
	m, err := only(ms, key)
	if err != nil || m == nil {
		return ""
	}
	s, _ := stringValue(m.val)
	return s
}

// An edit replaces obj[start:end] with val.
type edit struct {
	start, end int
	val        []byte
}

// splice applies edits (which do not overlap) to a copy of obj.
func splice(obj []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	out := make([]byte, 0, len(obj)+64)
	at := 0
	for _, e := range edits {
		out = append(append(out, obj[at:e.start]...), e.val...)
		at = e.end
	}
	return append(out, obj[at:]...)
}

// withMember returns the JSON object obj with the member key set to val
// (obj has no such member yet).
func withMember(obj json.RawMessage, key string, val []byte) json.RawMessage {
	ms, closeAt, err := scanObject(obj)
	if err != nil {
		return obj
	}
	add := append(quoteJSON(key), ':')
	if len(ms) > 0 {
		add = append([]byte{','}, add...)
	}
	return splice(obj, []edit{{closeAt, closeAt, append(add, val...)}})
}

// joinArray is the JSON array of items.
func joinArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// quoteJSON is s as a JSON string, its HTML characters kept as they are.
func quoteJSON(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}
