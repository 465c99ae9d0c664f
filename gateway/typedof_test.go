package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
)

// callSeeds are tools/call params of every shape the fleet reads.
var callSeeds = []string{
	`{"name":"a__echo","arguments":{"text":"hi"}}`,
	`{"name":"a__echo"}`,
	`{"name":"a__echo","arguments":null}`,
	`{"name":"a__echo","arguments":{"x":1},"_meta":{"progressToken":7,"k":{"v":[1,2]}}}`,
	`{"name":"a__echo","_meta":{"k":1,"k":2}}`,
	`{"name":"a__echo","_meta":{"k\u0031":1}}`,
	`{"name":"a__echo","_meta":null}`,
	`{"name":"a__echo","_meta":[]}`,
	`{"name":"a__echo","task":{"ttl":1000}}`,
	`{"name":"a__echo","name":"b__echo"}`,
	`{"Name":"a__echo"}`,
	`{"name":"a\u005f_echo","arguments":{}}`,
	`{"name":7}`,
	` { "name" : "a__echo" , "arguments" : { "t" : "x" } } `,
	`{}`,
}

// FuzzTypedOf: whenever the fleet builds a call's typed params from the
// members the view read (typedOf), they encode to exactly what the
// older reading (paramsOf and typedCall) made of the same params.
func FuzzTypedOf(f *testing.F) {
	for _, s := range callSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := readCall(json.RawMessage(raw))
		if err != nil {
			return
		}
		fast, ok := typedOf(c)
		if !ok {
			return
		}
		old, err := paramsOf("tools/call", json.RawMessage(raw))
		if err != nil {
			t.Fatalf("typedOf read %s, paramsOf refused it: %v", raw, err)
		}
		if name := old.str("name"); name != c.name {
			t.Fatalf("%s: name %q, paramsOf reads %q", raw, c.name, name)
		}
		fast.Name = "s_" + c.name
		want, err1 := json.Marshal(old.typedCall(fast.Name))
		got, err2 := json.Marshal(fast)
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s:\n got %s (%v)\nwant %s (%v)", raw, got, err2, want, err1)
		}
	})
}

// TestTypedOfTakesOnlyPlainCalls: the params the fleet must send as they
// are (a task, a member twice or in other case, _meta not an object)
// are not made typed.
func TestTypedOfTakesOnlyPlainCalls(t *testing.T) {
	for _, raw := range []string{
		`{"name":"a__echo","task":{"ttl":1000}}`,
		`{"name":"a__echo","_meta":null}`,
		`{"name":"a__echo","_meta":[]}`,
		`{"name":"a__echo","_meta":{},"_meta":{}}`,
		`{"name":"a__echo","_Meta":{}}`,
	} {
		c, err := readCall(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if _, ok := typedOf(c); ok {
			t.Errorf("%s was made typed", raw)
		}
	}
}

// TestIsString: a name is passed on as sent only when quoteJSON would
// write it so; a plain fleet name always is.
func TestIsString(t *testing.T) {
	for _, s := range []string{"a b", "a<b>&", "é", "a\u2028b", `a"b`, `a\b`, "a\tb", ""} {
		q := quoteJSON(s)
		if isString([]byte(`"`+s+`"`), s) && string(q) != `"`+s+`"` {
			t.Errorf("isString took %q, which quoteJSON writes %s", s, q)
		}
	}
	if !isString(quoteJSON("srv__tool-1"), "srv__tool-1") {
		t.Error("isString refused a plain fleet name")
	}
	if isString([]byte(`"a\u005fb"`), "a_b") || isString([]byte(`"ab"`), "a_b") {
		t.Error("isString took an escaped or other name")
	}
}
