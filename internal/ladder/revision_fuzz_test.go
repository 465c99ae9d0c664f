package ladder

import (
	"slices"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// FuzzNamedRevision: the revision asked for again after a refusal is one
// we speak, not the one refused, and named within the part of the refusal
// that is read.
func FuzzNamedRevision(f *testing.F) {
	f.Add("protocol version not supported, supported version is 2025-03-26", "", mcp.Version20251125)
	f.Add("only 2025-11-25", `{"supported":["2024-11-05"]}`, mcp.Version20251125)
	f.Add("1999-01-01 or 2026-07-28", "null", "")
	f.Fuzz(func(t *testing.T, msg, data, sent string) {
		v := namedRevision(&jsonrpc.Error{Code: -32603, Message: msg, Data: []byte(data)}, sent)
		if v == "" {
			return
		}
		text := msg + " " + data
		if len(text) > refusalScan {
			text = text[:refusalScan]
		}
		if !slices.Contains(mcp.InitializeVersions, v) || v == sent || !strings.Contains(text, v) {
			t.Fatalf("namedRevision(%q, %q, sent %q) = %q", msg, data, sent, v)
		}
	})
}
