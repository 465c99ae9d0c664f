package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/llm"
)

// exportFormats are the --format values of tools export, each an llm
// Provider.
var exportFormats = []llm.Provider{llm.OpenAIChat, llm.OpenAIResponses, llm.Anthropic, llm.Gemini, llm.GeminiOpenAPI, llm.OpenAICompatible}

// kindNotRepresented is the error kind of a tools export that could not
// represent every tool as asked.
const kindNotRepresented = "not_represented"

func (c *cli) toolsExportCommand() *cobra.Command {
	var (
		format    string
		strict    bool
		all       bool
		maxTokens int
	)
	names := make([]string, len(exportFormats))
	for i, p := range exportFormats {
		names[i] = string(p)
	}
	export := func(ctx context.Context, src llm.Source) error {
		return c.exportTools(ctx, src, format, strict, maxTokens)
	}
	cmd := &cobra.Command{
		Use:   "export --format FORMAT [--strict] [--max-tokens N] TARGET | --all",
		Short: "Print the tools as an LLM provider's request takes them, with a report of every change",
		Long: "Print the server's tools as one JSON document, {\"tools\":[...],\"report\":[...]}: \"tools\" is the provider's " +
			"tools array exactly as its request takes it, \"report\" says per tool how it is sent (strict, loose, omitted) and what was " +
			"changed, and why. The exit status is 0 when every tool is represented as asked, 1 when one is omitted, or loose though " +
			"--strict asked. --max-tokens sets a budget for the definitions: over it, the model gets search_tools, describe_tool " +
			"and call_tool instead of every tool.\n\n" + fleetHelp,
		Example: `  mcpcall tools export --format openai http://127.0.0.1:8080/mcp | jq '.tools'
  mcpcall tools export --format anthropic --strict myserver
  mcpcall tools export --format gemini --max-tokens 2000 --all`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.fleetArgs(&all, 0, c.targetArgs(0, 0)),
		RunE: c.orFleet(&all, func(ctx context.Context, _ []string) error {
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
			c.reportFailures(failed)
			if !answered(run, failed) {
				return noneAnswered(failed)
			}
			return export(ctx, llm.FromFleet(run.f))
		}, c.connected(func(ctx context.Context, s *session, _ []string) error {
			return export(ctx, llm.FromConn(s.conn))
		})),
	}
	cmd.Flags().StringVar(&format, "format", "", "the provider's tool format: "+strings.Join(names, ", "))
	cmd.Flags().BoolVar(&strict, "strict", false, "ask for the provider's strict mode; a tool that cannot be made strict is sent loose, and the exit status is 1")
	cmd.Flags().IntVar(&maxTokens, "max-tokens", 0, "the tokens the definitions may cost (0: no budget)")
	cmd.Flags().BoolVar(&all, "all", false, "export the tools of every server of the config files, under their fleet names")
	c.onTarget(cmd)
	return cmd
}

// exportTools prints src's tools for the format and returns an exit error
// when some tool is not represented as asked.
func (c *cli) exportTools(ctx context.Context, src llm.Source, format string, strict bool, maxTokens int) error {
	target := llm.Target{Provider: llm.Provider(format), Strict: strict}
	known := false
	for _, p := range exportFormats {
		known = known || p == target.Provider
	}
	if !known {
		var names []string
		for _, p := range exportFormats {
			names = append(names, string(p))
		}
		return usageErr("tools export: --format %q: want one of %s", format, strings.Join(names, ", "))
	}
	if maxTokens < 0 {
		return usageErr("tools export: --max-tokens %d: want 0 or more", maxTokens)
	}
	tb, err := llm.NewToolbox(ctx, src, target, llm.ToolboxOptions{Budget: maxTokens})
	if err != nil {
		return err
	}
	report := tb.Report()
	if err := writeValue(c.stdout, struct {
		Tools  json.RawMessage `json:"tools"`
		Report []llm.Report    `json:"report"`
	}{tb.Definitions(), report}); err != nil {
		return err
	}
	if tb.Budgeted() {
		c.log.Warn("the tools are over the budget: the model gets tools to search, read and call them instead",
			"budget", maxTokens, "all", tb.AllTokens(), "sent", tb.Tokens())
	}
	var missing []string
	for _, r := range report {
		if r.Mode == llm.ModeOmitted || (strict && r.Mode == llm.ModeLoose) {
			missing = append(missing, r.Name+" ("+string(r.Mode)+")")
		}
	}
	if len(missing) > 0 {
		return &exitError{code: exitToolError, kind: kindNotRepresented,
			err: fmt.Errorf("tools export: %d of %d tools not represented as asked, see the report: %s", len(missing), len(report), strings.Join(missing, ", "))}
	}
	return nil
}
