package servehttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"
)

// valueTable is testdata/header_values.json: the specification's encoding
// examples and the edges of its rules.
type valueTable struct {
	Encodings []struct{ Value, Encoded, Why string }
	Received  []struct{ Header, Decoded, Error, Why string }
}

func readTable(t *testing.T) valueTable {
	t.Helper()
	b, err := os.ReadFile("testdata/header_values.json")
	if err != nil {
		t.Fatal(err)
	}
	var vt valueTable
	if err := json.Unmarshal(b, &vt); err != nil {
		t.Fatal(err)
	}
	if len(vt.Encodings) < 10 || len(vt.Received) < 10 {
		t.Fatalf("table too short: %d, %d", len(vt.Encodings), len(vt.Received))
	}
	return vt
}

// TestValueTable: each value is sent as the specification says, and a
// server reads each header value back as the table says.
func TestValueTable(t *testing.T) {
	vt := readTable(t)
	for _, r := range vt.Encodings {
		if got := EncodeValue(r.Value); got != r.Encoded {
			t.Errorf("EncodeValue(%q) = %q, want %q (%s)", r.Value, got, r.Encoded, r.Why)
		}
		if got, err := DecodeValue(r.Encoded); err != nil || got != r.Value {
			t.Errorf("DecodeValue(%q) = %q, %v; want %q (%s)", r.Encoded, got, err, r.Value, r.Why)
		}
	}
	errs := map[string]error{"chars": ErrHeaderChars, "sentinel": ErrSentinel, "utf8": ErrSentinelUTF8}
	for _, r := range vt.Received {
		got, err := DecodeValue(r.Header)
		if r.Error != "" {
			if want := errs[r.Error]; want == nil || !errors.Is(err, want) {
				t.Errorf("DecodeValue(%q) = %q, %v; want %v (%s)", r.Header, got, err, want, r.Why)
			}
			continue
		}
		if err != nil || got != r.Decoded {
			t.Errorf("DecodeValue(%q) = %q, %v; want %q (%s)", r.Header, got, err, r.Decoded, r.Why)
		}
	}
}

func TestPlainValue(t *testing.T) {
	for in, want := range map[string]string{"2026-07-28": "2026-07-28", " tools/call\t": "tools/call"} {
		if got, err := PlainValue(in); err != nil || got != want {
			t.Errorf("PlainValue(%q) = %q, %v", in, got, err)
		}
	}
	// Mcp-Method carries no sentinel: it stays as it is.
	if got, _ := PlainValue("=?base64?SGk=?="); got != "=?base64?SGk=?=" {
		t.Errorf("PlainValue decoded a sentinel: %q", got)
	}
	if _, err := PlainValue("tööls/call"); !errors.Is(err, ErrHeaderChars) {
		t.Errorf("non-ASCII: %v", err)
	}
}

func TestParamHeaders(t *testing.T) {
	for _, tt := range []struct {
		name, schema string
		n            int
		bad          bool
	}{
		{"spec example", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"query":{"type":"string"}}}`, 1, false},
		{"nested", `{"type":"object","properties":{"t":{"type":"object","properties":{"z":{"type":"integer","x-mcp-header":"Z"}}}}}`, 1, false},
		{"number", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, 0, true},
		{"duplicate without case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, 0, true},
		{"items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, 0, true},
		{"anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, 0, true},
		{"not a token", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`, 0, true},
		{"CR", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\r"}}}`, 0, true},
		{"empty", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, 0, true},
		{"root", `{"type":"string","x-mcp-header":"A"}`, 0, true},
		{"a default is a value", `{"type":"object","properties":{"a":{"type":"object","default":{"x-mcp-header":"A"}}}}`, 0, false},
	} {
		ps, err := ParamHeaders(json.RawMessage(tt.schema))
		if (err != nil) != tt.bad || len(ps) != tt.n {
			t.Errorf("%s: %v, %v", tt.name, ps, err)
		}
	}
	deep := `{"type":"object","properties":{"a":`
	for range 70 {
		deep += `{"type":"object","properties":{"a":`
	}
	if _, err := ParamHeaders(json.RawMessage(deep + `{"x-mcp-header":"A"`)); err == nil {
		t.Error("a schema that is not JSON was read")
	}
}

func TestCheckParams(t *testing.T) {
	ps, err := ParamHeaders(json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"region":"Hello, 世界","n":42,"dry":false}`)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	good := []string{"Mcp-Param-Region", EncodeValue("Hello, 世界"), "mcp-param-n", "42.0", "Mcp-Param-Dry-Run", "false"}
	if m := CheckParams(hdr(good...), ps, args); m != nil {
		t.Errorf("refused: %+v", m)
	}
	for _, tt := range []struct {
		name   string
		h      http.Header
		args   string
		header string
	}{
		{"missing", hdr(good[2:]...), string(args), "Mcp-Param-Region"},
		{"raw non-ASCII", hdr(append([]string{"Mcp-Param-Region", "Hello, 世界"}, good[2:]...)...), string(args), "Mcp-Param-Region"},
		{"repeated", hdr(append(good, "Mcp-Param-N", "42")...), string(args), "Mcp-Param-N"},
		{"other integer", hdr(good[0], good[1], "Mcp-Param-N", "43", good[4], good[5]), string(args), "Mcp-Param-N"},
		{"boolean case", hdr(good[0], good[1], good[2], good[3], "Mcp-Param-Dry-Run", "False"), string(args), "Mcp-Param-Dry-Run"},
		{"header without argument", hdr(good...), `{"region":"Hello, 世界","n":42}`, "Mcp-Param-Dry-Run"},
	} {
		m := CheckParams(tt.h, ps, json.RawMessage(tt.args))
		if m == nil || m.Header != tt.header {
			t.Errorf("%s: %+v, want a refusal of %s", tt.name, m, tt.header)
		}
	}
	// null is no value: no header expected.
	if m := CheckParams(hdr(good[0], good[1], good[2], good[3]), ps, json.RawMessage(`{"region":"Hello, 世界","n":42,"dry":null}`)); m != nil {
		t.Errorf("null: %+v", m)
	}
}
