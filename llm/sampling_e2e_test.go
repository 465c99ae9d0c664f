package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/fakemodel"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// TestSamplingBothEras: a Sampler given to client.WithSampling answers a
// server's sampling/createMessage in both eras — a server request on a
// 2025-11-25 session, an input_required round with a 2026-07-28 server —
// through the model's API, and the tool returns the model's text.
func TestSamplingBothEras(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(testservers.HTTPOptions) *testservers.HTTPServer
	}{
		{"initialize era", testservers.StartStreamable},
		{"stateless era", testservers.StartStateless},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := fakemodel.New(t, fakemodel.Turn{Text: "Paris"})
			s, err := NewSampler(SamplingConfig{Provider: Anthropic, BaseURL: fm.AnthropicBase(), APIKey: testKey, Model: "claude-test"})
			if err != nil {
				t.Fatal(err)
			}
			srv := tc.start(testservers.HTTPOptions{})
			defer srv.Close()
			ctx := context.Background()
			conn, err := client.Dial(ctx, client.URL(srv.URL), client.WithSampling(s.CreateMessage))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			res, err := conn.CallTool(ctx, "sample", map[string]any{"prompt": "capital of France?"})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "Paris") {
				t.Fatalf("tool result %+v", res)
			}
			reqs := fm.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d model requests", len(reqs))
			}
			wantJSON(t, "model request", body(t, reqs[0]), `{"model":"claude-test","max_tokens":100,
				"messages":[{"role":"user","content":[{"type":"text","text":"capital of France?"}]}]}`)
			if got := conn.Info().ProtocolVersion; (tc.name == "stateless era") != (got == mcp.Version20260728) {
				t.Errorf("negotiated %s", got)
			}
		})
	}
}
