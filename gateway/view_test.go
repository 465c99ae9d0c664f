package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// fleetTools are the fake upstream's tools, under fleet names, each as a
// server might send it: members in odd orders, spaces, members mcp.Tool
// lacks.
var fleetTools = []string{
	`{"name":"files__read","description":"Reads a file from disk.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`,
	`{"inputSchema":{"type":"object"} ,"name":"files__write","annotations":{"readOnlyHint":false,"destructiveHint":true},"description":"Writes a file."}`,
	`{"name":"files__delete","description":"Deletes a file.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`,
	`{"name":"web__fetch","title":"Fetch","description":"Fetches a URL from the web.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":true},"x-extra":[1, 2 ,3]}`,
	`{"name":"web__post","description":"Posts a form to a URL.","inputSchema":{"type":"object"}}`,
	`{"name":"mem__store","description":"Stores a fact in memory.","inputSchema":{"type":"object"},"annotations":{"idempotentHint":true,"destructiveHint":false,"openWorldHint":false}}`,
	`{"name":"stray","description":"A tool of no known server.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
}

var fleetNames = []string{"files__read", "files__write", "files__delete", "web__fetch", "web__post", "mem__store", "stray"}

// The fake upstream's prompts, resources and templates, and their servers.
var (
	fleetPrompts   = []string{"files__summarize", "web__brief", "stray_prompt"}
	fleetResources = []string{"file:///a", "https://example.com/x", "mem://k", "other://z"}
	fleetTemplates = []string{"file:///{path}", "mem://{key}"}
)

// serverOf is the test fleet's naming: the server of a fleet name. The
// server "memory" has the prefix "mem": a view must ask, not guess.
func serverOf(name string) (string, bool) {
	switch {
	case strings.HasPrefix(name, "files__"):
		return "files", true
	case strings.HasPrefix(name, "web__"):
		return "web", true
	case strings.HasPrefix(name, "mem__"):
		return "memory", true
	}
	return "", false
}

func serverOfURI(uri string) (string, bool) {
	switch {
	case strings.HasPrefix(uri, "file://"):
		return "files", true
	case strings.HasPrefix(uri, "https://"):
		return "web", true
	case strings.HasPrefix(uri, "mem://"):
		return "memory", true
	}
	return "", false
}

// fake is an in-memory upstream of the test fleet: it lists its tools
// (pageSize a page, when set), answers every call, and records what
// reached it.
type fake struct {
	mu       sync.Mutex
	tools    []string
	pageSize int
	seen     []string          // "METHOD NAME" of every request but tools/list
	params   []json.RawMessage // the params of every tools/call, as received
	typed    []*mcp.CallToolParams
	lists    int // tools/list requests
	closed   bool
	prompts  []string // the prompts listed; nil: fleetPrompts
}

func newFake() *fake { return &fake{tools: slices.Clone(fleetTools)} }

func (f *fake) dial(ctx context.Context, d bridge.Downstream) (bridge.Upstream, error) { return f, nil }

func (f *fake) setTools(tools []string) {
	f.mu.Lock()
	f.tools = tools
	f.mu.Unlock()
}

func (f *fake) saw() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

func (f *fake) listCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists
}

func (f *fake) Info() client.Info {
	return client.Info{Era: mcp.EraInitialize, Capabilities: mcp.ServerCapabilities{Tools: &mcp.ListChanged{}, Prompts: &mcp.ListChanged{}, Resources: &mcp.ResourcesCap{}}}
}
func (f *fake) Listening(context.Context) error                     { return nil }
func (f *fake) SetLogLevel(context.Context, mcp.LoggingLevel) error { return nil }
func (f *fake) NotifyRootsChanged(context.Context) error            { return nil }
func (f *fake) Close() error                                        { f.closed = true; return nil }
func (f *fake) Tools(context.Context) iter.Seq2[mcp.Tool, error] {
	return func(func(mcp.Tool, error) bool) { panic("the view lists through Call") }
}

func (f *fake) Subscribe(_ context.Context, uri string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, "resources/subscribe "+uri)
	return nil
}

func (f *fake) Unsubscribe(_ context.Context, uri string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, "resources/unsubscribe "+uri)
	return nil
}

func (f *fake) Call(_ context.Context, method string, params, result any, _ ...client.CallOption) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	raw, _ := params.(json.RawMessage)
	var p struct {
		Name, URI, Cursor string
		Ref               struct{ Name, URI string }
	}
	if tp, ok := params.(*mcp.CallToolParams); ok {
		f.typed = append(f.typed, tp)
		p.Name = tp.Name
		raw, _ = json.Marshal(tp)
	} else {
		_ = json.Unmarshal(raw, &p)
	}
	var out string
	switch method {
	case "tools/list":
		f.lists++
		start, _ := strconv.Atoi(p.Cursor)
		end := len(f.tools)
		next := ""
		if f.pageSize > 0 && start+f.pageSize < end {
			end = start + f.pageSize
			next = `,"nextCursor":"` + strconv.Itoa(end) + `"`
		}
		out = `{"tools":[` + strings.Join(f.tools[start:end], ",") + `]` + next + `,"_meta":{"k":"v"}}`
	case "tools/call":
		f.seen = append(f.seen, method+" "+p.Name)
		f.params = append(f.params, raw)
		out = `{"content":[{"type":"text","text":"ran ` + p.Name + `"}]}`
	case "prompts/list":
		ps := f.prompts
		if ps == nil {
			ps = fleetPrompts
		}
		out = `{"prompts":` + items("name", ps) + `,"nextCursor":"p2"}`
	case "resources/list":
		out = `{"resources":` + items("uri", fleetResources) + `}`
	case "resources/templates/list":
		out = `{"resourceTemplates":` + items("uriTemplate", fleetTemplates) + `}`
	case "prompts/get":
		f.seen = append(f.seen, method+" "+p.Name)
		out = `{"messages":[]}`
	case "resources/read":
		f.seen = append(f.seen, method+" "+p.URI)
		out = `{"contents":[]}`
	case "completion/complete":
		f.seen = append(f.seen, method+" "+p.Ref.Name+p.Ref.URI)
		out = `{"completion":{"values":[]}}`
	default:
		f.seen = append(f.seen, method)
		out = `{}`
	}
	*result.(*json.RawMessage) = json.RawMessage(out)
	return nil
}

func items(key string, names []string) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, `{"`+key+`":`+strconv.Quote(n)+`,"x":1}`)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// through returns an upstream of f as the view v serves it.
func through(t *testing.T, v View, f *fake) bridge.Upstream {
	t.Helper()
	vw, err := newView(v, serverOf, serverOfURI)
	if err != nil {
		t.Fatal(err)
	}
	up, err := vw.wrap(f.dial)(context.Background(), bridge.Downstream{})
	if err != nil {
		t.Fatal(err)
	}
	return up
}

func call(up bridge.Upstream, method, params string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := up.Call(context.Background(), method, json.RawMessage(params), &raw)
	return raw, err
}

// listed returns the tools of a tools/list answer, by name.
func listed(t *testing.T, up bridge.Upstream) (names []string, tools map[string]json.RawMessage) {
	t.Helper()
	raw, err := call(up, "tools/list", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("tools/list: %v: %s", err, raw)
	}
	tools = map[string]json.RawMessage{}
	for _, tr := range res.Tools {
		var tl struct{ Name string }
		_ = json.Unmarshal(tr, &tl)
		names = append(names, tl.Name)
		tools[tl.Name] = tr
	}
	return names, tools
}

// wantRefused checks that err refuses name as an unknown kind, not run.
func wantRefused(t *testing.T, err error, kind, name string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Outcome() != jsonrpc.OutcomeNotRun ||
		rpc.Message != "unknown "+kind+": "+strconv.Quote(name) {
		t.Errorf("%s %q: want the refusal of an unknown %s, got %v", kind, name, kind, err)
	}
}

// viewCases are views over the test fleet and what each serves: its
// tools, and the servers whose prompts and resources it shows ("?": those
// of no known server).
var viewCases = []struct {
	name        string
	allow, deny []string
	tools       []string
	servers     []string
}{
	{"whole", nil, nil, fleetNames, []string{"files", "web", "memory", "?"}},
	{"name glob", []string{"files__*"}, nil, []string{"files__read", "files__write", "files__delete"}, nil},
	{"server", []string{"server:files"}, nil, []string{"files__read", "files__write", "files__delete"}, []string{"files"}},
	{"server asked, not guessed", []string{"server:mem"}, nil, nil, nil},
	{"server glob", []string{"server:mem*"}, nil, []string{"mem__store"}, []string{"memory"}},
	{"deny destructive", nil, []string{"hint:destructive"}, []string{"files__read", "web__fetch", "mem__store", "stray"}, []string{"files", "web", "memory", "?"}},
	{"allow readOnly", []string{"hint:readOnly"}, nil, []string{"files__read", "web__fetch", "stray"}, nil},
	{"allow idempotent", []string{"hint:idempotent"}, nil, []string{"mem__store"}, nil},
	{"deny openWorld", nil, []string{"hint:openWorld"}, []string{"mem__store"}, []string{"files", "web", "memory", "?"}},
	{"every known server", []string{"server:*"}, nil, []string{"files__read", "files__write", "files__delete", "web__fetch", "web__post", "mem__store"}, []string{"files", "web", "memory"}},
	{"deny a server", nil, []string{"server:web"}, []string{"files__read", "files__write", "files__delete", "mem__store"}, []string{"files", "memory"}},
	{"deny wins", []string{"files__*", "web__fetch"}, []string{"files__delete"}, []string{"files__read", "files__write", "web__fetch"}, nil},
	{"deny everything", []string{"*"}, []string{"*"}, nil, nil},
	{"one character", []string{"w?b__*"}, nil, []string{"web__fetch", "web__post"}, nil},
	{"server less hint", []string{"server:files", "server:web"}, []string{"hint:destructive"}, []string{"files__read", "web__fetch"}, []string{"files", "web"}},
}

// TestViewServesOnlyItsTools lists and calls every tool of the fleet
// through every view of the table: the listing is exactly the view's,
// and a tool outside it is refused as unknown, never reaching the
// upstream; a served one reaches it under its own name.
func TestViewServesOnlyItsTools(t *testing.T) {
	for _, c := range viewCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			up := through(t, View{Allow: c.allow, Deny: c.deny}, f)
			names, _ := listed(t, up)
			if !slices.Equal(names, c.tools) && !(len(names) == 0 && len(c.tools) == 0) {
				t.Errorf("listed %v, want %v", names, c.tools)
			}
			for _, n := range fleetNames {
				before := len(f.saw())
				raw, err := call(up, "tools/call", `{"name":`+strconv.Quote(n)+`,"arguments":{}}`)
				if slices.Contains(c.tools, n) {
					if err != nil || !strings.Contains(string(raw), "ran "+n) {
						t.Errorf("call %s: %s %v", n, raw, err)
					}
					continue
				}
				wantRefused(t, err, "tool", n)
				if len(f.saw()) != before {
					t.Errorf("call %s reached the upstream: %v", n, f.saw())
				}
			}
		})
	}
}

// TestViewPromptsAndResources checks that prompts, resources and
// templates follow their server's patterns, in lists and in requests.
func TestViewPromptsAndResources(t *testing.T) {
	serverName := func(s string, ok bool) string {
		if !ok {
			return "?"
		}
		return s
	}
	for _, c := range viewCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			up := through(t, View{Allow: c.allow, Deny: c.deny}, f)
			check := func(method, list, key string, all []string, lookup func(string) (string, bool), kind, reqMethod, reqParams string) {
				raw, err := call(up, method, `{}`)
				if err != nil {
					t.Fatalf("%s: %v", method, err)
				}
				var res map[string]json.RawMessage
				_ = json.Unmarshal(raw, &res)
				var got []map[string]any
				_ = json.Unmarshal(res[list], &got)
				var want, have []string
				for _, n := range all {
					if slices.Contains(c.servers, serverName(lookup(n))) {
						want = append(want, n)
					}
				}
				for _, g := range got {
					have = append(have, g[key].(string))
				}
				if !slices.Equal(want, have) {
					t.Errorf("%s: %v, want %v", method, have, want)
				}
				if method == "prompts/list" && string(res["nextCursor"]) != `"p2"` {
					t.Errorf("prompts/list: the cursor is the upstream's: %s", raw)
				}
				for _, n := range all {
					before := len(f.saw())
					_, err := call(up, reqMethod, strings.ReplaceAll(reqParams, "NAME", strconv.Quote(n)))
					if slices.Contains(want, n) {
						if err != nil || len(f.saw()) != before+1 {
							t.Errorf("%s %s: %v", reqMethod, n, err)
						}
						continue
					}
					wantRefused(t, err, kind, n)
					if len(f.saw()) != before {
						t.Errorf("%s %s reached the upstream", reqMethod, n)
					}
				}
			}
			check("prompts/list", "prompts", "name", fleetPrompts, serverOf, "prompt", "prompts/get", `{"name":NAME}`)
			check("prompts/list", "prompts", "name", fleetPrompts, serverOf, "prompt", "completion/complete", `{"ref":{"type":"ref/prompt","name":NAME},"argument":{"name":"a","value":""}}`)
			check("resources/list", "resources", "uri", fleetResources, serverOfURI, "resource", "resources/read", `{"uri":NAME}`)
			check("resources/templates/list", "resourceTemplates", "uriTemplate", fleetTemplates, serverOfURI, "resource", "completion/complete", `{"ref":{"type":"ref/resource","uri":NAME},"argument":{"name":"a","value":""}}`)
			for _, uri := range fleetResources {
				err := up.Subscribe(context.Background(), uri)
				if slices.Contains(c.servers, serverName(serverOfURI(uri))) {
					if err != nil {
						t.Errorf("subscribe %s: %v", uri, err)
					}
				} else {
					wantRefused(t, err, "resource", uri)
				}
			}
		})
	}
}

// TestNewViewRefuses checks that a view that cannot be served is refused
// when it is made, saying which field and why.
func TestNewViewRefuses(t *testing.T) {
	cases := []struct {
		v     View
		field string
		why   string
	}{
		{View{Name: "a/b"}, "Name", "1 to 64"},
		{View{Name: strings.Repeat("a", 65)}, "Name", "1 to 64"},
		{View{Allow: []string{"files__["}}, "Allow", "malformed glob"},
		{View{Deny: []string{""}}, "Deny", "empty"},
		{View{Deny: []string{"server:"}}, "Deny", "empty"},
		{View{Deny: []string{"server:[a"}}, "Deny", "malformed glob"},
		{View{Allow: []string{"hint:readonly"}}, "Allow", "readOnly, destructive, idempotent, openWorld"},
		{View{Allow: []string{"hint:"}}, "Allow", "no such hint"},
		{View{Rename: map[string]string{"files__read": "read file"}}, "Rename", "new name"},
		{View{Rename: map[string]string{"files__read": strings.Repeat("r", 65)}}, "Rename", "new name"},
		{View{Rename: map[string]string{"files.read": "read"}}, "Rename", "not a fleet name"},
		{View{Rename: map[string]string{"files__read": "read", "web__fetch": "read"}}, "Rename", "both files__read and web__fetch"},
		{View{MaxTools: 2, Rename: map[string]string{"files__read": "call_tool"}}, "Rename", "meta tool"},
		{View{Describe: map[string]string{"": "x"}}, "Describe", "not a fleet name"},
		{View{MaxTools: -1}, "MaxTools", "0 (none) or more"},
	}
	for _, c := range cases {
		_, err := newView(c.v, serverOf, serverOfURI)
		var ve *ViewError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%+v: got %v, want a %s error saying %q", c.v, err, c.field, c.why)
		}
	}
	if _, err := newView(View{Name: "team-a_1", Allow: []string{"server:x", "hint:openWorld", "a*"}, Rename: map[string]string{"a": "b", "b": "a", "c": "c"}, MaxTools: 3}, serverOf, serverOfURI); err != nil {
		t.Errorf("a valid view: %v", err)
	}
	if _, err := newView(View{}, nil, serverOfURI); err == nil {
		t.Error("a view without its lookups")
	}
}

// TestViewRenamesAndDescribes checks a view's own names and descriptions:
// listed under them with every other byte as sent, called under them
// (the upstream gets the fleet name), the fleet name renamed away
// refused.
func TestViewRenamesAndDescribes(t *testing.T) {
	f := newFake()
	up := through(t, View{
		Allow:    []string{"server:files", "server:web"},
		Rename:   map[string]string{"files__write": "save", "web__fetch": "files__delete", "files__delete": "web__fetch"},
		Describe: map[string]string{"files__write": `Saves <text> "as is".`, "web__post": "Posts."},
	}, f)
	names, tools := listed(t, up)
	if want := []string{"files__read", "save", "web__fetch", "files__delete", "web__post"}; !slices.Equal(names, want) {
		t.Fatalf("listed %v, want %v", names, want)
	}
	wantBytes := map[string]string{
		"files__read":   fleetTools[0],
		"save":          `{"inputSchema":{"type":"object"} ,"name":"save","annotations":{"readOnlyHint":false,"destructiveHint":true},"description":"Saves <text> \"as is\"."}`,
		"web__fetch":    `{"name":"web__fetch","description":"Deletes a file.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`,
		"files__delete": `{"name":"files__delete","title":"Fetch","description":"Fetches a URL from the web.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":true},"x-extra":[1, 2 ,3]}`,
		"web__post":     `{"name":"web__post","description":"Posts.","inputSchema":{"type":"object"}}`,
	}
	for n, want := range wantBytes {
		if string(tools[n]) != want {
			t.Errorf("%s:\n got %s\nwant %s", n, tools[n], want)
		}
	}
	for called, fleet := range map[string]string{"save": "files__write", "web__fetch": "files__delete", "files__delete": "web__fetch", "files__read": "files__read"} {
		raw, err := call(up, "tools/call", `{"_meta":{"progressToken":7},"name":`+strconv.Quote(called)+`,"arguments":{"a":1}}`)
		if err != nil || !strings.Contains(string(raw), "ran "+fleet) {
			t.Errorf("call %s: %s %v, want %s run", called, raw, err, fleet)
		}
		f.mu.Lock()
		sent := string(f.params[len(f.params)-1])
		f.mu.Unlock()
		if want := `{"_meta":{"progressToken":7},"name":` + strconv.Quote(fleet) + `,"arguments":{"a":1}}`; sent != want {
			t.Errorf("call %s sent %s, want %s", called, sent, want)
		}
	}
	_, err := call(up, "tools/call", `{"name":"files__write"}`)
	wantRefused(t, err, "tool", "files__write")
	// The bridge's typed params stay typed, renamed.
	var raw json.RawMessage
	if err := up.Call(context.Background(), "tools/call", &mcp.CallToolParams{Name: "save", Arguments: json.RawMessage(`{"b":2}`)}, &raw); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	got := f.typed[len(f.typed)-1]
	f.mu.Unlock()
	if got.Name != "files__write" || string(got.Arguments.(json.RawMessage)) != `{"b":2}` {
		t.Errorf("typed call sent %+v", got)
	}
	var listedTools []string
	for tl, err := range up.Tools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		listedTools = append(listedTools, tl.Name+":"+tl.Description)
	}
	if !slices.Contains(listedTools, `save:Saves <text> "as is".`) || slices.Contains(listedTools, "files__write:Writes a file.") || len(listedTools) != 5 {
		t.Errorf("Tools: %v", listedTools)
	}
}

