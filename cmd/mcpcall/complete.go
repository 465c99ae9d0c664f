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

// completeCommand is `mcpcall complete`: the server's completion of a
// prompt or resource-template argument (completion/complete). The shell
// completion of mcpcall itself is `mcpcall completion`.
func (c *cli) completeCommand() *cobra.Command {
	var prompt, resource string
	var contextArgs []string
	cmd := &cobra.Command{
		Use:   "complete (--prompt NAME | --resource URI_TEMPLATE) ARG=PARTIAL TARGET",
		Short: "Ask the server to complete an argument of a prompt or resource template",
		Long: `Ask the server for the values an argument of a prompt (--prompt) or of a
resource template (--resource) can take, given what is typed so far. Values are
printed one a line; --json prints the completion/complete result.`,
		Example: `  mcpcall complete --prompt greet style=f http://127.0.0.1:8080/mcp
  mcpcall complete --resource 'test://items/{id}' id=1 --json myserver
  mcpcall complete --prompt code_review language=py --context framework=django myserver`,
		ValidArgsFunction: c.completeTarget(1),
		Args:              c.targetArgs(1, 1),
		RunE: c.connected(func(ctx context.Context, s *session, own []string) error {
			var p mcp.CompleteParams
			switch {
			case (prompt == "") == (resource == ""):
				return usageErr("complete: give exactly one of --prompt NAME and --resource URI_TEMPLATE")
			case prompt != "":
				p.Ref = mcp.Reference{Type: mcp.RefPrompt, Name: prompt}
			default:
				p.Ref = mcp.Reference{Type: mcp.RefResource, URI: resource}
			}
			name, value, ok := strings.Cut(own[0], "=")
			if !ok || name == "" {
				return usageErr("complete: want ARG=PARTIAL, got %q", own[0])
			}
			p.Argument = mcp.CompleteArgument{Name: name, Value: value}
			if len(contextArgs) > 0 {
				p.Context = &mcp.CompleteContext{Arguments: map[string]string{}}
				for _, kv := range contextArgs {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return usageErr("--context %q: want key=value", kv)
					}
					p.Context.Arguments[k] = v
				}
			}
			var raw json.RawMessage
			if err := s.conn.Call(ctx, "completion/complete", &p, &raw); err != nil {
				return s.callFailed(ctx, err)
			}
			if c.f.json {
				return s.writeResult(raw)
			}
			var res mcp.CompleteResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return &client.ResultError{Method: "completion/complete", Err: err}
			}
			for _, v := range res.Completion.Values {
				fmt.Fprintln(c.stdout, v)
			}
			if res.Completion.HasMore || res.Completion.Total != nil && *res.Completion.Total > len(res.Completion.Values) {
				c.note("(the server has more values than it sent)")
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&prompt, "prompt", "", "complete an argument of this prompt")
	cmd.Flags().StringVar(&resource, "resource", "", "complete a variable of this resource template")
	cmd.Flags().StringArrayVar(&contextArgs, "context", nil, "an argument already chosen, key=value (repeatable)")
	c.onTarget(cmd)
	return cmd
}
