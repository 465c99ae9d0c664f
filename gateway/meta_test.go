package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// callResult decodes a tools/call answer into its text and isError.
func callResult(t *testing.T) func(raw json.RawMessage, err error) (string, bool) {
	return func(raw json.RawMessage, err error) (string, bool) {
		t.Helper()
		return decodeResult(t, raw, err)
	}
}

func decodeResult(t *testing.T, raw json.RawMessage, err error) (string, bool) {
	t.Helper()
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("result %s: %v", raw, err)
	}
	return r.Content[0].Text, r.IsError
}

// TestViewMetaTools checks a view above its MaxTools: it lists exactly the
// three meta tools, as llm.MetaTools defines them; search_tools ranks
// the view's tools under their view names; describe_tool gives the
// view's version; call_tool runs a view tool under its fleet name and
// refuses one outside the view as an unknown tool, without reaching the
// upstream.
func TestViewMetaTools(t *testing.T) {
	f := newFake()
	up := through(t, View{
		Deny:     []string{"files__delete"},
		Rename:   map[string]string{"files__read": "cat"},
		Describe: map[string]string{"web__post": "Submits an HTML form to a web address."},
		MaxTools: 3,
	}, f)
	names, tools := listed(t, up)
	if !slices.Equal(names, []string{llm.SearchToolsName, llm.DescribeToolName, llm.CallToolName}) {
		t.Fatalf("listed %v, want the meta tools", names)
	}
	for _, m := range llm.MetaTools() {
		want, _ := json.Marshal(m)
		if string(tools[m.Name]) != string(want) {
			t.Errorf("%s: %s, want %s", m.Name, tools[m.Name], want)
		}
	}

	search := func(query string, k int) string {
		text, isErr := callResult(t)(callMeta(up, llm.SearchToolsName, `{"query":`+strconv.Quote(query)+`,"k":`+strconv.Itoa(k)+`}`))
		if isErr {
			t.Fatalf("search %q: %s", query, text)
		}
		return text
	}
	if text := search("read a file from disk", 1); !strings.HasPrefix(text, "1. cat: Reads a file from disk.\n") {
		t.Errorf("search: %q", text)
	}
	if text := search("submit a form", 2); !strings.HasPrefix(text, "1. web__post: Submits an HTML form") {
		t.Errorf("search finds the view's description: %q", text)
	}
	if text := search("delete a file", 5); strings.Contains(text, "files__delete") {
		t.Errorf("search found a tool outside the view: %q", text)
	}
	if text, isErr := callResult(t)(callMeta(up, llm.SearchToolsName, `{"k":1}`)); !isErr || !strings.Contains(text, "search_tools takes") {
		t.Errorf("search without a query: %q", text)
	}

	text, isErr := callResult(t)(callMeta(up, llm.DescribeToolName, `{"name":"cat"}`))
	if isErr || !strings.HasPrefix(text, `{"name":"cat","description":"Reads a file from disk."`) {
		t.Errorf("describe: %q", text)
	}
	for _, n := range []string{"files__read", "files__delete", "nothing"} {
		if text, isErr := callResult(t)(callMeta(up, llm.DescribeToolName, `{"name":"`+n+`"}`)); !isErr || !strings.Contains(text, "no tool is named") {
			t.Errorf("describe %s: %q", n, text)
		}
	}

	text, isErr = callResult(t)(callMeta(up, llm.CallToolName, `{"name":"cat","arguments":{"path":"/x"}}`))
	if isErr || text != "ran files__read" {
		t.Errorf("call_tool: %q", text)
	}
	f.mu.Lock()
	sent := string(f.params[len(f.params)-1])
	f.mu.Unlock()
	if sent != `{"name":"files__read","arguments":{"path":"/x"},"_meta":{"progressToken":3}}` {
		t.Errorf("call_tool sent %s", sent)
	}
	before := len(f.saw())
	for _, n := range []string{"files__delete", "files__read", "call_tool"} {
		_, err := callMeta(up, llm.CallToolName, `{"name":"`+n+`","arguments":{}}`)
		wantRefused(t, err, "tool", n)
	}
	if text, isErr := callResult(t)(callMeta(up, llm.CallToolName, `{"name":"cat","arguments":[]}`)); !isErr || !strings.Contains(text, "call_tool takes") {
		t.Errorf("call_tool with bad arguments: %q", text)
	}
	if len(f.saw()) != before {
		t.Errorf("refused calls reached the upstream: %v", f.saw()[before:])
	}
	// The view's tools are still called by their names.
	if raw, err := call(up, "tools/call", `{"name":"cat"}`); err != nil || !strings.Contains(string(raw), "ran files__read") {
		t.Errorf("direct call: %s %v", raw, err)
	}
	// The bridge's typed params: call_tool's arguments become the call's.
	var raw json.RawMessage
	err := up.Call(context.Background(), "tools/call", &mcp.CallToolParams{Name: llm.CallToolName, Arguments: json.RawMessage(`{"name":"mem__store","arguments":{"k":1}}`)}, &raw)
	if text, _ := decodeResult(t, raw, err); text != "ran mem__store" {
		t.Errorf("typed call_tool: %q", text)
	}
	f.mu.Lock()
	typed := f.typed[len(f.typed)-1]
	f.mu.Unlock()
	if typed.Name != "mem__store" || string(typed.Arguments.(json.RawMessage)) != `{"k":1}` {
		t.Errorf("typed call_tool sent %+v", typed)
	}
}

