package interop_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anymcp/anymcp/gateway"
)

// gwApprovals gates stdio__echo and sse__echo, and records each decision.
func gwApprovals() (gateway.Config, func() []gateway.Decision) {
	var mu sync.Mutex
	var got []gateway.Decision
	cfg := gateway.Config{Approvals: gateway.Approvals{
		Require: []string{"stdio__echo", "sse__echo"},
		OnDecision: func(d gateway.Decision) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, d)
		},
	}}
	return cfg, func() []gateway.Decision {
		mu.Lock()
		defer mu.Unlock()
		return append([]gateway.Decision(nil), got...)
	}
}

// Approvals asked of go-sdk's client by elicitation: the tool it
// approves runs, the one it refuses does not reach its upstream.
func TestGatewayGoSDKApproval(t *testing.T) {
	for _, v := range clientVersions {
		t.Run(v, func(t *testing.T) {
			cfg, decisions := gwApprovals()
			f := startGatewayFleet(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), bridgeTimeout)
			defer cancel()
			asked := make(chan string, 8)
			c := gosdk.NewClient(&gosdk.Implementation{Name: "interop-gosdk-approve", Version: "1"}, &gosdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
					asked <- req.Params.Message
					yes := strings.Contains(req.Params.Message, "stdio__echo")
					return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": yes}}, nil
				},
			})
			cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: f.url + "/mcp", MaxRetries: -1}, &gosdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "stdio__echo", Arguments: map[string]any{"text": "approved"}})
			if err != nil || res.IsError || goSDKText(res) != "approved" {
				t.Errorf("stdio__echo, approved: %q, %v", goSDKText(res), err)
			}
			res, err = cs.CallTool(ctx, &gosdk.CallToolParams{Name: "sse__echo", Arguments: map[string]any{"text": "refused"}})
			if err == nil && !res.IsError {
				t.Errorf("sse__echo, refused by the client, ran: %q", goSDKText(res))
			}
			res, err = cs.CallTool(ctx, &gosdk.CallToolParams{Name: "streamable__echo", Arguments: map[string]any{"text": "free"}})
			if err != nil || goSDKText(res) != "free" {
				t.Errorf("streamable__echo, not gated: %q, %v", goSDKText(res), err)
			}
			if n := len(asked); n != 2 {
				t.Errorf("the client was asked %d times, want 2 (once per gated call)", n)
			}
			if n := f.sse.Server().Stats().ToolCalls["echo"]; n != 0 {
				t.Errorf("the sse upstream ran a refused echo %d times", n)
			}
			checkDecisions(t, decisions(), map[string]bool{"stdio__echo": true, "sse__echo": false}, "client")
		})
	}
}

// mcp-go's /sse client declares no elicitation: the policy's default
// (deny) decides, and the gated tool never reaches its upstream.
func TestGatewayMCPGoApproval(t *testing.T) {
	cfg, decisions := gwApprovals()
	f := startGatewayFleet(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), bridgeTimeout)
	defer cancel()
	c, err := mcpgoclient.NewSSEMCPClient(f.url+"/sse", mcpgotransport.WithHeaders(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = "2024-11-05"
	init.Params.ClientInfo = mcpgo.Implementation{Name: "interop-mcpgo-approve", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "sse__echo"
	req.Params.Arguments = map[string]any{"text": "refused"}
	res, err := c.CallTool(ctx, req)
	if err == nil && !res.IsError {
		t.Errorf("sse__echo, gated, with no one to ask, ran: %+v", res.Content)
	}
	if n := f.sse.Server().Stats().ToolCalls["echo"]; n != 0 {
		t.Errorf("the sse upstream ran a denied echo %d times", n)
	}
	checkDecisions(t, decisions(), map[string]bool{"sse__echo": false}, "policy")
}

// checkDecisions checks that got holds one decision per tool of want,
// with want's outcome, made by by.
func checkDecisions(t *testing.T, got []gateway.Decision, want map[string]bool, by string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("decisions %+v, want %d", got, len(want))
	}
	for _, d := range got {
		approved, ok := want[d.Tool]
		if !ok || d.Approved != approved || d.By != by {
			t.Errorf("decision %+v, want tool in %v approved as listed, by %s", d, want, by)
		}
	}
}
