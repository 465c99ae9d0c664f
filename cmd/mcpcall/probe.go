package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
)

// probeResult is what probe --json prints.
type probeResult struct {
	Transport         string                 `json:"transport"`
	Era               mcp.Era                `json:"era"`
	ProtocolVersion   string                 `json:"protocolVersion"`
	SupportedVersions []string               `json:"supportedVersions,omitempty"`
	ServerInfo        mcp.Implementation     `json:"serverInfo"`
	Capabilities      mcp.ServerCapabilities `json:"capabilities"`
	Instructions      string                 `json:"instructions,omitempty"`
	Negotiation       *negotiate.Report      `json:"negotiation"`
}

func (c *cli) probeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe TARGET",
		Short: "Negotiate and show what the server speaks: transport, revision, server info, capabilities",
		Long: `Connect the way any command would, and print what came of it: the negotiation
report (every attempt — the stateless request, initialize, the HTTP+SSE stream —
its status and time, and why the next was tried), the transport in use, the
protocol era and revision, the server's name and version, its capabilities
and instructions. --json prints one object with transport ("streamable-http",
"sse" or "stdio"), era ("stateless" or "initialize"), protocolVersion,
supportedVersions (a stateless server's list), serverInfo, capabilities and
negotiation.`,
		Example: `  mcpcall probe https://example.com/mcp
  mcpcall probe --transport sse http://127.0.0.1:8080/sse
  mcpcall probe --json myserver | jq -r .transport`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.targetArgs(0, 0),
		RunE: c.connected(func(_ context.Context, s *session, _ []string) error {
			info := s.info
			if c.f.json {
				return writeValue(c.stdout, probeResult{
					Transport: info.Transport, Era: info.Era, ProtocolVersion: info.ProtocolVersion,
					SupportedVersions: info.SupportedVersions, ServerInfo: info.ServerInfo,
					Capabilities: info.Capabilities, Instructions: info.Instructions, Negotiation: info.Negotiation,
				})
			}
			if info.Negotiation != nil {
				fmt.Fprint(c.stdout, info.Negotiation.String())
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "transport\t%s\n", info.Transport)
			fmt.Fprintf(tw, "era\t%s\n", info.Era)
			fmt.Fprintf(tw, "protocol\t%s\n", info.ProtocolVersion)
			if len(info.SupportedVersions) > 0 {
				fmt.Fprintf(tw, "supports\t%s\n", strings.Join(info.SupportedVersions, ", "))
			}
			server := strings.TrimSpace(info.ServerInfo.Name + " " + info.ServerInfo.Version)
			if info.ServerInfo.Title != "" {
				server += " (" + info.ServerInfo.Title + ")"
			}
			fmt.Fprintf(tw, "server\t%s\n", server)
			fmt.Fprintf(tw, "capabilities\t%s\n", describeCapabilities(info.Capabilities))
			if in := strings.TrimSpace(info.Instructions); in != "" {
				fmt.Fprintf(tw, "instructions\t%s\n", firstLine(in))
			}
			return tw.Flush()
		}),
	}
	c.onTarget(cmd)
	return cmd
}

// describeCapabilities lists capabilities with their true flags, e.g.
// "logging, resources (listChanged, subscribe), tools (listChanged)".
func describeCapabilities(caps mcp.ServerCapabilities) string {
	b, err := json.Marshal(caps)
	if err != nil {
		return "?"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var flags map[string]any
		_ = json.Unmarshal(m[k], &flags)
		var on []string
		for f, v := range flags {
			if v != false && v != nil {
				on = append(on, f)
			}
		}
		slices.Sort(on)
		if len(on) > 0 {
			parts = append(parts, k+" ("+strings.Join(on, ", ")+")")
		} else {
			parts = append(parts, k)
		}
	}
	return strings.Join(parts, ", ")
}
