package client_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// The standalone GET stream of an initialize-era Streamable HTTP server opens only
// when something will listen on it: a handler set, a subscription, a call
// that wants progress. A Conn that only calls costs no GET and holds no
// stream.
func TestGETStreamOnDemand(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []client.Option
		then func(t *testing.T, c *client.Conn)
		gets int32
	}{
		{"calls only", nil, func(t *testing.T, c *client.Conn) { echo(t, c, "x") }, 0},
		{"a log handler", []client.Option{client.OnLog(func(mcp.LoggingMessageParams) {})}, nil, 1},
		{"a sampling handler", []client.Option{client.WithSampling(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return nil, nil
		})}, nil, 1},
		{"a subscription", nil, func(t *testing.T, c *client.Conn) {
			if err := c.Subscribe(ctxT(t), testservers.StaticTextURI); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"a call with progress", nil, func(t *testing.T, c *client.Conn) {
			if _, err := c.CallTool(ctxT(t), "slow", map[string]any{"steps": 1, "delayMs": 1}, client.WithProgress(func(mcp.ProgressParams) {})); err != nil {
				t.Fatal(err)
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gets atomic.Int32
			srv := testservers.StartStreamable(testservers.HTTPOptions{OnRequest: func(r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
				}
			}})
			defer srv.Close()
			c := dialT(t, client.URL(srv.URL), tc.opts...)
			if tc.then != nil {
				tc.then(t, c)
			}
			if got := gets.Load(); got != tc.gets {
				t.Errorf("%d GET streams opened, want %d", got, tc.gets)
			}
		})
	}
}
