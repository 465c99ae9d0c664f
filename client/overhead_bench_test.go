package client

import (
	"context"
	"testing"
	"time"
)

// BenchmarkCallOverhead measures what a tools/call costs the protocol layer
// alone: encoding, the pending-call table, the timers and contexts, and
// decoding the result, over a transport that answers inside Send.
func BenchmarkCallOverhead(b *testing.B) {
	b.Run("default", func(b *testing.B) { benchOverhead(b) })
	b.Run("no-timeout", func(b *testing.B) { benchOverhead(b, WithDefaultTimeout(0)) })
	b.Run("max-time", func(b *testing.B) { benchOverhead(b, WithDefaultMaxTime(time.Hour)) })
}

func benchOverhead(b *testing.B, opts ...Option) {
	c, err := Open(context.Background(), newInstantTransport(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	args := map[string]string{"text": "hello, benchmark"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(ctx, "echo", args)
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError || len(res.Content) != 1 || res.Content[0].Text != "hello, benchmark" {
			b.Fatalf("wrong answer %+v", res)
		}
	}
}
