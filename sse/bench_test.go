package sse_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/anymcp/anymcp/sse"
)

// smallEventsStream builds n typical MCP message events: an id, the type
// "message" and one JSON-RPC message of about 150-250 bytes.
func smallEventsStream(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "event: message\nid: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok-%d\",\"progress\":%d,\"total\":100,\"message\":\"working\"}}\n\n", i, i, i%100)
		case 1:
			fmt.Fprintf(&b, "event: message\nid: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"logger\":\"server\",\"data\":\"step %d done\"}}\n\n", i, i)
		default:
			fmt.Fprintf(&b, "event: message\nid: %d\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"The result of call number %d.\"}],\"isError\":false}}\n\n", i, i, i)
		}
	}
	return b.Bytes()
}

// hugeEventStream builds one event whose data is a single line of size bytes.
func hugeEventStream(size int) []byte {
	b := make([]byte, 0, size+16)
	b = append(b, "data: "...)
	b = append(b, bytes.Repeat([]byte{'x'}, size)...)
	return append(b, "\n\n"...)
}

func BenchmarkSmallEvents(b *testing.B) {
	const n = 10000
	in := smallEventsStream(n)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r := sse.NewReader(bytes.NewReader(in), 0)
		count := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			count++
		}
		if count != n {
			b.Fatalf("got %d events, want %d", count, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}

func BenchmarkHugeEvent(b *testing.B) {
	const size = 16 << 20
	in := hugeEventStream(size)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r := sse.NewReader(bytes.NewReader(in), 0)
		e, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if len(e.Data) != size {
			b.Fatalf("got %d bytes, want %d", len(e.Data), size)
		}
	}
}
