package main

// The scenarios of revision 2026-07-28 (stateless requests, request
// metadata headers, multi round-trip requests, schema preservation).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

func init() {
	scenarios["sep-2322-client-request-state"] = requestState
	scenarios["http-standard-headers"] = standardHeaders
	scenarios["http-invalid-tool-headers"] = callEveryTool
	scenarios["http-custom-headers"] = contextToolCalls
	scenarios["json-schema-2020-12-preservation"] = schemaEcho
	scenarios["request-metadata"] = metadata
}

// metadata connects (the server refuses the first request with -32022 and
// the client must try again with a revision it lists), lists the tools and
// calls the first, with every capability declared so that the suite can
// check how each is spelled in _meta.
func metadata(ctx context.Context, serverURL string) (err error) {
	conn, err := dial(ctx, serverURL,
		client.WithRoots(func(context.Context) ([]mcp.Root, error) { return nil, nil }),
		client.WithSampling(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return nil, fmt.Errorf("no model here")
		}),
		client.WithElicitation(acceptDefaults))
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	all, err := tools(ctx, conn)
	if err != nil {
		return err
	}
	if len(all) > 0 {
		_, err = callTool(ctx, conn, all[0].Name, map[string]any{})
	}
	return err
}

// requestState runs the multi round-trip tools: each answers
// input_required (an elicitation, with or without requestState) before it
// completes; the unrelated one, called in between, must carry neither the
// answers nor the state of another call.
func requestState(ctx context.Context, serverURL string) (err error) {
	confirm := func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		fmt.Printf("elicitation/create: %q\n", p.Message)
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"confirmed": true}}, nil
	}
	conn, err := dial(ctx, serverURL, client.WithElicitation(confirm))
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	if _, err := tools(ctx, conn); err != nil {
		return err
	}
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
		if _, err := callTool(ctx, conn, name, map[string]any{}); err != nil {
			return err
		}
	}
	return nil
}

// standardHeaders exercises every request that carries Mcp-Method and
// Mcp-Name: each listed tool, resource and prompt once.
func standardHeaders(ctx context.Context, serverURL string) (err error) {
	conn, err := dial(ctx, serverURL)
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	all, err := tools(ctx, conn)
	if err != nil {
		return err
	}
	for _, t := range all {
		if _, err := callTool(ctx, conn, t.Name, map[string]any{}); err != nil {
			return err
		}
	}
	resources, err := conn.AllResources(ctx)
	if err != nil {
		return fmt.Errorf("resources/list: %w", err)
	}
	for _, r := range resources {
		if _, err := conn.ReadResource(ctx, r.URI); err != nil {
			return fmt.Errorf("resources/read %s: %w", r.URI, err)
		}
		fmt.Printf("resources/read %s: ok\n", r.URI)
	}
	prompts, err := conn.AllPrompts(ctx)
	if err != nil {
		return fmt.Errorf("prompts/list: %w", err)
	}
	for _, p := range prompts {
		if _, err := conn.GetPrompt(ctx, p.Name, nil); err != nil {
			return fmt.Errorf("prompts/get %s: %w", p.Name, err)
		}
		fmt.Printf("prompts/get %s: ok\n", p.Name)
	}
	return nil
}

// callEveryTool calls every tool the client keeps from tools/list: one
// whose x-mcp-header annotations break the rules must have been left out.
func callEveryTool(ctx context.Context, serverURL string) (err error) {
	conn, err := dial(ctx, serverURL)
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	all, err := tools(ctx, conn)
	if err != nil {
		return err
	}
	for _, t := range all {
		if _, err := conn.CallTool(ctx, t.Name, map[string]any{}); err != nil {
			return fmt.Errorf("tools/call %s: %w", t.Name, err)
		}
	}
	return nil
}

// contextToolCalls makes the tool calls MCP_CONFORMANCE_CONTEXT lists,
// with their arguments, after tools/list (which says which parameters go
// into headers).
func contextToolCalls(ctx context.Context, serverURL string) (err error) {
	var sc struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &sc); err != nil {
		return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	conn, err := dial(ctx, serverURL)
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	if _, err := tools(ctx, conn); err != nil {
		return err
	}
	for _, tc := range sc.ToolCalls {
		if _, err := callTool(ctx, conn, tc.Name, tc.Arguments); err != nil {
			return err
		}
	}
	return nil
}

// schemaEcho sends the focal tool's inputSchema back, byte for byte as
// tools/list gave it, to the echo tool.
func schemaEcho(ctx context.Context, serverURL string) (err error) {
	conn, err := dial(ctx, serverURL)
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	all, err := tools(ctx, conn)
	if err != nil {
		return err
	}
	var schema json.RawMessage
	echo := ""
	for _, t := range all {
		if t.Name == "json_schema_2020_12_tool" {
			schema = t.InputSchema
		} else {
			echo = t.Name
		}
	}
	if schema == nil || echo == "" {
		return fmt.Errorf("the server lists no json_schema_2020_12_tool and echo tool")
	}
	args, err := json.Marshal(map[string]json.RawMessage{"schema": schema})
	if err != nil {
		return err
	}
	_, err = callTool(ctx, conn, echo, json.RawMessage(args))
	return err
}
