package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestIDRoundTrip(t *testing.T) {
	for _, in := range []string{`1`, `-7`, `1.5e3`, `"abc"`, `"a\"b"`, `""`, `9007199254740993`} {
		data := `{"jsonrpc":"2.0","id":` + in + `,"result":{}}`
		m, err := DecodeMessage([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, err := Encode(&Message{ID: m.ID, Result: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != data {
			t.Errorf("id %s came back as %s", in, out)
		}
	}
}

func TestIDConstructors(t *testing.T) {
	if n, ok := Int(42).Int64(); !ok || n != 42 {
		t.Errorf("Int(42).Int64() = %d, %v", n, ok)
	}
	if _, ok := String("42").Int64(); ok {
		t.Error(`String("42") must not read as a number`)
	}
	if got := String("a\nb").Raw(); got != `"a\nb"` {
		t.Errorf("String raw = %s", got)
	}
	if !(ID{}).IsZero() || Int(0).IsZero() {
		t.Error("IsZero wrong")
	}
}

func TestDecodeKinds(t *testing.T) {
	tests := []struct {
		in                          string
		request, notification, resp bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, true, false, false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, true, false},
		{`{"jsonrpc":"2.0","id":"x","result":{"a":1}}`, false, false, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, false, false, true},
		{`{"jsonrpc":"2.0","id":3,"result":{},"ttlMs":5,"extra":[1]}`, false, false, true},
	}
	for _, tt := range tests {
		m, err := DecodeMessage([]byte(tt.in))
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if m.IsRequest() != tt.request || m.IsNotification() != tt.notification || m.IsResponse() != tt.resp {
			t.Errorf("%s: request=%v notification=%v response=%v", tt.in, m.IsRequest(), m.IsNotification(), m.IsResponse())
		}
	}
}

func TestDecodeKeepsRawPayload(t *testing.T) {
	m, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":1.50}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Params) != `{"name":"x","arguments":{"n":1.50}}` {
		t.Errorf("params = %s", m.Params)
	}
}

func TestDecodeInvalid(t *testing.T) {
	for _, in := range []string{
		``, `hello`, `{"jsonrpc":"2.0"`, `42`, `"str"`, `{}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":true,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`,
		`[]`,
	} {
		_, err := Decode([]byte(in))
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%q: want *DecodeError, got %v", in, err)
		}
	}
}

func TestDecodeBatch(t *testing.T) {
	in := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"bad":1}]`
	msgs, err := Decode([]byte(in))
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	if err == nil {
		t.Error("the invalid member must be reported")
	}
	if !msgs[0].IsResponse() || !msgs[1].IsNotification() {
		t.Error("batch members out of order or misread")
	}
	if _, err := DecodeMessage([]byte(in)); err == nil {
		t.Error("DecodeMessage must refuse a batch")
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		m    Message
		want string
	}{
		{Message{ID: Int(1), Method: "ping"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{Message{Method: "a\"b\n\x01é", Params: json.RawMessage(`{"x":1}`)}, `{"jsonrpc":"2.0","method":"a\"b\n\u0001é","params":{"x":1}}`},
		{Message{ID: String("s"), Result: json.RawMessage(`{"ok":true}`)}, `{"jsonrpc":"2.0","id":"s","result":{"ok":true}}`},
		{Message{ID: Int(2)}, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{Message{ID: Int(3), Error: NewError(CodeMethodNotFound, "nope")}, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}`},
		{Message{Error: NewError(CodeParseError, "bad")}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`},
	}
	for _, tt := range tests {
		got, err := Encode(&tt.m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("invalid JSON: %s", got)
		}
	}
	if _, err := Encode(&Message{ID: Int(1), Method: "x", Params: json.RawMessage(`{bad`)}); err == nil {
		t.Error("invalid params must be refused")
	}
	if got, _ := Encode(&Message{Method: "\xff"}); !strings.Contains(string(got), `\ufffd`) {
		t.Errorf("invalid UTF-8 must be replaced: %s", got)
	}
}

func TestErrorMessages(t *testing.T) {
	e := &HTTPError{Method: "POST", URL: "http://h/mcp", StatusCode: 500, RPCError: NewError(CodeInternalError, "boom")}
	if !strings.Contains(e.Error(), "500") || !strings.Contains(e.Error(), "boom") {
		t.Errorf("HTTPError text %q", e.Error())
	}
	var rpc *Error
	if !errors.As(e, &rpc) || rpc.Code != CodeInternalError {
		t.Error("HTTPError must unwrap to its JSON-RPC error")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":"a","result":{}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, _ := Decode(data)
		for _, m := range msgs {
			out, err := Encode(m)
			if err != nil {
				continue
			}
			if _, err := DecodeMessage(out); err != nil {
				t.Fatalf("re-encoded message does not decode: %s: %v", out, err)
			}
		}
	})
}

func TestRedirectErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		e    RedirectError
		want string
	}{
		{RedirectError{Method: "POST", Status: 307, From: "http://127.0.0.1:8080/mcp", To: "http://localhost:9090/x?k=…", Reason: RedirectCrossOrigin},
			"POST http://127.0.0.1:8080/mcp → 307 to http://localhost:9090/x?k=…: refused: another origin (http://localhost:9090, not http://127.0.0.1:8080); nothing was sent there"},
		{RedirectError{Method: "POST", Status: 302, From: "http://h/mcp", To: "http://h/other", Reason: RedirectMethodChange},
			"POST http://h/mcp → 302 to http://h/other: refused: following it would turn the POST into a GET and drop its body"},
		{RedirectError{Method: "GET", Status: 308, From: "http://h/a", To: "http://h/b", Reason: RedirectTooMany, Limit: 5},
			"GET http://h/a → 308 to http://h/b: refused: more than 5 redirects in a row"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q\nwant      %q", got, tc.want)
		}
	}
}

// BenchmarkEncode: a typical tools/call request, whose params are checked
// before they are written out.
func BenchmarkEncode(b *testing.B) {
	m := &Message{ID: Int(42), Method: "tools/call",
		Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hello, benchmark"},"_meta":{"progressToken":7}}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(m); err != nil {
			b.Fatal(err)
		}
	}
}

// Encode writes Params and Result as they are, so it refuses them when they
// are not one JSON value, judged as encoding/json.Valid judges it.
func TestEncodeChecksRawJSON(t *testing.T) {
	for _, raw := range []string{`{"a":1}`, `[1,2]`, `"s"`, "{\"a\":\"\xff\"}", `{"a":1,"a":2}`, `{"a":`, `{"a":1}x`, `{'a':1}`, `{"a":1}{}`} {
		want := json.Valid([]byte(raw))
		for _, m := range []*Message{
			{ID: Int(1), Method: "m", Params: json.RawMessage(raw)},
			{ID: Int(1), Result: json.RawMessage(raw)},
		} {
			b, err := Encode(m)
			if (err == nil) != want {
				t.Errorf("%q: error %v, want valid=%v", raw, err, want)
				continue
			}
			if err == nil && !bytes.Contains(b, []byte(raw)) {
				t.Errorf("%q: encoded as %s", raw, b)
			}
		}
	}
}
