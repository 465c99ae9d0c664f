package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func (c *cli) pingCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ping TARGET",
		Short: "Check that the server answers (connects, then sends ping)",
		Long: `Connect, send ping, and print how long the answer took. Exit status 0 means
the server is up and speaks MCP; see the exit codes for why it is not.`,
		Example: `  mcpcall ping http://127.0.0.1:8080/mcp && echo up
  mcpcall ping --connect-timeout 5s myserver || echo "down: $?"`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.targetArgs(0, 0),
		RunE: c.connected(func(ctx context.Context, s *session, _ []string) error {
			start := time.Now()
			var raw json.RawMessage
			if err := s.conn.Call(ctx, "ping", nil, &raw); err != nil {
				return s.callFailed(ctx, err)
			}
			if c.f.json {
				return s.writeResult(raw)
			}
			fmt.Fprintf(c.stdout, "ok in %s\n", since(start))
			return nil
		}),
	}
	c.onTarget(cmd)
	return cmd
}
