package interop_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/anymcp/anymcp/gateway"
)

// mcp-go's HTTP+SSE client (2024-11-05) through the gateway's /sse. Its
// SSE transport takes no server requests, so it declares no elicitation:
// an upstream's elicitation must then end the call, not hang it.
func TestGatewayMCPGoSSE(t *testing.T) {
	f := startGatewayFleet(t, gateway.Config{})
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
	init.Params.ClientInfo = mcpgo.Implementation{Name: "interop-mcpgo-sse", Version: "1"}
	ir, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if ir.ProtocolVersion != "2024-11-05" || ir.ServerInfo.Name != gateway.ServerName {
		t.Errorf("initialize: %s from %s, want 2024-11-05 from %s", ir.ProtocolVersion, ir.ServerInfo.Name, gateway.ServerName)
	}
	r := newGWReport()
	lt, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for _, tool := range lt.Tools {
		r.tools = append(r.tools, tool.Name)
	}
	call := func(name string, args map[string]any) (string, error) {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, content := range res.Content {
			if tc, ok := content.(mcpgo.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			return b.String(), errors.New("tool error: " + b.String())
		}
		return b.String(), nil
	}
	for _, s := range gwServers {
		text, err := call(s+"__echo", map[string]any{"text": gwEchoText(s)})
		if err != nil {
			t.Errorf("%s__echo: %v", s, err)
		}
		r.echo[s] = text
	}
	for _, s := range gwPromptServers {
		req := mcpgo.GetPromptRequest{}
		req.Params.Name = s + "__greet"
		req.Params.Arguments = map[string]string{"name": "Ann"}
		res, err := c.GetPrompt(ctx, req)
		if err != nil {
			t.Errorf("prompts/get %s__greet: %v", s, err)
			continue
		}
		for _, m := range res.Messages {
			if tc, ok := m.Content.(mcpgo.TextContent); ok {
				r.prompts[s] += tc.Text
			}
		}
	}
	for _, uri := range gwResources() {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(ctx, req)
		if err != nil {
			t.Errorf("resources/read %s: %v", uri, err)
			continue
		}
		for _, content := range res.Contents {
			if tc, ok := content.(mcpgo.TextResourceContents); ok {
				r.resources[uri] += tc.Text
			}
		}
	}
	// No elicitation declared: each upstream's elicit ends, refused or
	// declined, within the test's bound; never with the client's answer.
	for _, s := range gwElicitServers {
		text, err := call(s+"__elicit", map[string]any{"message": "who via " + s})
		if ctx.Err() != nil {
			t.Fatalf("%s__elicit hung: %v", s, ctx.Err())
		}
		if strings.Contains(text, "Ada") {
			t.Errorf("%s__elicit: %q, an answer no one gave", s, text)
		}
		if err == nil {
			t.Errorf("%s__elicit without the capability: %q, want a refusal", s, text)
		}
		// The stateless upstream's -32021 crosses the gateway as is.
		if s == "stateless" && !mcpgo.IsMissingRequiredClientCapability(err) {
			t.Errorf("stateless__elicit: %v, want -32021 (missing client capability)", err)
		}
		t.Logf("%s__elicit without the capability: %q, %v", s, text, err)
	}
	checkGatewayReport(t, r, false)
	f.checkUpstreamsHit(t, 1)
}
