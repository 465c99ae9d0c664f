package client

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// instantTransport is a legacy server inside Send: it answers every request
// before Send returns, straight to the Conn once the Conn takes answers
// (jsonrpc.AnswerTaker), through Recv before. Calls over it cost the
// protocol layer's own work and nothing else: no I/O, no goroutine but the
// caller's.
type instantTransport struct {
	in     chan *jsonrpc.Message
	closed chan struct{}
	take   atomic.Pointer[func(*jsonrpc.Message) bool]
}

var (
	instantInit = json.RawMessage(`{"protocolVersion":"` + mcp.LatestVersion +
		`","capabilities":{"tools":{}},"serverInfo":{"name":"instant","version":"1"}}`)
	instantEcho = json.RawMessage(`{"content":[{"type":"text","text":"hello, benchmark"}]}`)
)

func newInstantTransport() *instantTransport {
	return &instantTransport{in: make(chan *jsonrpc.Message, 8), closed: make(chan struct{})}
}

func (t *instantTransport) Send(ctx context.Context, m *jsonrpc.Message) error {
	if !m.IsRequest() {
		return nil
	}
	resp := &jsonrpc.Message{ID: m.ID}
	switch m.Method {
	case "initialize":
		resp.Result = instantInit
	case "tools/call":
		resp.Result = instantEcho
	default:
		resp.Error = jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found")
	}
	if f := t.take.Load(); f != nil && (*f)(resp) {
		return nil
	}
	select {
	case t.in <- resp:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *instantTransport) Recv() (*jsonrpc.Message, error) {
	select {
	case m := <-t.in:
		return m, nil
	case <-t.closed:
		return nil, jsonrpc.ErrClosed
	}
}

func (t *instantTransport) Close() error {
	select {
	case <-t.closed:
	default:
		close(t.closed)
	}
	return nil
}

func (t *instantTransport) TakeAnswers(f func(*jsonrpc.Message) bool) { t.take.Store(&f) }

// BenchmarkCallOverhead measures what a tools/call costs the protocol layer
// alone: encoding, the pending-call table, the timers and contexts, and
// decoding the result, over a transport that answers inside Send.
func BenchmarkCallOverhead(b *testing.B) {
	b.Run("default", func(b *testing.B) { benchOverhead(b) })
	b.Run("no-timeout", func(b *testing.B) { benchOverhead(b, WithRequestTimeout(0)) })
	b.Run("max-time", func(b *testing.B) { benchOverhead(b, WithMaxCallTime(time.Hour)) })
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
