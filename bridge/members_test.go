package bridge

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// memberSeeds are objects the member scanner must read as encoding/json
// reads them: white space, escapes, nested values, repeated keys, HTML
// characters, U+2028, keys that differ only in case, and non-objects.
var memberSeeds = []string{
	`{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":7}}`,
	` { "b" : [ 1 , 2 , {"x" : "a b"} ] , "a" : "q\"\\u00e9" , "c" : null } `,
	`{"content":[{"type":"text","text":"hello"}],"isError":false}`,
	`{"content":[],"resultType":"complete","ttlMs":5,"cacheScope":"public"}`,
	`{"a":1,"a":2}`,
	`{"a":"<b>&"}`, `{"a":"x&y"}`, `{"b":">"}`,
	"{\"a\":\"\u2028\"}",
	`{"k\u0041":1,"kA":2}`,
	`{"_META":{"x":1},"name":"n"}`,
	`{"name":"n","_meta":{"own":1,"progressToken":"t"}}`,
	`{"name":"n","_meta":null}`,
	`{"ResultType":"input_required","inputRequests":{"a":{}}}`,
	`{"resultType":"input_required"}`,
	`{"InputRequests":{"a":{}}}`,
	`{}`, `[]`, `null`, `"s"`, `1`, `{"a":`, `{"\u00ff\ud800":true}`,
}

// FuzzMemberPaths checks that the bridge's map-free paths make the bytes
// its map paths make (forwarded params, completed results), and that
// plainResult never calls an input_required round plain.
func FuzzMemberPaths(f *testing.F) {
	for _, s := range memberSeeds {
		f.Add([]byte(s), "tools/list")
	}
	b := &Bridge{o: Options{CacheTTL: 1500 * time.Millisecond}}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`), "")
	f.Add([]byte(` {"jsonrpc":"2.0","id":"a","result":{"x":[1,2]}} `), "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"result":{"x":}}`), "")
	f.Add([]byte(`[{"jsonrpc":"2.0","method":"x"}]`), "")
	f.Fuzz(func(t *testing.T, data []byte, method string) {
		got, gerr := decodeBody(data)
		want, werr := jsonrpc.DecodeMessage(data)
		if (gerr == nil) != (werr == nil) || (gerr == nil && !reflect.DeepEqual(got, want)) {
			t.Fatalf("decodeBody(%q) = %+v, %v; DecodeMessage: %+v, %v", data, got, gerr, want, werr)
		}
		if !json.Valid(data) {
			if plainResult(data) {
				t.Fatalf("plainResult(%q): invalid JSON called plain", data)
			}
			return
		}
		if got, want := b.complete(method, data), b.completeMaps(method, data); !bytes.Equal(got, want) {
			t.Fatalf("complete(%q, %q) = %s, through maps %s", method, data, got, want)
		}
		for _, drop := range [][2][]string{{statelessOnly, statelessOnlyMeta}, {nil, statelessOnlyMeta}, {{"a"}, nil}} {
			if got, want := without(data, drop[0], drop[1]), withoutMaps(data, drop[0], drop[1]); !bytes.Equal(got, want) {
				t.Fatalf("without(%q, %q) = %s, through maps %s", data, drop, got, want)
			}
		}
		if plainResult(data) {
			var ir struct {
				ResultType    string          `json:"resultType"`
				InputRequests json.RawMessage `json:"inputRequests"`
			}
			if json.Unmarshal(data, &ir) != nil || ir.ResultType == "input_required" || present(ir.InputRequests) {
				t.Fatalf("plainResult(%q) is true for a round (%+v)", data, ir)
			}
		}
		r, perr := parseRequest(method, data)
		if perr != nil {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(data, &m); err == nil && m != nil {
				var meta map[string]json.RawMessage
				if v, ok := m["_meta"]; !ok || !present(v) || json.Unmarshal(v, &meta) == nil {
					t.Fatalf("parseRequest(%q) refused an object: %v", data, perr)
				}
			}
			return
		}
		if got, want := r.upstreamParams(nil), r.upstreamParamsMaps(nil); !bytes.Equal(got, want) {
			t.Fatalf("upstreamParams(%q) = %s, through maps %s", data, got, want)
		}
	})
}

// TestMemberPaths runs the seeds of FuzzMemberPaths with the results
// spelled out for the cases that matter most.
func TestMemberPaths(t *testing.T) {
	b := &Bridge{o: Options{CacheTTL: 1500 * time.Millisecond}}
	for _, c := range []struct{ method, in, want string }{
		{"tools/call", `{ "isError" : false, "content" : [ {"type":"text", "text":"a b"} ] }`, `{"content":[{"type":"text","text":"a b"}],"isError":false,"resultType":"complete"}`},
		{"tools/list", `{"tools":[]}`, `{"cacheScope":"private","resultType":"complete","tools":[],"ttlMs":1500}`},
		{"tools/call", `{"a":"<"}`, `{"a":"\u003c","resultType":"complete"}`},
	} {
		if got := b.complete(c.method, json.RawMessage(c.in)); string(got) != c.want {
			t.Errorf("complete(%s, %s) = %s, want %s", c.method, c.in, got, c.want)
		}
	}
	r, perr := parseRequest("tools/call", json.RawMessage(memberSeeds[0]))
	if perr != nil {
		t.Fatal(perr)
	}
	if got, want := string(r.upstreamParams(nil)), `{"arguments":{"text":"hello"},"name":"echo"}`; got != want {
		t.Errorf("upstreamParams = %s, want %s", got, want)
	}
	if string(r.token) != "7" || r.str("name") != "echo" {
		t.Errorf("parseRequest: token %s, name %q", r.token, r.str("name"))
	}
}
