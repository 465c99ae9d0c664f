package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// ownOf is the test fleet's own names: what follows the "SERVER__".
func ownOf(name string) (string, bool) {
	_, own, ok := strings.Cut(name, "__")
	return own, ok
}

// throughOwn returns an upstream of f as the view v serves it, with the
// own names of the test fleet; prompts are the fleet names of the
// prompts the routes know.
func throughOwn(t *testing.T, v View, f *fake, prompts []string) bridge.Upstream {
	t.Helper()
	vw, err := newView(v, serverOf, serverOfURI)
	if err != nil {
		t.Fatal(err)
	}
	vw.ownNamesFrom(ownOf, ownOf, func(own string) []string {
		var out []string
		for _, p := range prompts {
			if o, ok := ownOf(p); ok && o == own {
				out = append(out, p)
			}
		}
		return out
	})
	up, err := vw.wrap(f.dial)(context.Background(), bridge.Downstream{})
	if err != nil {
		t.Fatal(err)
	}
	return up
}

// TestViewOwnNames checks a view of own names: tools and prompts listed
// under their servers' names, renames on top, and every call, prompt and
// completion sent upstream under its fleet name; a fleet name is unknown.
func TestViewOwnNames(t *testing.T) {
	f := newFake()
	up := throughOwn(t, View{OwnNames: true, Deny: []string{"files__delete"}, Rename: map[string]string{"web__post": "submit"}}, f, fleetPrompts)
	names, tools := listed(t, up)
	if want := []string{"read", "write", "fetch", "submit", "store", "stray"}; !slices.Equal(names, want) {
		t.Fatalf("listed %v, want %v", names, want)
	}
	if want := strings.Replace(fleetTools[0], `"files__read"`, `"read"`, 1); string(tools["read"]) != want {
		t.Errorf("read:\n got %s\nwant %s", tools["read"], want)
	}
	for called, fleet := range map[string]string{"read": "files__read", "fetch": "web__fetch", "submit": "web__post", "stray": "stray"} {
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
	var raw json.RawMessage
	if err := up.Call(context.Background(), "tools/call", &mcp.CallToolParams{Name: "write"}, &raw); err != nil || !strings.Contains(string(raw), "ran files__write") {
		t.Errorf("typed call of write: %s %v", raw, err)
	}
	for _, n := range []string{"files__read", "delete", "post", "web__post"} {
		_, err := call(up, "tools/call", `{"name":`+strconv.Quote(n)+`}`)
		wantRefused(t, err, "tool", n)
	}

	raw, err := call(up, "prompts/list", `{}`)
	if want := `{"prompts":[{"name":"summarize","x":1},{"name":"brief","x":1},{"name":"stray_prompt","x":1}],"nextCursor":"p2"}`; err != nil || string(raw) != want {
		t.Errorf("prompts/list: %s %v, want %s", raw, err, want)
	}
	if _, err := call(up, "prompts/get", `{"name":"brief","arguments":{"k":"v"}}`); err != nil {
		t.Error(err)
	}
	if _, err := call(up, "completion/complete", `{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"a","value":"b"}}`); err != nil {
		t.Error(err)
	}
	_, err = call(up, "prompts/get", `{"name":"files__summarize"}`)
	wantRefused(t, err, "prompt", "files__summarize")
	if got, want := f.saw()[len(f.saw())-2:], []string{"prompts/get web__brief", "completion/complete files__summarize"}; !slices.Equal(got, want) {
		t.Errorf("the upstream saw %v, want %v", got, want)
	}
}

// TestViewOwnNamesCollide checks that a name two tools (or prompts) of a
// view of own names share fails the listing and the call, naming both;
// it is fine when one of them is outside the view, or renamed.
func TestViewOwnNamesCollide(t *testing.T) {
	wantBoth := func(what string, err error, a, b string) {
		t.Helper()
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || !strings.Contains(rpc.Message, a) || !strings.Contains(rpc.Message, b) ||
			!strings.Contains(rpc.Message, "OwnNames") || rpc.Outcome() != jsonrpc.OutcomeNotRun {
			t.Errorf("%s: %v, want an error naming %s and %s", what, err, a, b)
		}
	}
	f := newFake()
	f.setTools(append(slices.Clone(fleetTools), `{"name":"web__read","inputSchema":{"type":"object"}}`))
	prompts := []string{"files__brief", "web__brief"}
	f.prompts = prompts
	up := throughOwn(t, View{OwnNames: true}, f, prompts)
	_, err := call(up, "tools/list", `{}`)
	wantBoth("tools/list", err, "files__read", "web__read")
	_, err = call(up, "tools/call", `{"name":"read"}`)
	wantBoth("tools/call", err, "files__read", "web__read")
	_, err = call(up, "prompts/list", `{}`)
	wantBoth("prompts/list", err, "files__brief", "web__brief")
	_, err = call(up, "prompts/get", `{"name":"brief"}`)
	wantBoth("prompts/get", err, "files__brief", "web__brief")
	if len(f.saw()) != 0 {
		t.Errorf("a refused request reached the upstream: %v", f.saw())
	}

	for _, v := range []View{
		{OwnNames: true, Deny: []string{"server:web"}},
		{OwnNames: true, Rename: map[string]string{"web__read": "web_read", "web__brief": "x"}, Deny: []string{"server:web"}},
	} {
		up = throughOwn(t, v, f, prompts)
		if names, _ := listed(t, up); !slices.Contains(names, "read") || slices.Contains(names, "web_read") {
			t.Errorf("%+v: listed %v", v, names)
		}
		if raw, err := call(up, "prompts/get", `{"name":"brief"}`); err != nil {
			t.Errorf("%+v: prompts/get brief: %s %v", v, raw, err)
		}
	}
	// Routes that are stale (files__brief is gone) or unknown give way
	// to a fresh listing.
	for _, routes := range [][]string{prompts, nil} {
		f2 := newFake()
		up = throughOwn(t, View{OwnNames: true}, f2, routes)
		if raw, err := call(up, "prompts/get", `{"name":"brief"}`); err != nil || !slices.Equal(f2.saw(), []string{"prompts/get web__brief"}) {
			t.Errorf("routes %v: prompts/get brief: %s %v, the upstream saw %v", routes, raw, err, f2.saw())
		}
	}
	up = throughOwn(t, View{OwnNames: true, Rename: map[string]string{"web__read": "web_read"}}, f, prompts)
	if raw, err := call(up, "tools/call", `{"name":"web_read"}`); err != nil || !strings.Contains(string(raw), "ran web__read") {
		t.Errorf("web_read: %s %v", raw, err)
	}
	if raw, err := call(up, "tools/call", `{"name":"read"}`); err != nil || !strings.Contains(string(raw), "ran files__read") {
		t.Errorf("read: %s %v", raw, err)
	}
}

// TestGatewayOwnNames checks views of own names end to end, over two
// servers that share their tools' and prompts' names: a view of one
// server serves them under their own names to clients of every era; a
// view of both refuses the shared names, naming both servers' tools.
func TestGatewayOwnNames(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[:2], Config{Views: []View{
		{OwnNames: true, Allow: []string{"server:streamable"}},
		{Name: "all", OwnNames: true},
	}})
	for _, d := range eras {
		t.Run(d.name, func(t *testing.T) {
			c := dial(t, url, d)
			tools, err := c.AllTools(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if !slices.Contains(names, "echo") || slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "__") }) {
				t.Errorf("tools %v, want own names", names)
			}
			before := up.streamable.Server().Stats().ToolCalls["echo"]
			if got := callText(t, c, "echo", map[string]any{"text": d.name}); got != d.name {
				t.Errorf("echo: %q", got)
			}
			if n := up.streamable.Server().Stats().ToolCalls["echo"] - before; n != 1 {
				t.Errorf("the streamable server ran echo %d times, want 1", n)
			}
			_, err = c.CallTool(ctxT(t), "streamable__echo", map[string]any{"text": "x"})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("a fleet name in a view of own names: %v", err)
			}
			prompts, err := c.AllPrompts(ctxT(t))
			if err != nil || len(prompts) == 0 || slices.ContainsFunc(prompts, func(p mcp.Prompt) bool { return strings.Contains(p.Name, "__") }) {
				t.Errorf("prompts %v %v, want own names", prompts, err)
			}
			gets := up.streamable.Server().Stats().Requests["prompts/get"]
			res, err := c.GetPrompt(ctxT(t), "greet", map[string]string{"name": "Ann"})
			if err != nil || len(res.Messages) == 0 || !strings.Contains(res.Messages[0].Content.Text, "Ann") {
				t.Errorf("greet: %+v %v", res, err)
			}
			if n := up.streamable.Server().Stats().Requests["prompts/get"] - gets; n != 1 {
				t.Errorf("the streamable server got %d prompts/get, want 1", n)
			}
			if d.name != "sse" {
				if _, err := c.Complete(ctxT(t), &mcp.CompleteParams{Ref: mcp.Reference{Type: "ref/prompt", Name: "greet"},
					Argument: mcp.CompleteArgument{Name: "style", Value: "f"}}); err != nil {
					t.Errorf("complete greet: %v", err)
				}
			}

			all, err := client.Dial(ctxT(t), client.URL(url+"/mcp/all"), d.opts...)
			if d.name == "sse" {
				all, err = client.Dial(ctxT(t), client.URL(url+"/sse/all"), d.opts...)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer all.Close()
			_, err = all.AllTools(ctxT(t))
			if err == nil || !strings.Contains(err.Error(), `OwnNames "add": the tools stateless__add and streamable__add`) {
				t.Errorf("a view of both servers' own names: %v, want the collision", err)
			}
			_, err = all.GetPrompt(ctxT(t), "greet", map[string]string{"name": "Ann"})
			if err == nil || !strings.Contains(err.Error(), "stateless__greet") || !strings.Contains(err.Error(), "streamable__greet") {
				t.Errorf("prompts/get greet in a view of both: %v, want the collision", err)
			}
		})
	}
}
