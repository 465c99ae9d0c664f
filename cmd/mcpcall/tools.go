package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

func toolsCommand(g *globalFlags) *cobra.Command {
	tools := &cobra.Command{Use: "tools", Short: "List and call the server's tools"}
	tools.AddCommand(&cobra.Command{
		Use:   "list TARGET",
		Short: "List every tool (all pages)",
		Example: `  mcpcall tools list http://127.0.0.1:8080/mcp
  mcpcall tools list --json -- npx -y @modelcontextprotocol/server-everything`,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, target, err := splitTarget(cmd, args, 0)
			if err != nil {
				return err
			}
			conn, err := g.dial(cmd, target)
			if err != nil {
				return err
			}
			defer conn.Close()
			list, err := conn.AllTools(cmd.Context())
			if err != nil {
				return err
			}
			if g.json {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"tools": list, "meta": meta(conn)})
			}
			for _, t := range list {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", t.Name, firstLine(t.Description))
			}
			return nil
		},
	})
	var argsJSON string
	call := &cobra.Command{
		Use:   "call NAME TARGET",
		Short: "Call a tool; exit status 1 when the tool reports isError",
		Example: `  mcpcall tools call echo --args '{"text":"hi"}' http://127.0.0.1:8080/mcp
  mcpcall tools call add --args '{"a":1,"b":2}' -- ./my-server --stdio`,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, target, err := splitTarget(cmd, args, 1)
			if err != nil {
				return err
			}
			var arguments json.RawMessage
			if argsJSON != "" {
				if !json.Valid([]byte(argsJSON)) || !bytes.HasPrefix(bytes.TrimSpace([]byte(argsJSON)), []byte("{")) {
					return usageError(cmd, "--args must be a JSON object")
				}
				arguments = json.RawMessage(argsJSON)
			}
			conn, err := g.dial(cmd, target)
			if err != nil {
				return err
			}
			defer conn.Close()
			res, err := conn.CallTool(cmd.Context(), own[0], arguments, client.WithProgress(func(p mcp.ProgressParams) {
				fmt.Fprintf(cmd.ErrOrStderr(), "progress %v/%v %s\n", p.Progress, p.Total, p.Message)
			}))
			if err != nil {
				return err
			}
			if g.json {
				err = writeJSON(cmd.OutOrStdout(), struct {
					*mcp.CallToolResult
					Meta map[string]any `json:"meta"`
				}{res, meta(conn)})
			} else {
				err = printContent(cmd.OutOrStdout(), res)
			}
			if err != nil {
				return err
			}
			if res.IsError {
				return &exitError{exitToolError, fmt.Errorf("tool %s reported an error", own[0])}
			}
			return nil
		},
	}
	call.Flags().StringVar(&argsJSON, "args", "", "the tool's arguments as a JSON object")
	tools.AddCommand(call)
	return tools
}

func meta(conn *client.Conn) map[string]any {
	info := conn.Info()
	return map[string]any{"transport": info.Transport, "protocolVersion": info.ProtocolVersion, "serverInfo": info.ServerInfo}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printContent writes a tool result for a person: text as text, binary
// content summarised, structured content pretty-printed.
func printContent(w io.Writer, res *mcp.CallToolResult) error {
	for _, c := range res.Content {
		switch c.Type {
		case mcp.ContentText:
			fmt.Fprintln(w, c.Text)
		case mcp.ContentImage, mcp.ContentAudio:
			fmt.Fprintf(w, "[%s %s, %d bytes]\n", c.Type, c.MimeType, base64.StdEncoding.DecodedLen(len(c.Data)))
		case mcp.ContentResourceLink:
			fmt.Fprintf(w, "[resource link %s %s]\n", c.URI, c.Name)
		case mcp.ContentResource:
			if c.Resource == nil {
				fmt.Fprintln(w, "[resource]")
			} else if c.Resource.Blob != "" {
				fmt.Fprintf(w, "[resource %s %s, %d bytes]\n", c.Resource.URI, c.Resource.MimeType, base64.StdEncoding.DecodedLen(len(c.Resource.Blob)))
			} else {
				fmt.Fprintf(w, "[resource %s]\n%s\n", c.Resource.URI, c.Resource.Text)
			}
		default:
			fmt.Fprintf(w, "[%s content]\n", c.Type)
		}
	}
	if len(res.StructuredContent) > 0 {
		var buf bytes.Buffer
		if json.Indent(&buf, res.StructuredContent, "", "  ") == nil {
			fmt.Fprintln(w, buf.String())
		}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