// callMeta calls a meta tool with args, and a _meta that must reach the
// upstream.
func callMeta(up bridge.Upstream, name, args string) (json.RawMessage, error) {
	return call(up, "tools/call", `{"name":"`+name+`","arguments":`+args+`,"_meta":{"progressToken":3}}`)
}

// TestViewAtMaxTools checks the edge: a view of exactly MaxTools tools
// lists them, and the meta tools' names are then no tools of its own.
func TestViewAtMaxTools(t *testing.T) {
	f := newFake()
	up := through(t, View{Allow: []string{"server:files"}, MaxTools: 3}, f)
	if names, _ := listed(t, up); len(names) != 3 || slices.Contains(names, llm.CallToolName) {
		t.Errorf("listed %v", names)
	}
	_, err := callMeta(up, llm.SearchToolsName, `{"query":"file"}`)
	wantRefused(t, err, "tool", llm.SearchToolsName)
	// One tool more, and the meta tools replace them.
	f.setTools(append(slices.Clone(fleetTools), `{"name":"files__stat","inputSchema":{"type":"object"}}`))
	if names, _ := listed(t, up); !slices.Equal(names, []string{llm.SearchToolsName, llm.DescribeToolName, llm.CallToolName}) {
		t.Errorf("listed %v", names)
	}
}

// TestViewListsAgainAfterAChange checks that the view's list is never
// stale: a tools/list after the upstream's tools changed shows the new
// ones, whether or not the view was told of the change.
func TestViewListsAgainAfterAChange(t *testing.T) {
	f := newFake()
	up := through(t, View{Deny: []string{"hint:destructive"}, Rename: map[string]string{"web__fetch": "get"}}, f)
	if names, _ := listed(t, up); !slices.Equal(names, []string{"files__read", "get", "mem__store", "stray"}) {
		t.Fatalf("listed %v", names)
	}
	// files__read becomes destructive, web__fetch goes, a tool comes.
	f.setTools([]string{
		`{"name":"files__read","annotations":{"readOnlyHint":false}}`,
		fleetTools[5],
		`{"name":"web__head","annotations":{"readOnlyHint":true}}`,
	})
	if names, _ := listed(t, up); !slices.Equal(names, []string{"mem__store", "web__head"}) {
		t.Errorf("after the change, listed %v", names)
	}
	_, err := call(up, "tools/call", `{"name":"files__read"}`)
	wantRefused(t, err, "tool", "files__read")
	if raw, err := call(up, "tools/call", `{"name":"web__head"}`); err != nil || !strings.Contains(string(raw), "ran web__head") {
		t.Errorf("the new tool: %s %v", raw, err)
	}
}

