package main

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/mcpconfig"
)

// Shell completion (`mcpcall completion bash|zsh|fish|powershell`, from
// cobra) knows the server names of the config files, and, once --server
// names one, that server's tools, prompts and resources, asked of the
// server itself within a few seconds.

// afterDash reports whether the word being completed follows `--` (a
// command line). Cobra parses the flags once with an extra "--" while
// completing, which leaves ArgsLenAtDash at len(args) when no dash was
// typed; a dash typed before some argument shows as a smaller value.
func afterDash(cmd *cobra.Command, args []string) bool {
	d := cmd.ArgsLenAtDash()
	return d >= 0 && d < len(args)
}

// completionDialLimit bounds connecting to a server to complete a name.
const completionDialLimit = 3 * time.Second

// serverNames lists the names the config files define (the ones in use),
// each with where it came from as its description.
func (c *cli) serverNames(prefix string) []string {
	locs := c.places.SearchOrder()
	if c.f.config != "" {
		locs = []mcpconfig.Location{c.places.File(c.f.config)}
	}
	entries, _ := c.places.Load(locs)
	var out []string
	for _, e := range entries {
		if !e.Shadowed && strings.HasPrefix(e.Name, prefix) {
			out = append(out, e.Name+"\t"+e.Label)
		}
	}
	return out
}

// completeTarget completes the target slot, which comes after own
// positional arguments: a server name.
func (c *cli) completeTarget(own int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if afterDash(cmd, args) {
			return nil, cobra.ShellCompDirectiveDefault // a command line: files
		}
		if c.f.server != "" || len(args) < own {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return c.serverNames(toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// withCompletionConn connects to the --server target to look names up.
func (c *cli) withCompletionConn(cmd *cobra.Command, fn func(ctx context.Context, s *session) []string) []string {
	if c.f.server == "" {
		return nil
	}
	t, err := c.configTarget(c.f.config, c.f.server)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionDialLimit)
	defer cancel()
	c.log = slog.New(slog.DiscardHandler)
	c.f.trace, c.f.verbose, c.f.json = "", false, true // nothing on the terminal but the answer
	c.f.connectTimeout = min(c.f.connectTimeout, completionDialLimit)
	if t.cmd != nil {
		t.cmd.Stderr = nil
	}
	s, err := c.dial(ctx, t)
	if err != nil {
		return nil
	}
	defer s.close(ctx)
	return fn(ctx, s)
}

// completeToolCall completes `tools call`: tool names first, then the
// tool's argument names as key=, given --server; else server names.
func (c *cli) completeToolCall(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if afterDash(cmd, args) {
		return nil, cobra.ShellCompDirectiveDefault
	}
	if c.f.server == "" {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return c.serverNames(toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	out := c.withCompletionConn(cmd, func(ctx context.Context, s *session) []string {
		raw, err := listAll(s.conn.RawTools(ctx))
		if err != nil {
			return nil
		}
		tools, err := decodeItems[mcp.Tool]("tools/list", raw)
		if err != nil {
			return nil
		}
		var names []string
		for _, t := range tools {
			if len(args) == 0 {
				if strings.HasPrefix(t.Name, toComplete) {
					names = append(names, t.Name+"\t"+firstLine(t.Description))
				}
				continue
			}
			if t.Name == args[0] {
				for _, p := range parseSchema(t.InputSchema).propertyNames() {
					if strings.HasPrefix(p+"=", toComplete) {
						names = append(names, p+"=")
					}
				}
			}
		}
		return names
	})
	if len(args) > 0 {
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completePromptGet completes prompt names given --server.
func (c *cli) completePromptGet(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 || c.f.server == "" {
		return c.completeTarget(1)(cmd, args, toComplete)
	}
	out := c.withCompletionConn(cmd, func(ctx context.Context, s *session) []string {
		raw, err := listAll(s.conn.RawPrompts(ctx))
		if err != nil {
			return nil
		}
		prompts, _ := decodeItems[mcp.Prompt]("prompts/list", raw)
		var names []string
		for _, p := range prompts {
			if strings.HasPrefix(p.Name, toComplete) {
				names = append(names, p.Name+"\t"+firstLine(p.Description))
			}
		}
		return names
	})
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeResourceRead completes resource URIs given --server.
func (c *cli) completeResourceRead(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 || c.f.server == "" {
		return c.completeTarget(1)(cmd, args, toComplete)
	}
	out := c.withCompletionConn(cmd, func(ctx context.Context, s *session) []string {
		raw, err := listAll(s.conn.RawResources(ctx))
		if err != nil {
			return nil
		}
		list, _ := decodeItems[mcp.Resource]("resources/list", raw)
		var uris []string
		for _, r := range list {
			if strings.HasPrefix(r.URI, toComplete) {
				uris = append(uris, r.URI+"\t"+r.Name)
			}
		}
		return uris
	})
	return out, cobra.ShellCompDirectiveNoFileComp
}
