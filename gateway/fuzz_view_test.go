package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/bridge"
)

// FuzzViewPatterns checks, for any pattern and any tool name and
// annotations, that making a view of the pattern never panics (an
// invalid one is a *ViewError), that Deny always wins over Allow, and
// that a view's listing and its calls agree: a tool is called exactly
// when it is listed, and refused otherwise without reaching the upstream.
func FuzzViewPatterns(f *testing.F) {
	f.Add("files__*", "files__read", uint8(0b0001))
	f.Add("server:files", "files__read", uint8(0))
	f.Add("server:mem*", "mem__store", uint8(0b1111))
	f.Add("hint:destructive", "web__post", uint8(0b0100))
	f.Add("hint:readOnly", "stray", uint8(0b0011))
	f.Add("[a-", "x", uint8(0))
	f.Add("*", "", uint8(0))
	f.Add("server:", "a\"b", uint8(0))
	f.Add("h?nt:*", "hint:readOnly", uint8(0))
	f.Fuzz(func(t *testing.T, pat, name string, bits uint8) {
		tool := map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
		ann := map[string]any{}
		for i, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if bits&(1<<i) != 0 {
				ann[h] = bits&(16<<i) != 0
			}
		}
		tool["annotations"] = ann
		raw, _ := json.Marshal(tool)
		// The name as JSON carries it (invalid UTF-8 becomes U+FFFD).
		nameJSON, _ := json.Marshal(name)
		_ = json.Unmarshal(nameJSON, &name)

		inView := func(v View) (listed, ok bool) {
			vw, err := newView(v, serverOf, serverOfURI)
			if err != nil {
				var ve *ViewError
				if !errors.As(err, &ve) {
					t.Fatalf("%+v: %T %v", v, err, err)
				}
				return false, false
			}
			fk := &fake{tools: []string{string(raw)}}
			up, err := vw.wrap(fk.dial)(context.Background(), bridge.Downstream{})
			if err != nil {
				t.Fatal(err)
			}
			names, _ := listedNoFatal(up)
			listed = slices.Contains(names, name)
			_, cerr := call(up, "tools/call", `{"name":`+string(nameJSON)+`}`)
			called := len(fk.saw()) == 1
			if called != (cerr == nil) || (name != "" && called != listed) {
				t.Fatalf("%+v: tool %s listed %v, called %v (%v)", v, raw, listed, called, cerr)
			}
			return listed, true
		}
		allowed, valid := inView(View{Allow: []string{pat}})
		denied, _ := inView(View{Allow: []string{"*", pat}, Deny: []string{pat}})
		if !valid {
			return
		}
		if allowed && denied {
			t.Fatalf("pattern %q allows and denies %s, and Deny lost", pat, raw)
		}
		_, known := serverOf(name)
		if !allowed && name != "" && (known || !strings.HasPrefix(pat, "server:")) {
			// What the pattern does not match, its Deny keeps; but a
			// server pattern denies a tool of no known server.
			if kept, _ := inView(View{Deny: []string{pat}}); !kept {
				t.Fatalf("pattern %q matches no %s, yet denies it", pat, raw)
			}
		}
	})
}

// listedNoFatal returns the tool names of a tools/list answer.
func listedNoFatal(up bridge.Upstream) ([]string, error) {
	raw, err := call(up, "tools/list", `{}`)
	if err != nil {
		return nil, err
	}
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out, nil
}

// FuzzViewOwnNamesParams checks, for any params of prompts/get and
// completion/complete, that a view of own names never panics and that
// what reaches the upstream names a prompt by its fleet name, never by
// the own name the client gave.
func FuzzViewOwnNamesParams(f *testing.F) {
	f.Add(`{"name":"brief","arguments":{"k":"v"}}`)
	f.Add(`{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"a","value":"b"}}`)
	f.Add(`{"ref":{ "name" : "summarize" ,"type":"ref/prompt"}}`)
	f.Add(`{"ref":{"type":"ref/prompt","name":"summarize","Name":"brief"}}`)
	f.Add(`{"name":"brief","NAME":"x"}`)
	f.Add(`{"ref":{"type":"ref/resource","uri":"file:///a"}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, params string) {
		fk := newFake()
		up := throughOwnNoFatal(fk)
		for _, m := range []string{"prompts/get", "completion/complete"} {
			_, _ = call(up, m, params)
		}
		for _, s := range fk.saw() {
			method, name, _ := strings.Cut(s, " ")
			if method == "completion/complete" && strings.Contains(name, ":") {
				continue // a resource's URI
			}
			if !slices.Contains(fleetPrompts, name) {
				t.Fatalf("params %s: the upstream saw %q, not a fleet name", params, s)
			}
		}
	})
}

// throughOwnNoFatal is throughOwn over the test fleet's prompts, for a
// fuzz target.
func throughOwnNoFatal(fk *fake) bridge.Upstream {
	vw, err := newView(View{OwnNames: true}, serverOf, serverOfURI)
	if err != nil {
		panic(err)
	}
	vw.ownNamesFrom(ownOf, ownOf, func(own string) []string {
		var out []string
		for _, p := range fleetPrompts {
			if o, ok := ownOf(p); ok && o == own {
				out = append(out, p)
			}
		}
		return out
	})
	up, err := vw.wrap(fk.dial)(context.Background(), bridge.Downstream{})
	if err != nil {
		panic(err)
	}
	return up
}
