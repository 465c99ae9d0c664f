package client

import (
	"encoding/json"
	"testing"
)

// TestNameOfRawParams: Mcp-Name is read from params given as JSON as
// encoding/json reads them: the name of a tool or prompt, the uri of a
// resource, names matched without regard to case, "" when the params do
// not decode.
func TestNameOfRawParams(t *testing.T) {
	for _, c := range []struct{ method, params, want string }{
		{"tools/call", `{"arguments":{"name":"no"},"name":"echo"}`, "echo"},
		{"prompts/get", `{"name":"p\u00e9"}`, "pé"},
		{"resources/read", `{"name":"no","uri":"file:///a"}`, "file:///a"},
		{"tools/call", `{"NAME":"folded"}`, "folded"},
		{"tools/call", `{"name":"a","name":"last"}`, "last"},
		{"tools/call", `{"name":5}`, ""},
		{"tools/call", `[1]`, ""},
		{"tools/list", `{"name":"x"}`, ""},
	} {
		raw := json.RawMessage(c.params)
		if got, _ := nameOf(c.method, raw, raw); got != c.want {
			t.Errorf("nameOf(%s, %s) = %q, want %q", c.method, c.params, got, c.want)
		}
	}
}
