package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

func (c *cli) resourcesCommand() *cobra.Command {
	res := &cobra.Command{Use: "resources", Short: "List and read the server's resources and resource templates"}
	res.AddCommand(&cobra.Command{
		Use:   "list TARGET",
		Short: "List every resource (all pages): URI, name, MIME type, size, title",
		Example: `  mcpcall resources list http://127.0.0.1:8080/mcp
  mcpcall resources list --json myserver | jq -r '.resources[].uri'`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.targetArgs(0, 0),
		RunE: c.connected(func(ctx context.Context, s *session, _ []string) error {
			raw, err := listAll(s.conn.RawResources(ctx))
			if err != nil {
				return err
			}
			if c.f.json {
				return s.writeList("resources", raw)
			}
			list, err := decodeItems[mcp.Resource]("resources/list", raw)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			for _, r := range list {
				size := "-"
				if r.Size != nil {
					size = byteSize(int(*r.Size))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.URI, r.Name, orDash(r.MimeType), size, firstLine(firstNonEmpty(r.Title, r.Description)))
			}
			return tw.Flush()
		}),
	})
	res.AddCommand(&cobra.Command{
		Use:               "templates TARGET",
		Short:             "List every resource template (all pages)",
		Example:           `  mcpcall resources templates http://127.0.0.1:8080/mcp`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.targetArgs(0, 0),
		RunE: c.connected(func(ctx context.Context, s *session, _ []string) error {
			raw, err := listAll(s.conn.RawResourceTemplates(ctx))
			if err != nil {
				return err
			}
			if c.f.json {
				return s.writeList("resourceTemplates", raw)
			}
			list, err := decodeItems[mcp.ResourceTemplate]("resources/templates/list", raw)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			for _, t := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.URITemplate, t.Name, orDash(t.MimeType), firstLine(firstNonEmpty(t.Description, t.Title)))
			}
			return tw.Flush()
		}),
	})
	res.AddCommand(&cobra.Command{
		Use:   "read URI TARGET",
		Short: "Read a resource: text printed as is, blobs summarised (--json for the data)",
		Example: `  mcpcall resources read test://static/text http://127.0.0.1:8080/mcp
  mcpcall resources read --json file:///etc/hosts myserver | jq -r '.contents[0].text'`,
		ValidArgsFunction: c.completeResourceRead,
		Args:              c.targetArgs(1, 1),
		RunE: c.connected(func(ctx context.Context, s *session, own []string) error {
			var raw json.RawMessage
			err := s.conn.Call(ctx, "resources/read", &mcp.ReadResourceParams{URI: own[0]}, &raw, s.callOptions()...)
			s.progress.finish()
			if err != nil {
				return s.callFailed(ctx, err)
			}
			if c.f.json {
				return s.writeResult(raw)
			}
			var res mcp.ReadResourceResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return &client.ResultError{Method: "resources/read", Err: err}
			}
			for _, rc := range res.Contents {
				printResourceContents(c.stdout, rc, len(res.Contents) > 1)
			}
			return nil
		}),
	})
	c.onTarget(res.Commands()...)
	return res
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}
