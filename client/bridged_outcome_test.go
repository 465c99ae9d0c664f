package client

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// bridgeLost is the error a bridge answers when its upstream's answer was
// lost: the request may have run.
func bridgeLost() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the upstream's answer was lost; the request may have run",
		Data: json.RawMessage(`{"detail":"kept","io.github.anymcp/outcome":"unknown"}`)}
}

// A JSON-RPC error whose data says the request may have run (a bridge's)
// is a lost answer: it matches jsonrpc.ErrOutcomeUnknown and is still the
// *jsonrpc.Error, code, message and data. As after a lost answer of its
// own, the Conn sends again only what is safe to repeat, at most
// maxReplays times; a tool call that is not is sent once, even under
// WithReplay. An error that says it did not run is no lost answer.
func TestBridgedOutcomeUnknown(t *testing.T) {
	cases := []struct {
		name      string
		fails     int32 // how many first sends of the method fail
		errOf     func() *jsonrpc.Error
		opts      []Option
		call      func(ctx context.Context, c *Conn) error
		method    string
		wantSends int32
		wantErr   bool
		unknown   bool
	}{
		{name: "tool call, WithReplay", fails: 10, errOf: bridgeLost, opts: []Option{WithReplay()}, method: "tools/call",
			call: func(ctx context.Context, c *Conn) error {
				_, err := c.CallTool(ctx, "pay", map[string]any{"to": "x"})
				return err
			}, wantSends: 1, wantErr: true, unknown: true},
		{name: "tool call AsReplayable", fails: 1, errOf: bridgeLost, method: "tools/call",
			call: func(ctx context.Context, c *Conn) error {
				_, err := c.CallTool(ctx, "pay", map[string]any{"to": "x"}, AsReplayable())
				return err
			}, wantSends: 2},
		{name: "tool call AsReplayable, lost every time", fails: 10, errOf: bridgeLost, method: "tools/call",
			call: func(ctx context.Context, c *Conn) error {
				_, err := c.CallTool(ctx, "pay", map[string]any{"to": "x"}, AsReplayable())
				return err
			}, wantSends: 1 + maxReplays, wantErr: true, unknown: true},
		{name: "ping, WithReplay", fails: 1, errOf: bridgeLost, opts: []Option{WithReplay()}, method: "ping",
			call: func(ctx context.Context, c *Conn) error { return c.Ping(ctx) }, wantSends: 2},
		{name: "ping", fails: 1, errOf: bridgeLost, method: "ping",
			call: func(ctx context.Context, c *Conn) error { return c.Ping(ctx) }, wantSends: 1, wantErr: true, unknown: true},
		{name: "not run, AsReplayable", fails: 1, method: "tools/call",
			errOf: func() *jsonrpc.Error {
				return jsonrpc.NewError(jsonrpc.CodeInternalError, "too many requests in progress").WithOutcome(jsonrpc.OutcomeNotRun)
			},
			call: func(ctx context.Context, c *Conn) error {
				_, err := c.CallTool(ctx, "pay", map[string]any{"to": "x"}, AsReplayable())
				return err
			}, wantSends: 1, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newInstantTransport()
			var sends atomic.Int32
			tr.fail = func(m *jsonrpc.Message) *jsonrpc.Error {
				if m.Method == tc.method && sends.Add(1) <= tc.fails {
					return tc.errOf()
				}
				return nil
			}
			tr.result = func(m *jsonrpc.Message) json.RawMessage {
				if m.Method == "ping" {
					return json.RawMessage(`{}`)
				}
				return nil
			}
			c, err := Open(context.Background(), tr, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = tc.call(t.Context(), c)
			if n := sends.Load(); n != tc.wantSends {
				t.Errorf("%s sent %d times, want %d", tc.method, n, tc.wantSends)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if err == nil {
				return
			}
			if got := errors.Is(err, jsonrpc.ErrOutcomeUnknown); got != tc.unknown {
				t.Errorf("errors.Is(%v, ErrOutcomeUnknown) = %v, want %v", err, got, tc.unknown)
			}
			want := tc.errOf()
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != want.Code || rpcErr.Message != want.Message || string(rpcErr.Data) != string(want.Data) {
				t.Errorf("errors.As gave %+v, want %+v", rpcErr, want)
			}
		})
	}
}
