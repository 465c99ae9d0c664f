package servehttp

import (
	"encoding/json"
	"net/http"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeValue: any header value is read or refused without panic; a
// value that was read is made of what a header may carry, or came from a
// sentinel; every UTF-8 string survives EncodeValue then DecodeValue.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{"us-west1", "=?base64?SGVsbG8sIOS4lueVjA==?=", " padded ", "=?base64??=", "=?base64?=", "\xff", "a\tb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, err := DecodeValue(s); err == nil && !utf8.ValidString(got) {
			t.Fatalf("DecodeValue(%q) = %q: not UTF-8", s, got)
		}
		if !utf8.ValidString(s) {
			return
		}
		enc := EncodeValue(s)
		if _, err := PlainValue(enc); err != nil {
			t.Fatalf("EncodeValue(%q) = %q, which a header cannot carry", s, enc)
		}
		if got, err := DecodeValue(enc); err != nil || got != s {
			t.Fatalf("DecodeValue(EncodeValue(%q)) = %q, %v", s, got, err)
		}
	})
}

// FuzzParamHeaders: any schema and arguments are read or refused without
// panic, and the headers a conforming client would send pass the check.
func FuzzParamHeaders(f *testing.F) {
	f.Add(`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"},"n":{"type":"integer","x-mcp-header":"N"}}}`, `{"r":"x y","n":3}`)
	f.Add(`{"properties":{"a":{"items":[{"x-mcp-header":"A"}]}}}`, `{}`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		ps, err := ParamHeaders(json.RawMessage(schema))
		if err != nil {
			return
		}
		var root map[string]any
		if json.Unmarshal([]byte(args), &root) != nil {
			return
		}
		h := http.Header{}
		for _, p := range ps {
			v, ok := valueAt(any(root), p.Path)
			if !ok {
				continue
			}
			s, isString := v.(string)
			if !isString || p.Type != "string" || !utf8.ValidString(s) {
				return // other types: their text form is the test's own business
			}
			h.Set(p.Header(), EncodeValue(s))
		}
		if m := CheckParams(h, ps, json.RawMessage(args)); m != nil {
			t.Fatalf("conforming headers %v refused: %+v", h, m)
		}
	})
}
