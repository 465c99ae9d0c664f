package jsondecode

import (
	"bytes"
	stdjson "encoding/json"
	"io"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/mcp"
)

var (
	small = []byte(`{"content":[{"type":"text","text":"hello, benchmark"}],"structuredContent":{"echo":"hello, benchmark"},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`)
	tools = func() []byte {
		var b strings.Builder
		b.WriteString(`{"tools":[`)
		for i := range 50 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"name":"tool` + string(rune('a'+i%26)) + `","description":"does a thing with some words in it","inputSchema":{"type":"object","properties":{"a":{"type":"string","description":"first"},"b":{"type":"integer","minimum":0},"c":{"type":"array","items":{"type":"string"}}},"required":["a"]},"annotations":{"readOnlyHint":true}}`)
		}
		b.WriteString(`],"ttlMs":60000}`)
		return []byte(b.String())
	}()
	big = func() []byte {
		text := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB
		return []byte(`{"content":[{"type":"text","text":"` + text + `"}]}`)
	}()
)

func decodeV1[T any](b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v T
		if err := stdjson.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func decodeV2[T any](b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v T
		if err := jsonv2.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSmallResult(b *testing.B) {
	b.Run("encoding-json", func(b *testing.B) { decodeV1[mcp.CallToolResult](b, small) })
	b.Run("json-v2", func(b *testing.B) { decodeV2[mcp.CallToolResult](b, small) })
}

func BenchmarkToolsPage(b *testing.B) {
	b.Run("encoding-json", func(b *testing.B) { decodeV1[mcp.ListToolsResult](b, tools) })
	b.Run("json-v2", func(b *testing.B) { decodeV2[mcp.ListToolsResult](b, tools) })
}

func BenchmarkBigResult(b *testing.B) {
	b.Run("encoding-json", func(b *testing.B) { decodeV1[mcp.CallToolResult](b, big) })
	b.Run("json-v2", func(b *testing.B) { decodeV2[mcp.CallToolResult](b, big) })
}

// Validation alone: what a separate pass before decoding costs.
func BenchmarkValidBig(b *testing.B) {
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			if !stdjson.Valid(big) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("jsontext", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			v := jsontext.Value(big)
			if !v.IsValid() {
				b.Fatal("invalid")
			}
		}
	})
}

// From the body: what each way costs when the answer arrives as a stream
// of bytes (an HTTP body, a pipe) rather than as a slice. "read, then
// decode" reads the whole answer into one buffer sized as a Content-Length
// sizes it, then decodes it: json-v2 with a copy of every string, anymcp's
// jsondec.UnmarshalOwned sharing a large string with the buffer (what the
// library does). "jsontext stream" decodes straight off the reader
// (json.UnmarshalRead over a jsontext.Decoder), with no whole-answer
// buffer of its own making.
func BenchmarkFromBody(b *testing.B) {
	for _, in := range []struct {
		name string
		data []byte
		v    func() any
	}{
		{"small", small, func() any { return new(mcp.CallToolResult) }},
		{"tools-page", tools, func() any { return new(mcp.ListToolsResult) }},
		{"16MiB", big, func() any { return new(mcp.CallToolResult) }},
	} {
		readAll := func(r io.Reader) []byte {
			buf := make([]byte, len(in.data)+1) // +1: room to see EOF
			n, err := io.ReadFull(r, buf)
			if err != io.ErrUnexpectedEOF || n != len(in.data) {
				b.Fatalf("read %d bytes: %v", n, err)
			}
			return buf[:n]
		}
		run := func(name string, decode func(r io.Reader, v any) error) {
			b.Run(in.name+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(in.data)))
				b.ReportAllocs()
				for b.Loop() {
					if err := decode(bytes.NewReader(in.data), in.v()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		run("read-then-json-v2", func(r io.Reader, v any) error { return jsonv2.Unmarshal(readAll(r), v) })
		run("read-then-anymcp", func(r io.Reader, v any) error { return jsondec.UnmarshalOwned(readAll(r), v) })
		run("jsontext-stream", func(r io.Reader, v any) error { return jsonv2.UnmarshalRead(r, v) })
	}
}
