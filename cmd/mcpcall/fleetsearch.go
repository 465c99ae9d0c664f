package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
)

// toolsSearchCommand is tools search QUERY --all.
func (c *cli) toolsSearchCommand() *cobra.Command {
	var all bool
	var limit int
	cmd := &cobra.Command{
		Use:   "search QUERY... --all",
		Short: "Print the tools of every configured server that best match a query",
		Long: `Print the tools that best match QUERY (its words, in any order), best first,
with their score: the fleet's ranking (BM25 over each tool's name, title and
description, docs/fleet.md). --limit bounds how many.

` + fleetHelp,
		Example: `  mcpcall tools search read a file --all
  mcpcall tools search --all --limit 3 --json "create issue" | jq -r '.matches[].name'`,
		Args: c.fleetArgs(&all, 1, nil),
		RunE: c.orFleet(&all, func(ctx context.Context, own []string) error {
			if limit < 1 {
				return usageErr("--limit %d: want 1 or more", limit)
			}
			return c.fleetSearch(ctx, strings.Join(own, " "), limit)
		}, c.runE(func(*cobra.Command, []string) error {
			return usageErr("tools search needs --all: it searches the servers of the config files")
		})),
	}
	cmd.Flags().BoolVar(&all, "all", false, "search the tools of every server of the config files")
	cmd.Flags().IntVar(&limit, "limit", 10, "print at most `N` matches")
	c.addFleetConnFlags(cmd)
	c.addAnswerFlags(cmd)
	return cmd
}

// fleetSearch is tools search QUERY --all: the best matches of the
// fleet's catalogue, best first.
func (c *cli) fleetSearch(ctx context.Context, query string, limit int) error {
	run, err := c.openFleet(nil)
	if err != nil {
		return err
	}
	defer run.close()
	cat, err := run.f.Tools(ctx)
	if err != nil {
		return err
	}
	failed := run.failures(cat.Errors)
	matches, err := run.f.SearchTools(ctx, query, limit)
	if err != nil {
		return err
	}
	tools := make([]fleetTool, len(matches))
	for i, m := range matches {
		score := m.Score
		tools[i] = newFleetTool(m.Tool)
		tools[i].Score = &score
	}
	if c.f.json {
		if err := c.writeAsSent(struct {
			Matches []fleetTool           `json:"matches"`
			Errors  map[string]fleetError `json:"errors"`
		}{tools, failed}); err != nil {
			return err
		}
	} else {
		if len(tools) == 0 && answered(run, failed) {
			c.note("no tool matches %q", query)
		}
		c.printFleetTools(tools)
	}
	c.reportFailures(failed)
	if !answered(run, failed) {
		return noneAnswered(failed)
	}
	return nil
}
