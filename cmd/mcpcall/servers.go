package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/mcpconfig"
)

// serversCommand is `mcpcall servers`: what the config files define.
func (c *cli) serversCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "List the servers your MCP config files define, and where each came from",
		Long: `List every server defined in the config files mcpcall reads, in search order,
with its type, its command or URL as written (variables unexpanded; the
credentials written out in a URL, a header or an env value hidden), the form it
is written in (mcpServers, servers, projects.mcpServers or mcporter) and the
file it came from. A name defined again in a later file
is marked shadowed: the first definition is the one used.

` + configSearchHelp,
		Example: `  mcpcall servers
  mcpcall servers --json | jq -r '.servers[] | select(.shadowed | not) | .name'
  mcpcall servers --config ~/.cursor/mcp.json`,
		Args: cobra.NoArgs,
		RunE: c.runE(func(_ *cobra.Command, _ []string) error {
			locs := c.places.SearchOrder()
			strict := c.f.config != ""
			if strict {
				locs = []mcpconfig.Location{c.places.File(c.f.config)}
			}
			entries, problems := c.places.Load(locs)
			for i := range entries {
				entries[i].URL = displayURL(entries[i].URL)
				entries[i].Headers = displayHeaders(entries[i].Headers)
				entries[i].Env = displayEnv(entries[i].Env)
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
					Servers  []mcpconfig.Entry `json:"servers"`
					Searched []searched        `json:"searched"`
				}{Servers: entries}
				if out.Servers == nil {
					out.Servers = []mcpconfig.Entry{}
				}
				for _, l := range locs {
					_, err := os.Stat(l.Path)
					out.Searched = append(out.Searched, searched{l.Path, l.Label, err == nil})
				}
				return writeValue(c.stdout, out)
			}
			if len(entries) == 0 {
				c.note("no servers defined; mcpcall servers --help lists the files it reads")
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTYPE\tCOMMAND OR URL\tFORMAT\tSOURCE")
			for _, e := range entries {
				what := e.URL
				if e.Kind() == mcpconfig.KindStdio {
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name, orDash(string(e.Kind())), what, e.Format, source)
			}
			return tw.Flush()
		}),
	}
	c.addFlags(cmd, "config")
	return cmd
}

// displayHeaders hides credential header values written literally in a
// config file; a ${VAR} template is shown, as it holds no secret itself.
func displayHeaders(h map[string]string) map[string]string {
	return displayCredentials(h, sensitiveHeader, redactHeaderValue)
}

// displayEnv hides the values of a stdio entry's credential variables
// written literally in a config file, as displayHeaders does for headers.
func displayEnv(env map[string]string) map[string]string {
	return displayCredentials(env, sensitiveEnv, func(string, string) string { return redacted })
}

// displayCredentials returns m with hide(k, v) in place of each value v
// whose name k is a credential's (sensitive) and that is written literally,
// not as a ${VAR} template.
func displayCredentials(m map[string]string, sensitive func(string) bool, hide func(k, v string) string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if sensitive(k) && !strings.Contains(v, "${") {
			v = hide(k, v)
		}
		out[k] = v
	}
	return out
}

// template matches a ${VAR} (or ${VAR:-default}) of a config file.
var template = regexp.MustCompile(`\$\{[^}]*\}`)

// displayURL is an entry's URL as servers shows it: what may be a
// credential (the userinfo, the query's values, the fragment) hidden as
// origin.RedactString hides it everywhere else, except where it is written
// as a ${VAR} template, which holds no secret itself. A URL with templates
// is read as text: "http://127.0.0.1:${PORT:-8080}/mcp" does not parse.
func displayURL(raw string) string {
	if raw == "" {
		return ""
	}
	if !strings.Contains(raw, "${") {
		return origin.RedactString(raw)
	}
	onlyTemplates := func(s string) bool {
		return strings.Trim(template.ReplaceAllString(s, ""), ":") == ""
	}
	rest, fragment, hasFragment := strings.Cut(raw, "#")
	out, query, hasQuery := strings.Cut(rest, "?")
	if scheme, after, ok := strings.Cut(out, "://"); ok {
		authority, path := after, ""
		if i := strings.IndexByte(after, '/'); i >= 0 {
			authority, path = after[:i], after[i:]
		}
		if i := strings.LastIndexByte(authority, '@'); i >= 0 && !onlyTemplates(authority[:i]) {
			authority = authority[i+1:]
		}
		out = scheme + "://" + authority + path
	}
	if hasQuery {
		parts := strings.Split(query, "&")
		for i, kv := range parts {
			if k, v, ok := strings.Cut(kv, "="); ok && !onlyTemplates(v) {
				parts[i] = k + "=…"
			} else if !ok && !onlyTemplates(kv) {
				parts[i] = "…"
			}
		}
		out += "?" + strings.Join(parts, "&")
	}
	if hasFragment && onlyTemplates(fragment) {
		out += "#" + fragment
	}
	return out
}
