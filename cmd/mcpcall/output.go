package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/anymcp/anymcp/mcp"
)

// meta is what --json adds to every result: who answered, and how.
type meta struct {
	Transport       string             `json:"transport"`
	ProtocolVersion string             `json:"protocolVersion"`
	ServerInfo      mcp.Implementation `json:"serverInfo"`
}

func (s *session) meta() meta {
	return meta{Transport: s.info.Transport, ProtocolVersion: s.info.ProtocolVersion, ServerInfo: s.info.ServerInfo}
}

// writeResult prints a result as --json wants it: the object exactly as
// the server sent it, with "meta" added last, as one indented document.
func (s *session) writeResult(result json.RawMessage) error {
	m, err := json.Marshal(s.meta())
	if err != nil {
		return err
	}
	return writeIndented(s.c.stdout, withMember(result, "meta", m))
}

// withMember adds "key": value to a JSON object, keeping the object's own
// members and their order. A result that is not an object is wrapped as
// {"result": ...}.
func withMember(obj json.RawMessage, key string, value json.RawMessage) json.RawMessage {
	obj = bytes.TrimSpace(obj)
	if len(obj) == 0 || string(obj) == "null" {
		obj = json.RawMessage("{}")
	}
	if obj[0] != '{' {
		obj = append(append(json.RawMessage(`{"result":`), obj...), '}')
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(obj, &members) != nil {
		return obj
	}
	if _, clash := members[key]; clash {
		members[key] = value
		b, _ := json.Marshal(members)
		return b
	}
	body := bytes.TrimSpace(obj[1 : len(obj)-1])
	out := make([]byte, 0, len(obj)+len(key)+len(value)+8)
	out = append(out, '{')
	if len(body) > 0 {
		out = append(out, body...)
		out = append(out, ',')
	}
	kb, _ := json.Marshal(key)
	out = append(out, kb...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}')
}

// writeIndented writes JSON text indented by two spaces, with a newline.
func writeIndented(w io.Writer, raw []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// writeValue encodes v as one indented JSON document.
func writeValue(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeIndented(w, b)
}

// printContent writes content blocks for a person: text as text, images,
// audio and blobs summarised with type and size, embedded text resources
// with their URI and text.
func printContent(w io.Writer, blocks []mcp.Content) {
	for _, c := range blocks {
		switch c.Type {
		case mcp.ContentText:
			fmt.Fprintln(w, strings.TrimSuffix(c.Text, "\n"))
		case mcp.ContentImage, mcp.ContentAudio:
			fmt.Fprintf(w, "[%s %s, %s]\n", c.Type, orDash(c.MimeType), byteSize(base64Len(c.Data)))
		case mcp.ContentResourceLink:
			fmt.Fprintf(w, "[resource link %s", c.URI)
			if c.Name != "" {
				fmt.Fprintf(w, " %q", c.Name)
			}
			if c.MimeType != "" {
				fmt.Fprintf(w, " %s", c.MimeType)
			}
			fmt.Fprintln(w, "]")
		case mcp.ContentResource:
			if c.Resource == nil {
				fmt.Fprintln(w, "[resource]")
				continue
			}
			printResourceContents(w, *c.Resource, true)
		default:
			fmt.Fprintf(w, "[%s content]\n", c.Type)
		}
	}
}

// printResourceContents writes one resource's contents: the text, or a
// summary of a blob. header puts the URI on a line before a text.
func printResourceContents(w io.Writer, rc mcp.ResourceContents, header bool) {
	if rc.Blob != "" || rc.Text == "" && rc.MimeType != "" && !strings.HasPrefix(rc.MimeType, "text/") {
		fmt.Fprintf(w, "[blob %s %s, %s]\n", rc.URI, orDash(rc.MimeType), byteSize(base64Len(rc.Blob)))
		return
	}
	if header {
		fmt.Fprintf(w, "[resource %s %s]\n", rc.URI, orDash(rc.MimeType))
	}
	fmt.Fprintln(w, strings.TrimSuffix(rc.Text, "\n"))
}

// printStructured pretty-prints structuredContent.
func printStructured(w io.Writer, raw json.RawMessage) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") == nil {
		fmt.Fprintln(w, buf.String())
	}
}

// base64Len is the decoded size of base64 text, padding considered.
func base64Len(s string) int {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	return len(s) * 3 / 4
}

func byteSize(n int) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 10*1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 10*1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// signature writes a tool's parameters as name(a: number, b?: string).
func signature(name string, sch schema) string {
	req := map[string]bool{}
	for _, r := range sch.required() {
		req[r] = true
	}
	var parts []string
	for _, p := range sch.propertyNames() {
		types := schemaTypes(sch, sch.property(p))
		t := strings.Join(types, "|")
		if t == "" {
			t = "any"
		}
		opt := "?"
		if req[p] {
			opt = ""
		}
		parts = append(parts, p+opt+": "+t)
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}