// TestViewForgetsOnListChanged checks the calls of a view whose patterns
// need the tools' annotations: they are judged against the last listing,
// which a tools/list_changed drops, so the next call lists again.
func TestViewForgetsOnListChanged(t *testing.T) {
	f := newFake()
	up := through(t, View{Allow: []string{"hint:readOnly"}}, f)
	for range 3 {
		if raw, err := call(up, "tools/call", `{"name":"files__read"}`); err != nil || !strings.Contains(string(raw), "ran") {
			t.Fatalf("call: %s %v", raw, err)
		}
	}
	if n := f.listCount(); n != 1 {
		t.Errorf("%d listings for 3 calls, want 1", n)
	}
	f.setTools([]string{`{"name":"files__read","annotations":{"destructiveHint":true}}`})
	if _, err := call(up, "tools/call", `{"name":"files__read"}`); err != nil {
		t.Errorf("before the change is told, the last listing holds: %v", err)
	}
	up.(*viewUpstream).forget()
	_, err := call(up, "tools/call", `{"name":"files__read"}`)
	wantRefused(t, err, "tool", "files__read")
	if n := f.listCount(); n != 2 {
		t.Errorf("%d listings, want 2", n)
	}
}

// TestViewForgetRace checks that a listing that began before a
// tools/list_changed is not kept as the view's: the change wins.
func TestViewForgetRace(t *testing.T) {
	f := newFake()
	vw, err := newView(View{Allow: []string{"hint:readOnly"}}, serverOf, serverOfURI)
	if err != nil {
		t.Fatal(err)
	}
	var u *viewUpstream
	mid := &midList{fake: f, during: func() { u.forget() }}
	up, err := vw.wrap(func(context.Context, bridge.Downstream) (bridge.Upstream, error) { return mid, nil })(context.Background(), bridge.Downstream{})
	if err != nil {
		t.Fatal(err)
	}
	u = up.(*viewUpstream)
	if _, err := u.tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	u.mu.Lock()
	kept := u.set != nil
	u.mu.Unlock()
	if kept {
		t.Error("a listing older than the change was kept")
	}
}

// midList is the fake, telling of a list change while it lists.
type midList struct {
	*fake
	during func()
}

func (m *midList) Call(ctx context.Context, method string, params, result any, opts ...client.CallOption) error {
	if method == "tools/list" {
		m.during()
	}
	return m.fake.Call(ctx, method, params, result, opts...)
}

// TestViewForgetsBeforeTheBridgeHears checks the order of the callbacks on
// the upstream's tools/list_changed: the view drops its listing before
// the bridge's own callback (which tells the clients) runs, so that no
// client's next call is judged against the old listing.
func TestViewForgetsBeforeTheBridgeHears(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	vw, err := newView(View{Allow: []string{"hint:readOnly", "notify_changes"}}, tsServer, tsServer)
	if err != nil {
		t.Fatal(err)
	}
	var u *viewUpstream
	stale := make(chan bool, 1)
	bridgeHears := client.OnToolsChanged(func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		select {
		case stale <- u.set != nil:
		default:
		}
	})
	up, err := vw.wrap(bridge.DialTarget(client.URL(srv.URL)))(ctx, bridge.Downstream{Options: []client.Option{bridgeHears}})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	u = up.(*viewUpstream)
	if _, err := call(up, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := call(up, "tools/call", `{"name":"notify_changes"}`); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-stale:
		if s {
			t.Error("the bridge heard of the change while the view still held its old listing")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed")
	}
}

