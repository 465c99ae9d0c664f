// Command anymcp-conformance-client is the client program that the official
// MCP conformance suite (@modelcontextprotocol/conformance) drives to test
// anymcp's client side.
//
// The suite starts a test server for one scenario, then runs
//
//	<command> <server-url>
//
// with MCP_CONFORMANCE_SCENARIO set to the scenario's name (and, for a few
// scenarios, MCP_CONFORMANCE_CONTEXT set to a JSON object of extra data). The
// program connects with client.Dial, does what the scenario asks for, and
// exits 0 when it got what it expected; the suite grades the exchange it saw
// on its side. Everything the library logs goes to stderr, which the suite
// keeps with the results.
//
// It can be run by hand against a scenario server started with
// `conformance client --scenario NAME` (interactive mode, no --command):
//
//	MCP_CONFORMANCE_SCENARIO=sse-retry anymcp-conformance-client http://localhost:PORT
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

// scenario is what the program does against one scenario's server.
type scenario func(ctx context.Context, serverURL string) error

// scenarios maps the suite's scenario names to what the client does. Names
// the suite has spelled two ways are both listed.
var scenarios = map[string]scenario{
	"initialize":                          listTools,
	"tools_call":                          toolsCall,
	"tools-call":                          toolsCall,
	"elicitation-sep1034-client-defaults": elicitationDefaults,
	"elicitation-defaults":                elicitationDefaults,
	"sse-retry":                           sseRetry,
}

func main() {
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if len(os.Args) != 2 || name == "" {
		fmt.Fprintln(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=<scenario> anymcp-conformance-client <server-url>")
		fmt.Fprintln(os.Stderr, "scenarios with their own steps:", strings.Join(known(), ", "))
		fmt.Fprintln(os.Stderr, "any other scenario (auth/* included): connect, list tools, call test-tool if listed")
		os.Exit(2)
	}
	run, ok := scenarios[name]
	if !ok {
		run = generic
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	start := time.Now()
	if err := run(ctx, os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: FAILED after %v: %v\n", name, time.Since(start).Round(time.Millisecond), err)
		os.Exit(1)
	}
	fmt.Printf("scenario %s: done in %v\n", name, time.Since(start).Round(time.Millisecond))
}

func known() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// dial connects with the options every scenario shares: a name the suite's
// checks can see, and the library's logs (retries, reconnects, resumptions)
// on stderr.
func dial(ctx context.Context, serverURL string, opts ...client.Option) (*client.Conn, error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts = append([]client.Option{
		client.WithClientInfo("anymcp-conformance-client", client.Version),
		client.WithLogger(logger),
	}, opts...)
	conn, err := client.Dial(ctx, client.URL(serverURL), opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", serverURL, err)
	}
	info := conn.Info()
	fmt.Printf("connected: transport %s, protocol %s, server %s %s\n",
		info.Transport, info.ProtocolVersion, info.ServerInfo.Name, info.ServerInfo.Version)
	if info.Negotiation != nil {
		fmt.Print(info.Negotiation.String())
		fmt.Println()
	}
	return conn, nil
}

// closeConn closes conn and reports a failure to close only when the scenario
// itself went well.
func closeConn(conn *client.Conn, err *error) {
	if cerr := conn.Close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("close: %w", cerr)
	}
}

func tools(ctx context.Context, conn *client.Conn) ([]mcp.Tool, error) {
	all, err := conn.AllTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name
	}
	fmt.Printf("tools: %s\n", strings.Join(names, ", "))
	return all, nil
}

func hasTool(all []mcp.Tool, name string) bool {
	for _, t := range all {
		if t.Name == name {
			return true
		}
	}
	return false
}

// callTool calls name and fails when the tool reports an error.
func callTool(ctx context.Context, conn *client.Conn, name string, args any) (*mcp.CallToolResult, error) {
	res, err := conn.CallTool(ctx, name, args)
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	fmt.Printf("tools/call %s: %s\n", name, text(res))
	if res.IsError {
		return res, fmt.Errorf("tools/call %s: the tool reported an error: %s", name, text(res))
	}
	return res, nil
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		} else {
			parts = append(parts, "["+c.Type+"]")
		}
	}
	return strings.Join(parts, " ")
}

