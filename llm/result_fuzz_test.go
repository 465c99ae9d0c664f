package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/anymcp/anymcp/mcp"
)

// FuzzResult feeds results a server could send to every provider's
// conversion: it never panics, always writes valid JSON, and the message
// stays within the caps however the result is made.
func FuzzResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}],"isError":true}`,
		`{"content":[{"type":"resource_link","uri":"file:///a","name":"a"},{"type":"resource","resource":{"uri":"x:/b.pdf","mimeType":"application/pdf","blob":"JVBERg=="}}]}`,
		`{"content":[],"structuredContent":{"a":[1,2,{"b":null}]}}`,
		`{"content":[{"type":"resource"},{"type":"weird"},{"type":"text","text":"\u0000\u0001\ud800"}]}`,
	} {
		f.Add([]byte(s), uint16(64))
	}
	store := NewMemoryStore(1 << 16)
	f.Fuzz(func(t *testing.T, data []byte, capBytes uint16) {
		var res mcp.CallToolResult
		if json.Unmarshal(data, &res) != nil {
			return
		}
		opts := ResultOptions{MaxBytes: int(capBytes), Store: store, MaxMediaBytes: 1 << 12, MaxMediaBlocks: 4, ImagesInFollowup: capBytes%2 == 0}
		for _, p := range allProviders {
			tr, err := Result(context.Background(), &res, ToolCall{ID: "id", Name: "n"}, Target{Provider: p}, opts)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if !json.Valid(tr.Message) || tr.Followup != nil && !json.Valid(tr.Followup) {
				t.Fatalf("%s: invalid JSON %s", p, tr.Message)
			}
			// Text: the cap and a notice, escaped at worst 6 bytes a byte;
			// media: base64 of the media cap, and each block's envelope.
			bound := 6*(opts.withDefaults().MaxBytes+600) + 2*opts.MaxMediaBytes + 400*opts.MaxMediaBlocks + 200
			if n := len(tr.Message) + len(tr.Followup); n > bound {
				t.Fatalf("%s: %d bytes, over the bound %d (cap %d)", p, n, bound, opts.withDefaults().MaxBytes)
			}
		}
	})
}

// FuzzToolboxCall feeds what a model could send (any name, any bytes as
// arguments) to a budgeted Toolbox with a store: every call is answered
// as a result, never a panic or a Go error, and the definitions only
// ever grow at their end.
func FuzzToolboxCall(f *testing.F) {
	for _, s := range [][2]string{
		{SearchToolsName, `{"query":"read a file","k":3}`},
		{DescribeToolName, `{"name":"server_filesystem__read_text_file"}`},
		{CallToolName, `{"name":"server_memory__read_graph","arguments":{}}`},
		{CallToolName, `{"name":"x","arguments":"{}"}`},
		{ReadResultName, `{"handle":"0123456789abcdef","offset":0,"length":10}`},
		{"server_filesystem__read_text_file", `{"path":null}`},
		{"", `[`},
	} {
		f.Add(s[0], []byte(s[1]))
	}
	src := corpusSource(f)
	store := NewMemoryStore(1 << 16)
	tb, err := NewToolbox(context.Background(), src, Target{Provider: Anthropic}, ToolboxOptions{Budget: 3000, Result: ResultOptions{Store: store}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		before := tb.Definitions()
		tr, err := tb.Call(context.Background(), ToolCall{ID: "c", Name: name}, args)
		if err != nil {
			t.Fatalf("%q %q: %v", name, args, err)
		}
		if !json.Valid(tr.Message) {
			t.Fatalf("invalid message %s", tr.Message)
		}
		after := tb.Definitions()
		if !json.Valid(after) || !bytes.HasPrefix(after, before[:len(before)-1]) {
			t.Fatalf("definitions changed before their end")
		}
	})
}
