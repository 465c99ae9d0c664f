package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// serversCommand is `mcpcall servers`: what the config files define.
func (c *cli) serversCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "servers",
		Short: "List the servers your MCP config files define, and where each came from",
		Long: `List every server defined in the config files mcpcall reads, in search order,
with its type, its command or URL as written (variables unexpanded, credential
headers hidden) and the file it came from. A name defined again in a later file
is marked shadowed: the first definition is the one used.

` + configSearchHelp,
		Example: `  mcpcall servers
  mcpcall servers --json | jq -r '.servers[] | select(.shadowed | not) | .name'
  mcpcall servers --config ~/.cursor/mcp.json`,
		Args: cobra.NoArgs,
		RunE: c.runE(func(_ *cobra.Command, _ []string) error {
			locs := c.places.searchOrder()
			strict := c.f.config != ""
			if strict {
				locs = []location{c.places.explicitLocation(c.f.config)}
			}
			entries, problems := c.places.loadEntries(locs, strict)
			for i := range entries {
				entries[i].Headers = displayHeaders(entries[i].Headers)
			}
			if strict && len(problems) > 0 {
				return usageErr("%v", problems[0])
			}
			for _, p := range problems {
				c.log.Warn("config file skipped", "err", p)
			}
			if c.f.json {
				type searched struct {
					Path  string `json:"path"`
					Label string `json:"label"`
					Found bool   `json:"found"`
				}
				out := struct {
					Servers  []serverEntry `json:"servers"`
					Searched []searched    `json:"searched"`
				}{Servers: entries}
				if out.Servers == nil {
					out.Servers = []serverEntry{}
				}
				for _, l := range locs {
					_, err := os.Stat(l.path)
					out.Searched = append(out.Searched, searched{l.path, l.label, err == nil})
				}
				return writeValue(c.stdout, out)
			}
			if len(entries) == 0 {
				c.note("no servers defined; mcpcall servers --help lists the files it reads")
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTYPE\tCOMMAND OR URL\tSOURCE")
			for _, e := range entries {
				what := e.URL
				if e.kind() == "stdio" {
					what = strings.Join(append([]string{e.Command}, e.Args...), " ")
				}
				source := e.Label + " " + e.Source
				switch {
				case e.Problem != "":
					source += " (error: " + e.Problem + ")"
				case e.Shadowed:
					source += " (shadowed)"
				case e.Disabled:
					source += " (disabled)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, orDash(e.kind()), what, source)
			}
			return tw.Flush()
		}),
	}
}

// displayHeaders hides credential header values written literally in a
// config file; a ${VAR} template is shown, as it holds no secret itself.
func displayHeaders(h map[string]string) map[string]string {
	if len(h) == 0 {
		return h
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if sensitiveHeader(k) && !strings.Contains(v, "${") {
			v = redactHeaderValue(k, v)
		}
		out[k] = v
	}
	return out
}
