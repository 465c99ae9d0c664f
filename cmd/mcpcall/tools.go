package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

func (c *cli) toolsCommand() *cobra.Command {
	tools := &cobra.Command{Use: "tools", Short: "List and call the server's tools; with --all, every configured server's"}
	tools.AddCommand(c.toolsListCommand(), c.toolsCallCommand(), c.toolsSearchCommand(), c.toolsExportCommand())
	return tools
}

func (c *cli) toolsListCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "list TARGET | --all",
		Short: "List every tool (all pages) with its parameters",
		Long:  "List every tool (all pages) with its parameters.\n\n" + fleetHelp,
		Example: `  mcpcall tools list http://127.0.0.1:8080/mcp
  mcpcall tools list --json myserver | jq -r '.tools[].name'
  mcpcall tools list -- npx -y @modelcontextprotocol/server-everything
  mcpcall tools list --all --connect-timeout 5s`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.fleetArgs(&all, 0, c.targetArgs(0, 0)),
		RunE: c.orFleet(&all, func(ctx context.Context, _ []string) error { return c.fleetList(ctx) }, c.connected(func(ctx context.Context, s *session, _ []string) error {
			raw, err := listAll(s.conn.RawTools(ctx))
			if err != nil {
				return err
			}
			if c.f.json {
				return s.writeList("tools", raw)
			}
			tools, err := decodeItems[mcp.Tool]("tools/list", raw)
			if err != nil {
				return err
			}
			for _, t := range tools {
				fmt.Fprintln(c.stdout, signature(t.Name, parseSchema(t.InputSchema)))
				if d := firstLine(t.Description); d != "" {
					fmt.Fprintln(c.stdout, "    "+d)
				}
			}
			return nil
		})),
	}
	cmd.Flags().BoolVar(&all, "all", false, "list the tools of every server of the config files, under their fleet names")
	c.onTarget(cmd)
	return cmd
}

func (c *cli) toolsCallCommand() *cobra.Command {
	var argsFlag string
	var noValidate, asTask, all bool
	cmd := &cobra.Command{
		Use:   "call NAME [key=value | key:=json]... TARGET | --all",
		Short: "Call a tool; exit status 1 when the tool answers isError",
		Long: `Call the tool NAME with arguments and print its result: text as text, images,
audio and blobs summarised, structuredContent pretty-printed unless a text
block already is its JSON (or its one member's value); with --json the whole
result plus "meta". A tool that runs and fails (isError: true) exits 1;
an unknown tool or arguments the inputSchema refuses exit 5 before anything is
called, with the closest tool names suggested (never called in its place).

Ctrl-C or --timeout gives the call up and cancels it: the server is sent
notifications/cancelled (revisions up to 2025-11-25, and 2026-07-28 over
stdio), except a 2026-07-28 server over HTTP, which sees the call's stream
closed instead: that revision's way to cancel.

A call the server runs as a task is waited for: each status of the task goes
to stderr ("task ID: working"), and the result is printed as for any call. Should
the wait end first (Ctrl-C, --timeout), the task may still run: mcpcall tasks
result ID TARGET waits for it again.

` + argsHelp + "\n\n" + fleetHelp,
		Example: `  mcpcall tools call echo text=hi http://127.0.0.1:8080/mcp
  mcpcall tools call add a=1 b=2 -- ./my-server --stdio
  mcpcall tools call search --args '{"query":"mcp","limit":5}' myserver
  echo '{"text":"hi"}' | mcpcall tools call echo --json myserver | jq -r '.content[0].text'
  mcpcall tools call tag_issue id:=42 labels=bug labels=ui myserver
  mcpcall tools call github__create_issue title=bug --all`,
		ValidArgsFunction: c.completeToolCall,
		Args:              c.fleetArgs(&all, 1, c.targetArgs(1, -1)),
		RunE: c.orFleet(&all, func(ctx context.Context, own []string) error {
			return c.fleetCall(ctx, own[0], own[1:], argsFlag, noValidate, asTask)
		}, c.connected(func(ctx context.Context, s *session, own []string) error {
			return c.callTool(ctx, s, own[0], own[1:], argsFlag, noValidate, asTask)
		})),
	}
	cmd.Flags().BoolVar(&all, "all", false, "NAME is a fleet name of the servers of the config files (see tools list --all): call it on its server")
	cmd.Flags().StringVar(&argsFlag, "args", "", "the arguments as a JSON object, @file, or - for stdin")
	cmd.Flags().BoolVar(&asTask, "task", false, "run the call as a task where the tool allows it (revision 2025-11-25; a tool that must run as one always does)")
	cmd.Flags().BoolVar(&noValidate, "no-validate", false, "send the arguments without looking the tool up or checking its inputSchema (key=value values stay strings)")
	c.onTarget(cmd)
	return cmd
}

