package jsondecode

import (
	stdjson "encoding/json"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

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
