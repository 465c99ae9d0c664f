package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/spf13/cobra"
)

// callCommand is `mcpcall call METHOD`: any JSON-RPC request, raw.
func (c *cli) callCommand() *cobra.Command {
	var params string
	var notification bool
	cmd := &cobra.Command{
		Use:   "call METHOD TARGET",
		Short: "Send any JSON-RPC request (raw params in, raw result out)",
		Long: `Send the request METHOD with --params (a JSON object, @file, or - for stdin)
and print its result as JSON. A JSON-RPC error answer exits 5; a tools/call
result with isError: true is printed and exits 1, as with tools call. With
--notification the message is sent as a notification and nothing is printed.`,
		Example: `  mcpcall call tools/list http://127.0.0.1:8080/mcp
  mcpcall call resources/subscribe --params '{"uri":"test://static/text"}' myserver
  mcpcall call notifications/roots/list_changed --notification myserver`,
		ValidArgsFunction: c.completeTarget(1),
		Args:              c.targetArgs(1, 1),
		RunE: c.connected(func(ctx context.Context, s *session, own []string) error {
			var p json.RawMessage
			if params != "" {
				var err error
				if p, err = readJSONArg("--params", params, c.stdin); err != nil {
					return err
				}
			}
			if notification {
				return s.conn.Notify(ctx, own[0], p)
			}
			var raw json.RawMessage
			err := s.conn.Call(ctx, own[0], p, &raw, s.callOptions()...)
			s.progress.finish()
			if err != nil {
				return s.callFailed(ctx, err)
			}
			if c.f.json {
				err = s.writeResult(raw)
			} else {
				if len(raw) == 0 {
					raw = json.RawMessage("null")
				}
				err = writeIndented(c.stdout, raw)
			}
			if err != nil {
				return err
			}
			return toolErrorOf(own[0], raw)
		}),
	}
	cmd.Flags().StringVar(&params, "params", "", "the params as a JSON object, @file, or - for stdin")
	cmd.Flags().BoolVar(&notification, "notification", false, "send a notification (no id, no answer)")
	c.onTarget(cmd)
	return cmd
}

// toolErrorOf is the exit of a raw call whose result is a tools/call
// result with isError: true, as tools call has it; nil for anything else.
func toolErrorOf(method string, raw json.RawMessage) error {
	if method != "tools/call" {
		return nil
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(raw, &res) != nil || !res.IsError {
		return nil
	}
	return &exitError{code: exitToolError, kind: kindToolError, err: errors.New("tools/call answered isError: true")}
}