// callTool runs tools call once connected.
func (c *cli) callTool(ctx context.Context, s *session, name string, pairList []string, argsFlag string, noValidate, asTask bool) error {
	pairs, err := parsePairs(pairList)
	if err != nil {
		return err
	}
	var sch schema
	if !noValidate {
		tool, err := s.findTool(ctx, name)
		if err != nil {
			return err
		}
		sch = parseSchema(tool.InputSchema)
	}
	// stdin is read only for a tool that takes arguments, so that a tool
	// without any never waits on a stdin that stays open.
	takesArgs := noValidate || len(sch.propertyNames()) > 0
	base, err := c.baseArgs(argsFlag, len(pairs) > 0 || !takesArgs)
	if err != nil {
		return err
	}
	obj, arguments, err := callArgs(base, pairs, sch)
	if err != nil {
		return err
	}
	if !noValidate {
		if problems := sch.validate(obj); len(problems) > 0 {
			return invalidParamsErr("tool %s: %s", name, strings.Join(problems, "; "))
		}
	}
	opts := s.callOptions()
	if asTask {
		opts = append(opts, client.AsTask())
	}
	var raw json.RawMessage
	err = s.conn.Call(ctx, "tools/call", &mcp.CallToolParams{Name: name, Arguments: arguments}, &raw, opts...)
	s.progress.finish()
	if err != nil {
		return s.callFailed(ctx, err)
	}
	return c.printToolResult(s, name, raw)
}

// printToolResult prints what a tool answered, and says by the error
// whether it answered isError.
func (c *cli) printToolResult(s *session, name string, raw json.RawMessage) error {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return c.undecodedResult(s, name, raw, err)
	}
	var err error
	if c.f.json {
		err = s.writeResult(raw)
	} else {
		printContent(c.stdout, res.Content)
		if !carriedByText(res.Content, res.StructuredContent) { // said once (structured.go)
			printStructured(c.stdout, res.StructuredContent)
		}
	}
	if err != nil {
		return err
	}
	if res.IsError {
		return &exitError{code: exitToolError, kind: kindToolError, err: fmt.Errorf("tool %s answered isError: true", name)}
	}
	return nil
}

// undecodedResult handles a tools/call result that does not decode as a
// CallToolResult (a field of the wrong type, say): the tool has run, so
// what the server sent is printed, as received with --json, else each
// content block that decodes as usual and the others as JSON, and the
// error is a *client.ResultError, exit 5 like any answer that does not
// decode, never 4, which scripts take as a connection failure to retry:
// the tool would run again.
func (c *cli) undecodedResult(s *session, name string, raw json.RawMessage, decodeErr error) error {
	var err error
	if c.f.json {
		err = s.writeResult(raw)
	} else {
		var parts struct {
			Content           []json.RawMessage `json:"content"`
			StructuredContent json.RawMessage   `json:"structuredContent"`
		}
		if json.Unmarshal(raw, &parts) != nil {
			err = writeIndented(c.stdout, raw)
		} else {
			for _, block := range parts.Content {
				var content mcp.Content
				if json.Unmarshal(block, &content) == nil {
					printContent(c.stdout, []mcp.Content{content})
				} else {
					printStructured(c.stdout, block)
				}
			}
			printStructured(c.stdout, parts.StructuredContent)
		}
	}
	if err != nil {
		return err
	}
	return &client.ResultError{Method: "tools/call", Err: fmt.Errorf("tool %s ran, but its result is not a valid tools/call result (%w); it is shown as received", name, decodeErr)}
}

// baseArgs reads --args, or a JSON object on stdin when nothing else gives
// arguments (skipStdin false) and stdin is a pipe or a file.
func (c *cli) baseArgs(flag string, skipStdin bool) (json.RawMessage, error) {
	if flag != "" {
		return readJSONArg("--args", flag, c.stdin)
	}
	if skipStdin || !c.stdinHasData() {
		return nil, nil
	}
	data, err := readAllStdin(c.stdin)
	if err != nil {
		return nil, usageErr("reading arguments from stdin: %v", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	return checkObject(data, "arguments on stdin")
}

// findTool looks the tool up; an unknown name is an error that suggests
// the closest names. It lists through the Conn, which keeps what the
// listing says of each tool: that a tool must run as a task (the call then
// asks for one), that it is safe to send again, which parameters go into
// headers.
func (s *session) findTool(ctx context.Context, name string) (*mcp.Tool, error) {
	tools, err := s.conn.AllTools(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(tools))
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i], nil
		}
		names[i] = tools[i].Name
	}
	msg := fmt.Sprintf("unknown tool %q", name)
	if near := closest(name, names, 3); len(near) > 0 {
		msg += "; did you mean " + quoteList(near) + "?"
	} else if len(names) > 0 {
		msg += " (`mcpcall tools list` shows the " + fmt.Sprint(len(names)) + " there are)"
	} else {
		msg += ": the server has no tools"
	}
	return nil, invalidParamsErr("%s", msg)
}
