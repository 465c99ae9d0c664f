package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/testservers"
)

// demoStdioServer is the hidden subcommand of demo that `mcpcall demo`
// starts as its stdio child: `mcpcall demo stdio-server --eras ERAS`. It
// is a subcommand, not an environment variable, so that no setting of a
// user's environment turns mcpcall into a test server: only these words,
// which demo passes itself, do.
const demoStdioServer = "stdio-server"

// demoServerArgs are the arguments that start mcpcall as demo's stdio
// server speaking eras ("initialize", "stateless" or "dual").
func demoServerArgs(eras string) []string {
	return []string{"demo", demoStdioServer, "--eras", eras}
}

func (c *cli) demoStdioServerCommand() *cobra.Command {
	var eras string
	cmd := &cobra.Command{
		Use:    demoStdioServer,
		Short:  "Serve demo's stdio test server on stdin and stdout (used by demo itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := testservers.Options{}
			switch eras {
			case "initialize":
			case "stateless":
				opts.Eras = testservers.StatelessOnly
			case "dual":
				opts.Eras = testservers.DualEra
			default:
				return &exitError{code: exitUsage, kind: kindUsage, err: fmt.Errorf("--eras %q: want initialize, stateless or dual", eras)}
			}
			err := testservers.ServeStdio(cmd.Context(), c.stdin, c.stdout, opts)
			if errors.Is(err, cmd.Context().Err()) {
				return nil // interrupted: the demo is ending
			}
			return err
		},
	}
	cmd.Flags().StringVar(&eras, "eras", "initialize", "the protocol eras the server speaks: initialize, stateless or dual")
	return cmd
}