// TestViewRenameCollides checks a rename that meets the name of another
// tool of the view: the listing fails and says which tools; the same
// rename is fine when the other tool is outside the view.
func TestViewRenameCollides(t *testing.T) {
	up := through(t, View{Rename: map[string]string{"files__read": "web__fetch"}}, newFake())
	_, err := call(up, "tools/list", `{}`)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "files__read") || !strings.Contains(rpc.Message, "web__fetch") || rpc.Outcome() != jsonrpc.OutcomeNotRun {
		t.Errorf("listing with a collision: %v", err)
	}
	for range up.Tools(context.Background()) {
		break
	}
	up = through(t, View{Deny: []string{"server:web"}, Rename: map[string]string{"files__read": "web__fetch"}}, newFake())
	if names, _ := listed(t, up); !slices.Contains(names, "web__fetch") || slices.Contains(names, "files__read") {
		t.Errorf("listed %v", names)
	}
	if raw, err := call(up, "tools/call", `{"name":"web__fetch"}`); err != nil || !strings.Contains(string(raw), "ran files__read") {
		t.Errorf("web__fetch in this view is files__read: %s %v", raw, err)
	}
}

// TestViewAmbiguousParams checks that a request naming its tool, prompt
// or resource twice (or in another case too, which a decoder that ignores
// case may read instead) is refused, never judged by one name and run by
// the other.
func TestViewAmbiguousParams(t *testing.T) {
	f := newFake()
	up := through(t, View{Allow: []string{"server:files"}, Deny: []string{"files__delete"}}, f)
	for _, c := range []struct{ method, params string }{
		{"tools/call", `{"name":"files__read","Name":"files__delete"}`},
		{"tools/call", `{"name":"files__read","name":"files__delete"}`},
		{"tools/call", `{"NAME":"files__read"}`},
		{"tools/call", `{"name":1}`},
		{"tools/call", `[]`},
		{"tools/call", `{"name":"files__read"} {}`},
		{"resources/read", `{"uri":"file:///a","URI":"https://example.com/x"}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"files__summarize","Name":"web__brief"}}`},
		{"completion/complete", `{"ref":{"type":"ref/tool","name":"files__read"}}`},
		{"completion/complete", `{}`},
		{"tools/list", `{"cursor":"1"}`},
	} {
		_, err := call(up, c.method, c.params)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Outcome() != jsonrpc.OutcomeNotRun {
			t.Errorf("%s %s: %v", c.method, c.params, err)
		}
	}
	if s := f.saw(); len(s) != 0 {
		t.Errorf("reached the upstream: %v", s)
	}
}

