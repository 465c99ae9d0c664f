package client_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers"
)

// benchCallTool measures one sequential tools/call (echo) over a live
// connection: the library's whole path, encode to decode, plus the server.
func benchCallTool(b *testing.B, target client.Target) {
	ctx := context.Background()
	c, err := client.Dial(ctx, target)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]string{"text": "hello, benchmark"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := c.CallTool(ctx, "echo", args)
		if err != nil {
			b.Fatal(err)
		}
		if res.Content[0].Text != "hello, benchmark" {
			b.Fatal("wrong answer")
		}
	}
}

func BenchmarkCallToolHTTPJSON(b *testing.B) {
	s := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true})
	defer s.Close()
	benchCallTool(b, client.URL(s.URL))
}

func BenchmarkCallToolHTTPSSE(b *testing.B) {
	s := testservers.StartStreamable(testservers.HTTPOptions{})
	defer s.Close()
	benchCallTool(b, client.URL(s.URL))
}

func BenchmarkCallToolStdio(b *testing.B) {
	path, args, env := testservers.StdioCommand()
	benchCallTool(b, client.Command(path, args...).WithEnv(env...))
}

// BenchmarkBigResultStdio measures a 16 MiB tool result over stdio.
func BenchmarkBigResultStdio(b *testing.B) {
	path, args, env := testservers.StdioCommand()
	ctx := context.Background()
	c, err := client.Dial(ctx, client.Command(path, args...).WithEnv(env...))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.SetBytes(16 << 20)
	for b.Loop() {
		if _, err := c.CallTool(ctx, "big", map[string]int{"mib": 16}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchBigResult measures one 16 MiB tool result on a connected client.
func benchBigResult(b *testing.B, target client.Target) {
	ctx := context.Background()
	c, err := client.Dial(ctx, target)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.SetBytes(16 << 20)
	for b.Loop() {
		if _, err := c.CallTool(ctx, "big", map[string]int{"mib": 16}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBigResultHTTPJSON measures a 16 MiB tool result over Streamable
// HTTP answered with application/json (the in-process server included).
func BenchmarkBigResultHTTPJSON(b *testing.B) {
	s := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true})
	defer s.Close()
	benchBigResult(b, client.URL(s.URL))
}

// BenchmarkBigResultHTTPSSE measures a 16 MiB tool result over Streamable
// HTTP answered with an SSE stream (the in-process server included).
func BenchmarkBigResultHTTPSSE(b *testing.B) {
	s := testservers.StartStreamable(testservers.HTTPOptions{})
	defer s.Close()
	benchBigResult(b, client.URL(s.URL))
}

// BenchmarkCallToolHTTPJSON64 measures 64 goroutines calling at once on
// one Conn (Streamable HTTP, JSON answers).
func BenchmarkCallToolHTTPJSON64(b *testing.B) {
	s := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true})
	defer s.Close()
	ctx := context.Background()
	c, err := client.Dial(ctx, client.URL(s.URL))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]string{"text": "hello, benchmark"}
	b.ReportAllocs()
	b.SetParallelism(64 / max(1, runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := c.CallTool(ctx, "echo", args)
			if err != nil {
				b.Error(err)
				return
			}
			if res.IsError || len(res.Content) == 0 || res.Content[0].Text != "hello, benchmark" {
				b.Error("wrong answer")
				return
			}
		}
	})
}
