package client_test

import (
	"context"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// TestSamplingToolsDeclared: sampling.tools is declared only with
// WithSamplingTools, so a 2025-11-25 server sends tools in sampling only to
// a handler that can answer them.
func TestSamplingToolsDeclared(t *testing.T) {
	answer := func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: mcp.Contents{mcp.TextContent("ok")}}, nil
	}
	for _, withTools := range []bool{false, true} {
		hs := testservers.StartStreamable(testservers.HTTPOptions{})
		opts := []client.Option{client.WithSampling(answer)}
		if withTools {
			opts = append(opts, client.WithSamplingTools())
		}
		c, err := client.Dial(context.Background(), client.URL(hs.URL), opts...)
		if err != nil {
			hs.Close()
			t.Fatal(err)
		}
		caps := hs.Server().Stats().ClientCapabilities
		c.Close()
		hs.Close()
		if caps.Sampling == nil {
			t.Fatalf("withTools=%v: sampling not declared: %+v", withTools, caps)
		}
		if got := caps.Sampling.Tools != nil; got != withTools {
			t.Errorf("withTools=%v: sampling.tools declared = %v", withTools, got)
		}
	}
}