// listTools: the handshake (the suite checks protocolVersion and clientInfo),
// one tools/list, and a clean close.
func listTools(ctx context.Context, serverURL string) (err error) {
	conn, err := dial(ctx, serverURL)
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	_, err = tools(ctx, conn)
	return err
}

// toolsCall calls add_numbers with two numbers and checks the sum it reports.
func toolsCall(ctx context.Context, serverURL string) (err error) {
	conn, err := dial(ctx, serverURL)
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	all, err := tools(ctx, conn)
	if err != nil {
		return err
	}
	if !hasTool(all, "add_numbers") {
		return errors.New("the server lists no add_numbers tool")
	}
	res, err := callTool(ctx, conn, "add_numbers", map[string]any{"a": 5, "b": 3})
	if err != nil {
		return err
	}
	if !strings.Contains(text(res), "8") {
		return fmt.Errorf("add_numbers(5, 3) answered %q", text(res))
	}
	return nil
}

// elicitationDefaults declares form elicitation and accepts the server's
// form as a user would who leaves every field at the value it shows: the
// answer carries each property's default from the requested schema.
func elicitationDefaults(ctx context.Context, serverURL string) (err error) {
	conn, err := dial(ctx, serverURL, client.WithElicitation(acceptDefaults))
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	all, err := tools(ctx, conn)
	if err != nil {
		return err
	}
	const name = "test_client_elicitation_defaults"
	if !hasTool(all, name) {
		return fmt.Errorf("the server lists no %s tool", name)
	}
	_, err = callTool(ctx, conn, name, map[string]any{})
	return err
}

// acceptDefaults answers a form elicitation with "accept" and the default of
// every property of the requested schema that has one.
func acceptDefaults(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	fmt.Printf("elicitation/create: %q, schema %s\n", p.Message, p.RequestedSchema)
	var schema struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if len(p.RequestedSchema) > 0 {
		if err := json.Unmarshal(p.RequestedSchema, &schema); err != nil {
			return nil, fmt.Errorf("requestedSchema: %w", err)
		}
	}
	content := map[string]any{}
	for name, prop := range schema.Properties {
		if len(prop.Default) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(prop.Default, &v); err != nil {
			return nil, fmt.Errorf("default of %s: %w", name, err)
		}
		content[name] = v
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// sseRetry calls test_reconnection. The server answers the call with an SSE
// stream that carries only a priming event (an id and retry: 500) and then
// ends; the answer comes on the GET stream that resumes it with Last-Event-ID.
// The suite times the GET against the server's retry: (450–700 ms).
func sseRetry(ctx context.Context, serverURL string) (err error) {
	conn, err := dial(ctx, serverURL)
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	all, err := tools(ctx, conn)
	if err != nil {
		return err
	}
	const name = "test_reconnection"
	if !hasTool(all, name) {
		return fmt.Errorf("the server lists no %s tool", name)
	}
	start := time.Now()
	_, err = callTool(ctx, conn, name, map[string]any{})
	fmt.Printf("tools/call %s answered after %v\n", name, time.Since(start).Round(time.Millisecond))
	return err
}

// generic serves scenarios with no steps of their own, the authorization
// ones among them: connect (authorizing as the scenario's server asks, see
// authOption), list the tools, and call test-tool when the server has it.
func generic(ctx context.Context, serverURL string) (err error) {
	opt, err := authOption(os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	if err != nil {
		return err
	}
	conn, err := dial(ctx, serverURL, opt)
	if err != nil {
		return err
	}
	defer closeConn(conn, &err)
	all, err := tools(ctx, conn)
	if err != nil {
		return err
	}
	if hasTool(all, "test-tool") {
		_, err = callTool(ctx, conn, "test-tool", map[string]any{})
	}
	return err
}