// TestViewTools checks what a tool that cannot be read without doubt
// becomes: left out of the view's listing.
func TestViewLeavesOutDoubtfulTools(t *testing.T) {
	f := newFake()
	f.setTools([]string{
		`{"name":"files__read","Name":"files__delete"}`,
		`{"name":"files__a","annotations":{"readOnlyHint":true,"ReadOnlyHint":false}}`,
		`{"name":1}`,
		`[]`,
		`{"name":"files__b","annotations":{"readOnlyHint":"yes"}}`,
		`{"name":"files__c","annotations":{"readOnlyHint":true}}`,
		`{"name":"files__c","annotations":{"readOnlyHint":true}}`,
	})
	up := through(t, View{Allow: []string{"hint:readOnly"}}, f)
	if names, _ := listed(t, up); !slices.Equal(names, []string{"files__c"}) {
		t.Errorf("listed %v", names)
	}
}

// TestViewPaginatedUpstream checks that a view lists every page of its
// upstream, and gives every tool in one page.
func TestViewPaginatedUpstream(t *testing.T) {
	f := newFake()
	f.pageSize = 2
	up := through(t, View{Deny: []string{"stray"}}, f)
	raw, err := call(up, "tools/list", `{"_meta":{"progressToken":1}}`)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]json.RawMessage
	_ = json.Unmarshal(raw, &res)
	if _, ok := res["nextCursor"]; ok || string(res["_meta"]) != `{"k":"v"}` {
		t.Errorf("result %s", raw)
	}
	if names, _ := listed(t, up); len(names) != 6 {
		t.Errorf("listed %v", names)
	}
	if f.listCount() != 8 {
		t.Errorf("%d tools/list requests, want 4 pages twice", f.listCount())
	}
}

