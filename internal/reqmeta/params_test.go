package reqmeta

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// The specification's own examples of the Base64 sentinel, and the edges.
func TestEncodeHeaderValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"us-west1", "us-west1"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"us west 1", "us west 1"},
		{"\tindented", "=?base64?CWluZGVudGVk?="},
		{"a\tb", "=?base64?YQli?="}, // a tab is a control character
		{"trailing ", "=?base64?dHJhaWxpbmcg?="},
		{"del\x7f", "=?base64?ZGVsfw==?="},
		{"", ""},
		{"=?base64?", "=?base64?"}, // not the whole sentinel
	} {
		if got := EncodeHeaderValue(tc.in); got != tc.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHeaders(t *testing.T) {
	h := Headers("2026-07-28", "tools/call", "grüße")
	if h.Get("MCP-Protocol-Version") != "2026-07-28" || h.Get("Mcp-Method") != "tools/call" ||
		h.Get("Mcp-Name") != "=?base64?"+base64.StdEncoding.EncodeToString([]byte("grüße"))+"?=" {
		t.Errorf("headers %v", h)
	}
	if _, ok := Headers("v", "tools/list", "")[HeaderName]; ok {
		t.Error("Mcp-Name without a name")
	}
}

func TestParamHeaders(t *testing.T) {
	valid := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"flag":{"type":"boolean","x-mcp-header":"Dry-Run"},
		"target":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
		"plain":{"type":"string"},
		"list":{"type":"array","items":{"type":"string"}}}}`
	ps, err := ParamHeaders("t", json.RawMessage(valid))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range ps {
		got[p.Name] = strings.Join(p.Path, ".") + ":" + p.Type
	}
	if len(got) != 4 || got["Zone"] != "target.zone:string" || got["N"] != "n:integer" || got["Dry-Run"] != "flag:boolean" {
		t.Errorf("params %v", got)
	}
	for name, schema := range map[string]string{
		"number type":         `{"properties":{"x":{"type":"number","x-mcp-header":"X"}}}`,
		"object type":         `{"properties":{"x":{"type":"object","x-mcp-header":"X"}}}`,
		"no type":             `{"properties":{"x":{"x-mcp-header":"X"}}}`,
		"duplicate":           `{"properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"string","x-mcp-header":"dup"}}}`,
		"empty":               `{"properties":{"x":{"type":"string","x-mcp-header":""}}}`,
		"not a token":         `{"properties":{"x":{"type":"string","x-mcp-header":"Bad Name"}}}`,
		"CRLF":                `{"properties":{"x":{"type":"string","x-mcp-header":"A\r\nB"}}}`,
		"not a string":        `{"properties":{"x":{"type":"string","x-mcp-header":7}}}`,
		"through items":       `{"properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`,
		"through oneOf":       `{"properties":{"x":{"oneOf":[{"type":"string","x-mcp-header":"X"}]}}}`,
		"through allOf":       `{"allOf":[{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}]}`,
		"through $defs":       `{"$defs":{"d":{"type":"string","x-mcp-header":"D"}},"properties":{"x":{"$ref":"#/$defs/d"}}}`,
		"through if/then":     `{"if":{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}}`,
		"on the root":         `{"type":"string","x-mcp-header":"Root"}`,
		"through additional":  `{"additionalProperties":{"type":"string","x-mcp-header":"A"}}`,
		"through patternProp": `{"patternProperties":{"^x":{"type":"string","x-mcp-header":"P"}}}`,
		"not JSON":            `{"x-mcp-header":`,
	} {
		_, err := ParamHeaders("bad", json.RawMessage(schema))
		var ite *InvalidToolError
		if !errors.As(err, &ite) || ite.Tool != "bad" {
			t.Errorf("%s: want *InvalidToolError, got %v", name, err)
		}
	}
	// A property named "properties", or one that only mentions the
	// annotation in a description, is fine.
	for _, schema := range []string{
		`{"properties":{"properties":{"type":"string","x-mcp-header":"P"}}}`,
		`{"properties":{"x":{"type":"string","description":"see x-mcp-header"}}}`,
	} {
		if _, err := ParamHeaders("ok", json.RawMessage(schema)); err != nil {
			t.Errorf("%s: %v", schema, err)
		}
	}
}

func TestAddParamHeaders(t *testing.T) {
	ps, err := ParamHeaders("t", json.RawMessage(`{"properties":{
		"s":{"type":"string","x-mcp-header":"S"},"i":{"type":"integer","x-mcp-header":"I"},
		"b":{"type":"boolean","x-mcp-header":"B"},"o":{"type":"object","properties":{"z":{"type":"string","x-mcp-header":"Z"}}},
		"missing":{"type":"string","x-mcp-header":"Missing"},"null":{"type":"string","x-mcp-header":"Null"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	err = AddParamHeaders(h, ps, json.RawMessage(`{"s":" x ","i":42,"b":false,"o":{"z":"ü"},"null":null}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Mcp-Param-S": EncodeHeaderValue(" x "), "Mcp-Param-I": "42", "Mcp-Param-B": "false", "Mcp-Param-Z": EncodeHeaderValue("ü")}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers %v: missing and null values must be left out", h)
	}
	for _, args := range []string{`{"i":1.5}`, `{"i":9007199254740993}`, `{"s":["a"]}`, `{"s":`} {
		if err := AddParamHeaders(http.Header{}, ps, json.RawMessage(args)); err == nil {
			t.Errorf("%s: want an error", args)
		}
	}
}

// FuzzParamHeaders: whatever the schema, ParamHeaders never panics, and
// every parameter it accepts has a token name and a path of properties.
func FuzzParamHeaders(f *testing.F) {
	f.Add([]byte(`{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}`))
	f.Add([]byte(`{"properties":{"a":{"items":{"x-mcp-header":"A"}}}}`))
	f.Add([]byte(`{"x-mcp-header":[{"properties":{}}]}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		ps, err := ParamHeaders("f", schema)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range ps {
			if !isToken(p.Name) || len(p.Path) == 0 || seen[strings.ToLower(p.Name)] {
				t.Fatalf("accepted %+v", p)
			}
			seen[strings.ToLower(p.Name)] = true
			if h := p.HeaderName(); strings.ContainsAny(h, "\r\n :") {
				t.Fatalf("header name %q", h)
			}
		}
	})
}

// FuzzEncodeHeaderValue: the result is always a valid header value, and a
// sentinel decodes back to the input.
func FuzzEncodeHeaderValue(f *testing.F) {
	f.Add("plain")
	f.Add(" x\n")
	f.Add("=?base64?x?=")
	f.Fuzz(func(t *testing.T, s string) {
		v := EncodeHeaderValue(s)
		for i := 0; i < len(v); i++ {
			if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
				t.Fatalf("%q encodes to %q", s, v)
			}
		}
		if strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) && len(v) >= len(sentinelPrefix)+len(sentinelSuffix) && v != s {
			b, err := base64.StdEncoding.DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
			if err != nil || string(b) != s {
				t.Fatalf("%q → %q does not decode back", s, v)
			}
		} else if v != s {
			t.Fatalf("%q changed to %q without the sentinel", s, v)
		}
	})
}