// BenchmarkViewList measures a view's tools/list over 1,000 tools of
// about 400 bytes each: what the view adds to the upstream's listing.
func BenchmarkViewList(b *testing.B) {
	f := &fake{}
	for i := range 1000 {
		f.tools = append(f.tools, `{"name":"files__tool_`+strconv.Itoa(i)+`","description":"Does thing number `+strconv.Itoa(i)+
			` to a file on the disk, carefully, and returns what it did.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"the file"},"mode":{"type":"string","enum":["a","b","c"]}},"required":["path"]},"annotations":{"readOnlyHint":`+strconv.FormatBool(i%2 == 0)+`}}`)
	}
	vw, err := newView(View{Deny: []string{"hint:destructive"}, Rename: map[string]string{"files__tool_0": "first"}}, serverOf, serverOfURI)
	if err != nil {
		b.Fatal(err)
	}
	up, _ := vw.wrap(f.dial)(context.Background(), bridge.Downstream{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(up, "tools/list", `{}`); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScanObject checks the member reader against encoding/json on
// objects whose strings hold brackets, quotes and escapes, and whose
// keys are escaped.
func TestScanObject(t *testing.T) {
	for _, obj := range []string{
		`{}`,
		` { "a" : 1 , "b":[1,{"c":"]}"}] ,"d":"x\"}{","e":-1.5e3,"f":true,"g":null}  `,
		`{"n\u0061me":"files__read","x":{"y":[[],{}]},"z":"\\"}`,
		`{"a":"é","b":"\ud83d\ude00","c":[" , ] } "]}`,
	} {
		ms, closeAt, err := scanObject([]byte(obj))
		if err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(obj), &want); err != nil {
			t.Fatal(err)
		}
		if len(ms) != len(want) || obj[closeAt] != '}' {
			t.Errorf("%s: %d members, want %d; close at %d", obj, len(ms), len(want), closeAt)
		}
		for _, m := range ms {
			if string(m.val) != string(want[string(m.key)]) || obj[m.start:m.end] != string(m.val) {
				t.Errorf("%s: member %q is %s, want %s", obj, m.key, m.val, want[string(m.key)])
			}
		}
	}
	if ms, _, _ := scanObject([]byte(`{"n\u0061me":"x"}`)); string(ms[0].key) != "name" || string(ms[0].rawKey) != `"n\u0061me"` {
		t.Errorf("escaped key: %q %q", ms[0].key, ms[0].rawKey)
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{"a":1`, `{"a":1}{}`, `{"a":1,}`, `nul`} {
		if _, _, err := scanObject([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if got := elements([]byte(` [ 1 ,"]",{"a":[2]} ,[] ] `)); len(got) != 4 || string(got[2]) != `{"a":[2]}` {
		t.Errorf("elements: %q", got)
	}
}

// endless is an upstream whose tools/list never ends: every page names a
// next one.
type endless struct {
	*fake
	pages int
}

func (e *endless) Call(ctx context.Context, method string, params, result any, opts ...client.CallOption) error {
	if method != "tools/list" {
		return e.fake.Call(ctx, method, params, result, opts...)
	}
	e.pages++
	*result.(*json.RawMessage) = json.RawMessage(`{"tools":[{"name":"t` + strconv.Itoa(e.pages) + `"}],"nextCursor":"more"}`)
	return nil
}

// A view stops listing an upstream whose pages never end, and says so:
// it holds at most maxListPages pages.
func TestViewListBounded(t *testing.T) {
	e := &endless{fake: newFake()}
	vw, err := newView(View{Deny: []string{"stray"}}, serverOf, serverOfURI)
	if err != nil {
		t.Fatal(err)
	}
	up, err := vw.wrap(func(context.Context, bridge.Downstream) (bridge.Upstream, error) { return e, nil })(context.Background(), bridge.Downstream{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(up, "tools/list", `{}`)
	if err == nil || !strings.Contains(err.Error(), "pages") || e.pages != maxListPages {
		t.Fatalf("%v after %d pages, want an error after %d", err, e.pages, maxListPages)
	}
}