// TestWholeViewIsTheUpstream checks that the zero View adds nothing.
func TestWholeViewIsTheUpstream(t *testing.T) {
	f := newFake()
	if up := through(t, View{}, f); up != bridge.Upstream(f) {
		t.Errorf("the whole fleet's view wraps its upstream: %T", up)
	}
}

// tsServer is the fleet naming of the end-to-end tests: the test server's
// tools, prompts and resources, split between two servers.
func tsServer(name string) (string, bool) {
	switch name {
	case "echo", "add", "big", "content_types", "greet":
		return "alpha", true
	}
	if strings.HasPrefix(name, "test://static/") {
		return "alpha", true
	}
	return "beta", true
}

// served is a view in front of a test server, behind a real bridge on
// loopback HTTP: the test server, and a client of each era dialled to it.
type served struct {
	srv  *testservers.Server
	conn map[string]*client.Conn // "stateless", "session"
	// changed receives the session client's tools/list_changed.
	changed chan struct{}
}

func serve(t *testing.T, v View) *served {
	t.Helper()
	ctx := context.Background()
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	t.Cleanup(srv.Close)
	vw, err := newView(v, tsServer, tsServer)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(ctx, vw.wrap(bridge.DialTarget(client.URL(srv.URL))), bridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(b.Handler())
	t.Cleanup(func() { hs.Close(); b.Close() })
	s := &served{srv: srv.Server(), conn: map[string]*client.Conn{}, changed: make(chan struct{}, 8)}
	for era, opts := range map[string][]client.Option{
		"stateless": {client.WithProtocolVersion(mcp.LatestStatelessVersion)},
		"session": {client.WithEra(negotiate.InitializeOnly), client.OnToolsChanged(func() {
			select {
			case s.changed <- struct{}{}:
			default:
			}
		})},
	} {
		c, err := client.Dial(ctx, client.URL(hs.URL+"/mcp"), opts...)
		if err != nil {
			t.Fatalf("%s client: %v", era, err)
		}
		t.Cleanup(func() { c.Close() })
		s.conn[era] = c
	}
	return s
}

// noLeaks checks, once the test and its cleanups are done, that no
// goroutine it started is left.
func noLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

func (s *served) upstreamCalls() int { return s.srv.Stats().Requests["tools/call"] }

// wantUnknown checks that err is an unknown tool's refusal, as a client
// of the gateway receives it.
func wantUnknown(t *testing.T, err error, what string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Outcome() != jsonrpc.OutcomeNotRun || !strings.HasPrefix(rpc.Message, "unknown ") {
		t.Errorf("%s: want the refusal of an unknown name, got %v", what, err)
	}
}

// TestViewEndToEnd serves views of a test server through a bridge to a
// stateless and a session client: each lists exactly the view's tools,
// prompts and resources, and every tool, prompt and resource outside
// it is refused, never reaching the server.
func TestViewEndToEnd(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	all := testservers.ToolNames()
	cases := []struct {
		name        string
		allow, deny []string
		tools       []string
		prompts     []string
	}{
		{"server", []string{"server:alpha"}, nil, []string{"echo", "add", "big", "content_types"}, []string{"greet"}},
		{"deny destructive", nil, []string{"hint:destructive"}, []string{"echo", "add", "once"}, []string{"greet", "simple"}},
		{"globs", []string{"e*", "a?d"}, []string{"add"}, []string{"echo", "elicit"}, nil},
		{"read only", []string{"hint:readOnly"}, nil, []string{"echo", "add"}, nil},
		{"deny a server", nil, []string{"server:beta"}, []string{"echo", "add", "big", "content_types"}, []string{"greet"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := serve(t, View{Allow: c.allow, Deny: c.deny})
			for era, conn := range s.conn {
				tools, err := conn.AllTools(ctx)
				if err != nil {
					t.Fatalf("%s: %v", era, err)
				}
				var names []string
				for _, tl := range tools {
					names = append(names, tl.Name)
				}
				slices.Sort(names)
				if want := slices.Sorted(slices.Values(c.tools)); !slices.Equal(names, want) {
					t.Errorf("%s listed %v, want %v", era, names, want)
				}
				prompts, err := conn.AllPrompts(ctx)
				if err != nil {
					t.Fatalf("%s: %v", era, err)
				}
				var pnames []string
				for _, p := range prompts {
					pnames = append(pnames, p.Name)
				}
				if !slices.Equal(pnames, c.prompts) {
					t.Errorf("%s prompts %v, want %v", era, pnames, c.prompts)
				}
				for _, n := range all {
					if slices.Contains(c.tools, n) {
						continue
					}
					before := s.upstreamCalls()
					_, err := conn.CallTool(ctx, n, map[string]any{})
					wantUnknown(t, err, era+" call "+n)
					if s.upstreamCalls() != before {
						t.Errorf("%s: the call of %s reached the server", era, n)
					}
				}
				if slices.Contains(c.tools, "echo") {
					res, err := conn.CallTool(ctx, "echo", map[string]any{"text": "hi"})
					if err != nil || res.Content[0].Text != "hi" {
						t.Errorf("%s echo: %v %v", era, res, err)
					}
				}
				for _, p := range []string{"greet", "simple"} {
					_, err := conn.GetPrompt(ctx, p, map[string]string{"name": "x"})
					if slices.Contains(c.prompts, p) {
						if err != nil {
							t.Errorf("%s prompt %s: %v", era, p, err)
						}
						continue
					}
					wantUnknown(t, err, era+" prompt "+p)
				}
				_, err = conn.ReadResource(ctx, testservers.StaticTextURI)
				if slices.Contains(c.prompts, "greet") != (err == nil) {
					t.Errorf("%s read %s: %v", era, testservers.StaticTextURI, err)
				}
			}
		})
	}
}

// TestViewEndToEndRenamesAndMeta checks a view's names, descriptions and
// meta tools as a client sees them through the bridge.
func TestViewEndToEndRenamesAndMeta(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	v := View{Allow: []string{"server:alpha", "slow"}, Rename: map[string]string{"echo": "say"}, Describe: map[string]string{"add": "Sums two numbers."}}
	s := serve(t, v)
	for era, conn := range s.conn {
		tools, err := conn.AllTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]mcp.Tool{}
		for _, tl := range tools {
			byName[tl.Name] = tl
		}
		if _, ok := byName["echo"]; ok || byName["say"].InputSchema == nil || byName["add"].Description != "Sums two numbers." {
			t.Errorf("%s: %v", era, tools)
		}
		if res, err := conn.CallTool(ctx, "say", map[string]any{"text": "renamed"}); err != nil || res.Content[0].Text != "renamed" {
			t.Errorf("%s say: %v %v", era, res, err)
		}
		_, err = conn.CallTool(ctx, "echo", map[string]any{"text": "x"})
		wantUnknown(t, err, era+" echo renamed away")
	}

	v.MaxTools = 3
	v.Deny = []string{"slow"}
	s = serve(t, v)
	for era, conn := range s.conn {
		tools, err := conn.AllTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != 3 || tools[0].Name != llm.SearchToolsName || tools[1].Name != llm.DescribeToolName || tools[2].Name != llm.CallToolName {
			t.Fatalf("%s: %v, want the meta tools", era, tools)
		}
		res, err := conn.CallTool(ctx, llm.SearchToolsName, map[string]any{"query": "sum two numbers", "k": 1})
		if err != nil || !strings.HasPrefix(res.Content[0].Text, "1. add: Sums two numbers.") {
			t.Errorf("%s search: %v %v", era, res, err)
		}
		res, err = conn.CallTool(ctx, llm.CallToolName, map[string]any{"name": "say", "arguments": map[string]any{"text": "via call_tool"}})
		if err != nil || res.Content[0].Text != "via call_tool" {
			t.Errorf("%s call_tool: %v %v", era, res, err)
		}
		before := s.upstreamCalls()
		for _, n := range []string{"slow", "echo", "once"} {
			_, err = conn.CallTool(ctx, llm.CallToolName, map[string]any{"name": n, "arguments": map[string]any{}})
			wantUnknown(t, err, era+" call_tool "+n)
		}
		if s.upstreamCalls() != before {
			t.Errorf("%s: refused calls reached the server", era)
		}
	}
}

