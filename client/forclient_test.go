package client

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// A call made ForClient declares that client's capabilities to a stateless
// server and gets its input_required answer raw, keys and state as sent;
// without them declared, the server refuses (-32021).
func TestForClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.StatelessOnly}})
	defer srv.Close()
	conn, err := Dial(ctx, URL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	args := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}}
	var raw json.RawMessage
	if err := conn.Call(ctx, "tools/call", args, &raw, ForClient(json.RawMessage(`{"elicitation":{"form":{}}}`))); err != nil {
		t.Fatal(err)
	}
	var ir mcp.InputRequiredResult
	if err := json.Unmarshal(raw, &ir); err != nil || ir.ResultType != mcp.ResultInputRequired || len(ir.InputRequests) != 1 {
		t.Fatalf("answer %s: %v", raw, err)
	}
	for _, r := range ir.InputRequests {
		if r.Method != "elicitation/create" {
			t.Fatalf("input request %+v", r)
		}
	}
	err = conn.Call(ctx, "tools/call", args, &raw, ForClient(nil))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMissingClientCapability {
		t.Fatalf("without the capability: %v (%s)", err, raw)
	}
}

// TestWithCapabilitiesReplacesTheObject: the client capabilities in the
// dialect's _meta members are replaced whole, whatever their strings
// hold (braces, escaped quotes), and members after them are kept; a value
// that is not an object is left to the decoder, as before.
func TestWithCapabilitiesReplacesTheObject(t *testing.T) {
	key := `"` + mcp.MetaClientCapabilities + `":`
	for _, c := range []struct{ in, want string }{
		{key + `{}`, key + `{"x":1}`},
		{key + `{"a":{"b":"}\"{"},"c":[{}]},"progressToken":7`, key + `{"x":1},"progressToken":7`},
		{`"v":"2026-07-28",` + key + `{"roots":{}}`, `"v":"2026-07-28",` + key + `{"x":1}`},
		{key + `{"a":"\"}"},"t":1`, key + `{"x":1},"t":1`},
		{key + ` {"a":1},"t":2`, key + `{"x":1},"t":2`},
		{`"other":{}`, `"other":{}`},
	} {
		if got := string(withCapabilities([]byte(c.in), json.RawMessage(`{"x":1}`))); got != c.want {
			t.Errorf("withCapabilities(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
