package testservers

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

func TestHeaderParamsRules(t *testing.T) {
	for _, tt := range []struct {
		name, schema string
		want         []string // name@path:type
		err          string
	}{
		{"the header tool", string(toolsByName[HeaderToolName].tool.InputSchema),
			[]string{"Dry-Run@dryRun:boolean", "Priority@priority:integer", "Region@region:string", "Zone@target.zone:string"}, ""},
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, nil, ""},
		{"number", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, nil, "type number"},
		{"no type", `{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`, nil, "type <nil>"},
		{"type list", `{"type":"object","properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}`, nil, "not string"},
		{"duplicate", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, nil, "repeats"},
		{"items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, nil, "not reached"},
		{"anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, nil, "not reached"},
		{"$defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}`, nil, "not reached"},
		{"if", `{"type":"object","if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, nil, "not reached"},
		{"root", `{"type":"string","x-mcp-header":"A"}`, nil, "not reached"},
		{"empty", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, nil, "empty"},
		{"space", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`, nil, "token"},
		{"colon", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}`, nil, "token"},
		{"not a string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":3}}}`, nil, "not a string"},
		{"a default that looks like one", `{"type":"object","properties":{"a":{"type":"object","default":{"x-mcp-header":"A"}}}}`, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := headerParams(json.RawMessage(tt.schema))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name+"@"+strings.Join(p.Path, ".")+":"+p.Type)
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.want) {
				t.Errorf("got %v, want %v", names, tt.want)
			}
		})
	}
	// Every invalid tool is invalid, every other tool valid.
	for name, def := range toolsByName {
		if _, err := headerParams(def.tool.InputSchema); (err != nil) != def.invalidHeaders {
			t.Errorf("tool %s: %v", name, err)
		}
	}
}

func TestEncodeHeaderValue(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"us-west1", "us-west1"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"a b", "a b"},
	} {
		if got := EncodeHeaderValue(tt.in); got != tt.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if back, err := decodeHeaderValue(tt.want); err != nil || back != tt.in {
			t.Errorf("decodeHeaderValue(%q) = %q, %v", tt.want, back, err)
		}
	}
}

func TestStatelessParamHeaders(t *testing.T) {
	args := map[string]any{"region": "us-west1", "priority": 42, "dryRun": true, "target": map[string]any{"zone": "b"}, "query": "q"}
	full := map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42", "Mcp-Param-Dry-Run": "true", "Mcp-Param-Zone": "b"}
	without := func(k string) map[string]string {
		out := map[string]string{}
		for a, b := range full {
			if a != k {
				out[a] = b
			}
		}
		return out
	}
	with := func(k, v string) map[string]string {
		out := without(k)
		out[k] = v
		return out
	}
	argsWith := func(k string, v any) map[string]any {
		out := map[string]any{}
		for a, b := range args {
			out[a] = b
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	for _, tt := range []struct {
		name   string
		args   map[string]any
		hdr    map[string]string
		reject string // the header at fault; "" when accepted
	}{
		{"all mirrored", args, full, ""},
		{"header names are case-insensitive", args, map[string]string{"mcp-param-region": "us-west1", "MCP-PARAM-PRIORITY": "42", "mcp-param-dry-run": "true", "Mcp-Param-zone": "b"}, ""},
		{"integer compared as a number", args, with("Mcp-Param-Priority", "42.0"), ""},
		{"an absent argument needs no header", argsWith("priority", nil), without("Mcp-Param-Priority"), ""},
		{"an absent nested argument needs no header", argsWith("target", map[string]any{}), without("Mcp-Param-Zone"), ""},
		{"non-ASCII in the sentinel", argsWith("region", "zürich"), with("Mcp-Param-Region", EncodeHeaderValue("zürich")), ""},
		{"unknown Mcp-Param headers are ignored", args, with("Mcp-Param-Other", "x"), ""},
		{"missing", args, without("Mcp-Param-Region"), "Mcp-Param-Region"},
		{"missing nested", args, without("Mcp-Param-Zone"), "Mcp-Param-Zone"},
		{"different string", args, with("Mcp-Param-Region", "eu-west1"), "Mcp-Param-Region"},
		{"different integer", args, with("Mcp-Param-Priority", "43"), "Mcp-Param-Priority"},
		{"boolean not lowercase", args, with("Mcp-Param-Dry-Run", "True"), "Mcp-Param-Dry-Run"},
		{"header without argument", argsWith("dryRun", nil), full, "Mcp-Param-Dry-Run"},
		{"raw non-ASCII", argsWith("region", "zürich"), with("Mcp-Param-Region", "zürich"), "Mcp-Param-Region"},
		{"bad sentinel", args, with("Mcp-Param-Region", "=?base64?***?="), "Mcp-Param-Region"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, w := startStatelessHTTP(t, HTTPOptions{})
			m, _, code := w.call(t, 1, "tools/call", map[string]any{"name": HeaderToolName, "arguments": tt.args}, tt.hdr)
			st := s.Server().Stats()
			if tt.reject == "" {
				if code != 200 || m.Error != nil {
					t.Fatalf("status %d, error %v", code, m.Error)
				}
				var sc map[string]any
				_ = json.Unmarshal(result[mcp.CallToolResult](t, m).StructuredContent, &sc)
				if sc["region"] != tt.args["region"] {
					t.Errorf("structuredContent %v", sc)
				}
				if len(st.HeaderRejects) != 0 {
					t.Errorf("HeaderRejects %v", st.HeaderRejects)
				}
				return
			}
			if code != 400 {
				t.Errorf("status %d, want 400", code)
			}
			wantErrorCode(t, m, jsonrpc.CodeHeaderMismatch)
			if st.HeaderRejects[tt.reject] != 1 || st.ToolCalls[HeaderToolName] != 0 {
				t.Errorf("HeaderRejects %v, ToolCalls %v", st.HeaderRejects, st.ToolCalls)
			}
		})
	}
}

func TestStatelessInvalidHeaderTools(t *testing.T) {
	names := func(t *testing.T, w *statelessWire) []string {
		m, _ := w.ok(t, 1, "tools/list", nil)
		var tl struct {
			Tools []mcp.Tool `json:"tools"`
		}
		_ = json.Unmarshal(m.Result, &tl)
		var out []string
		for _, tool := range tl.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	_, w := startStatelessHTTP(t, HTTPOptions{Options: Options{InvalidHeaderTools: true}})
	got := names(t, w)
	if want := append(StatelessToolNames(), InvalidHeaderToolNames()...); !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
	if len(InvalidHeaderToolNames()) != 7 {
		t.Errorf("InvalidHeaderToolNames %v", InvalidHeaderToolNames())
	}
	_, w = startStatelessHTTP(t, HTTPOptions{})
	for _, n := range names(t, w) {
		if slices.Contains(InvalidHeaderToolNames(), n) {
			t.Errorf("%s listed without InvalidHeaderTools", n)
		}
	}
	m, _, _ := w.call(t, 2, "tools/call", map[string]any{"name": "bad_header_number"}, nil)
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
}
