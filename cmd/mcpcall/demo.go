package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

func demoCommand(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Start the built-in test servers and show the library working against each",
		Long: `demo starts, inside this process, a Streamable HTTP server answering with SSE, one
answering with JSON, and a stdio server (this binary started again as a child), then
connects to each, lists its tools and calls two of them, one with progress.
No outside server is needed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			sseSrv := testservers.StartStreamable(testservers.HTTPOptions{Priming: true})
			defer sseSrv.Close()
			jsonSrv := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true})
			defer jsonSrv.Close()
			path, args, env := testservers.StdioCommand()

			targets := []struct {
				label  string
				target client.Target
			}{
				{"Streamable HTTP, SSE answers", client.URL(sseSrv.URL)},
				{"Streamable HTTP, JSON answers", client.URL(jsonSrv.URL)},
				{"stdio child process", client.Command(path, args...).WithEnv(env...)},
			}
			for _, tg := range targets {
				if err := demoOne(cmd.Context(), g, out, tg.label, tg.target); err != nil {
					return fmt.Errorf("%s: %w", tg.label, err)
				}
			}
			fmt.Fprintln(out, "all servers answered.")
			return nil
		},
	}
}

func demoOne(ctx context.Context, g *globalFlags, out io.Writer, label string, target client.Target) error {
	fmt.Fprintf(out, "== %s: %s\n", label, target)
	start := time.Now()
	dctx, cancel := context.WithTimeout(ctx, g.connectTimeout)
	defer cancel()
	conn, err := client.Dial(dctx, target, client.WithClientInfo("mcpcall-demo", client.Version))
	if err != nil {
		return err
	}
	defer conn.Close()
	info := conn.Info()
	fmt.Fprintf(out, "   connected in %v: transport %s, protocol %s, server %s %s\n",
		time.Since(start).Round(time.Millisecond), info.Transport, info.ProtocolVersion, info.ServerInfo.Name, info.ServerInfo.Version)
	tools, err := conn.AllTools(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   %d tools:", len(tools))
	for _, t := range tools {
		fmt.Fprint(out, " ", t.Name)
	}
	fmt.Fprintln(out)
	res, err := conn.CallTool(ctx, "add", map[string]int{"a": 20, "b": 22})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   add(20, 22) → %s  structured: %s\n", res.Content[0].Text, res.StructuredContent)
	res, err = conn.CallTool(ctx, "slow", map[string]int{"steps": 3, "delayMs": 50},
		client.WithProgress(func(p mcp.ProgressParams) {
			fmt.Fprintf(out, "   progress %v/%v %s\n", p.Progress, p.Total, p.Message)
		}))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   slow → %s\n", res.Content[0].Text)
	return nil
}
