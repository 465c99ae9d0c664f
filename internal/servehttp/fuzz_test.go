package servehttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
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

// FuzzEventID: any Last-Event-ID is parsed or refused without panic, and
// every id the log makes parses back to its stream and number.
func FuzzEventID(f *testing.F) {
	for _, s := range []string{"3-14", "a-b-2", "3.14", "-", "3-99999999999999999999"} {
		f.Add(s, 7)
	}
	f.Fuzz(func(t *testing.T, id string, seq int) {
		if s, n, ok := ParseEventID(id); ok && (n < 0 || s == "") {
			t.Fatalf("ParseEventID(%q) = %q, %d", id, s, n)
		}
		if seq < 0 || id == "" || strings.ContainsAny(id, " \t") {
			return
		}
		if s, n, ok := ParseEventID(EventID(id, seq)); !ok || s != id || n != seq {
			t.Fatalf("ParseEventID(EventID(%q, %d)) = %q, %d, %v", id, seq, s, n, ok)
		}
	})
}

// FuzzWriteEvent: the data of any event reads back, as a client joins its
// data lines, as the data with its line ends made LF.
func FuzzWriteEvent(f *testing.F) {
	f.Add("1-1", "message", []byte("a\r\nb\rc\n"))
	f.Fuzz(func(t *testing.T, id, name string, data []byte) {
		var b bytes.Buffer
		if err := WriteEvent(&b, id, name, data); err != nil {
			return
		}
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
		if got := readData(b.String()); got != want {
			t.Fatalf("data %q read back as %q", want, got)
		}
		if strings.Count(b.String(), "\n\n") != 1 || !strings.HasSuffix(b.String(), "\n\n") {
			t.Fatalf("not one event: %q", b.String())
		}
	})
}
