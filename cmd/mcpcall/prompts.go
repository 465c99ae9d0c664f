package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

func (c *cli) promptsCommand() *cobra.Command {
	prompts := &cobra.Command{Use: "prompts", Short: "List and render the server's prompts"}
	prompts.AddCommand(&cobra.Command{
		Use:   "list TARGET",
		Short: "List every prompt (all pages) with its arguments",
		Example: `  mcpcall prompts list http://127.0.0.1:8080/mcp
  mcpcall prompts list --json myserver | jq -r '.prompts[].name'`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.targetArgs(0, 0),
		RunE: c.connected(func(ctx context.Context, s *session, _ []string) error {
			raw, err := listAll(s.conn.RawPrompts(ctx))
			if err != nil {
				return err
			}
			if c.f.json {
				return s.writeList("prompts", raw)
			}
			list, err := decodeItems[mcp.Prompt]("prompts/list", raw)
			if err != nil {
				return err
			}
			for _, p := range list {
				args := make([]string, len(p.Arguments))
				for i, a := range p.Arguments {
					args[i] = a.Name
					if !a.Required {
						args[i] += "?"
					}
				}
				fmt.Fprintf(c.stdout, "%s(%s)\n", p.Name, strings.Join(args, ", "))
				if d := firstLine(firstNonEmpty(p.Description, p.Title)); d != "" {
					fmt.Fprintln(c.stdout, "    "+d)
				}
			}
			return nil
		}),
	})
	var argsFlag string
	get := &cobra.Command{
		Use:   "get NAME [key=value]... TARGET",
		Short: "Render a prompt with arguments (all strings)",
		Long: `Render the prompt NAME. Arguments are key=value pairs (prompt arguments are
strings), or a JSON object of strings with --args JSON|@file|-. Unknown prompts,
unknown arguments and missing required ones exit 5 before anything is sent.`,
		Example: `  mcpcall prompts get greet name=Ada style=formal http://127.0.0.1:8080/mcp
  mcpcall prompts get --json summarize --args '{"topic":"MCP"}' myserver`,
		ValidArgsFunction: c.completePromptGet,
		Args:              c.targetArgs(1, -1),
		RunE: c.connected(func(ctx context.Context, s *session, own []string) error {
			return c.getPrompt(ctx, s, own[0], own[1:], argsFlag)
		}),
	}
	get.Flags().StringVar(&argsFlag, "args", "", "the arguments as a JSON object of strings, @file, or - for stdin")
	prompts.AddCommand(get)
	c.onTarget(prompts.Commands()...)
	return prompts
}

func (c *cli) getPrompt(ctx context.Context, s *session, name string, pairList []string, argsFlag string) error {
	args := map[string]string{}
	if argsFlag != "" {
		raw, err := readJSONArg("--args", argsFlag, c.stdin)
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return usageErr("--args: %v", err)
		}
		for k, v := range obj {
			if str, ok := v.(string); ok {
				args[k] = str
			} else {
				args[k] = compactJSON(v)
			}
		}
	}
	for _, kv := range pairList {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageErr("argument %q is not key=value", kv)
		}
		args[k] = v
	}
	prompt, err := s.findPrompt(ctx, name)
	if err != nil {
		return err
	}
	if err := checkPromptArgs(prompt, args); err != nil {
		return err
	}
	var raw json.RawMessage
	err = s.conn.Call(ctx, "prompts/get", &mcp.GetPromptParams{Name: name, Arguments: args}, &raw, s.callOptions()...)
	s.progress.finish()
	if err != nil {
		return s.callFailed(ctx, err)
	}
	if c.f.json {
		return s.writeResult(raw)
	}
	var res mcp.GetPromptResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return &client.ResultError{Method: "prompts/get", Err: err}
	}
	if res.Description != "" {
		fmt.Fprintln(c.stdout, res.Description)
		fmt.Fprintln(c.stdout)
	}
	for _, m := range res.Messages {
		fmt.Fprintf(c.stdout, "[%s]\n", m.Role)
		printContent(c.stdout, []mcp.Content{m.Content})
	}
	return nil
}

// findPrompt looks a prompt up, suggesting the closest names when unknown.
func (s *session) findPrompt(ctx context.Context, name string) (*mcp.Prompt, error) {
	raw, err := listAll(s.conn.RawPrompts(ctx))
	if err != nil {
		return nil, err
	}
	list, err := decodeItems[mcp.Prompt]("prompts/list", raw)
	if err != nil {
		return nil, fmt.Errorf("prompts/list: %w", err)
	}
	names := make([]string, len(list))
	for i := range list {
		if list[i].Name == name {
			return &list[i], nil
		}
		names[i] = list[i].Name
	}
	msg := fmt.Sprintf("unknown prompt %q", name)
	if near := closest(name, names, 3); len(near) > 0 {
		msg += "; did you mean " + quoteList(near) + "?"
	}
	return nil, invalidParamsErr("%s", msg)
}

// checkPromptArgs refuses unknown arguments and missing required ones.
func checkPromptArgs(p *mcp.Prompt, args map[string]string) error {
	var problems []string
	known := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		known[i] = a.Name
		if _, ok := args[a.Name]; a.Required && !ok {
			problems = append(problems, fmt.Sprintf("argument %q is required", a.Name))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if slices.Contains(known, k) {
			continue
		}
		msg := fmt.Sprintf("argument %q: the prompt takes no such argument", k)
		if near := closest(k, known, 3); len(near) > 0 {
			msg += "; did you mean " + quoteList(near) + "?"
		}
		problems = append(problems, msg)
	}
	if len(problems) > 0 {
		return invalidParamsErr("prompt %s: %s", p.Name, strings.Join(problems, "; "))
	}
	return nil
}