// TestViewEndToEndListChanged checks that the upstream's tools/list_changed
// drops what a view knew of the tools before the client hears of it: the
// next call that needs the tools' annotations lists them again.
func TestViewEndToEndListChanged(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	s := serve(t, View{Allow: []string{"hint:readOnly", "notify_changes"}})
	conn := s.conn["session"]
	lists := func() int { return s.srv.Stats().Requests["tools/list"] }
	for range 2 {
		if _, err := conn.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	before := lists()
	if _, err := conn.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil || lists() != before {
		t.Fatalf("a call re-listed the tools with nothing changed: %v", err)
	}
	if _, err := conn.CallTool(ctx, "notify_changes", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the client was not told the tools changed")
	}
	if _, err := conn.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if lists() != before+1 {
		t.Errorf("after tools/list_changed, %d listings, want %d", lists(), before+1)
	}
}

// TestViewEndToEndRecomputed checks, through a bridge, that a client's
// next tools/list after the upstream's tools changed shows the view of
// the new tools.
func TestViewEndToEndRecomputed(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	f := newFake()
	vw, err := newView(View{Deny: []string{"hint:destructive"}, Rename: map[string]string{"files__read": "cat"}}, serverOf, serverOfURI)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(ctx, vw.wrap(f.dial), bridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(b.Handler())
	defer b.Close()
	defer hs.Close()
	conn, err := client.Dial(ctx, client.URL(hs.URL+"/mcp"), client.WithProtocolVersion(mcp.LatestStatelessVersion))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	names := func() []string {
		tools, err := conn.AllTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"cat", "web__fetch", "mem__store", "stray"}) {
		t.Fatalf("listed %v", got)
	}
	f.setTools([]string{`{"name":"files__read","inputSchema":{"type":"object"}}`, `{"name":"files__stat","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`})
	if got := names(); !slices.Equal(got, []string{"files__stat"}) {
		t.Errorf("after the change, listed %v", got)
	}
}
