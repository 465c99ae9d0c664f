package jsonrpc

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/anymcp/anymcp/internal/jsondec"
)

// within reports whether b is a sub-slice of buf.
func within(b, buf []byte) bool {
	if len(b) == 0 || len(buf) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(buf))
}

// sameMessages reports how two decodings differ, or "".
func sameMessages(a, b []*Message, aerr, berr error) string {
	if (aerr == nil) != (berr == nil) || (aerr != nil && aerr.Error() != berr.Error()) {
		return "errors differ: " + errText(aerr) + " | " + errText(berr)
	}
	if len(a) != len(b) {
		return "message counts differ"
	}
	for i := range a {
		x, y := a[i], b[i]
		switch {
		case x.ID != y.ID:
			return "ids differ: " + x.ID.Raw() + " | " + y.ID.Raw()
		case x.Method != y.Method:
			return "methods differ: " + x.Method + " | " + y.Method
		case (x.Params == nil) != (y.Params == nil) || !bytes.Equal(x.Params, y.Params):
			return "params differ: " + string(x.Params) + " | " + string(y.Params)
		case (x.Result == nil) != (y.Result == nil) || !bytes.Equal(x.Result, y.Result):
			return "results differ: " + string(x.Result) + " | " + string(y.Result)
		case !reflect.DeepEqual(x.Error, y.Error):
			return "errors objects differ"
		}
	}
	return ""
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

var ownedCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	` {"jsonrpc" : "2.0" , "id" : "a\"b" , "result" : { "content" : [ {"type":"text","text":"x\\"} ] } } ` + "\n",
	`{"result":null,"id":7,"jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope","data":{"a":[1,2]}}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":null}`,
	`{"jsonrpc":"2.0","id":1,"result":"s","ttlMs":5,"extra":[1,{"x":"}"}]}`,
	`{"jsonrpc":"2.0","id":1,"method":null,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"caf\u00e9"}`,
	`{"jsonrpc":"2.0","id":1,"method":"bad` + "\xff" + `"}`,
	`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"paramſ":{},"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"par\u0061ms":{},"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"result":2}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a"},"error":{"message":"b"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"a"}}`,
	`{"jsonrpc":"2.0","id":1,"error":[]}`,
	`{"jsonrpc":"2.0","id":{},"result":1}`,
	`{"jsonrpc":"2.0","id":1e400,"result":1}`,
	`{"jsonrpc":"2\u002e0","id":1,"result":1}`,
	`{"jsonrpc":null,"id":1,"result":1}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`,
	`{}`, `[]`, `[1]`, `42`, `"s"`, `null`, ``, `{`, `[{"jsonrpc":"2.0","id":1,"result":1}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}, {"jsonrpc":"2.0","method":"m","params":[]} ,{"bad":1},null,{"jsonrpc":"2.0","ID":2,"result":3}]`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}\v",
}

func TestDecodeOwnedMatchesDecode(t *testing.T) {
	for _, in := range ownedCases {
		a, aerr := Decode([]byte(in))
		b, berr := DecodeOwned([]byte(in))
		if d := sameMessages(a, b, aerr, berr); d != "" {
			t.Errorf("%s: %s", in, d)
		}
	}
}

// resultFaults are messages whose only fault lies inside the result, each
// with the id of its response.
var resultFaults = map[string]string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"isError":tru}}`: "1",
	`{"jsonrpc":"2.0","id":"a","result":[1,2,]}`:                                               `"a"`,
	`{"result":{"a" 1},"jsonrpc":"2.0","id":3}`:                                                "3",
	`{"jsonrpc":"2.0","id":4,"result":"` + "\x01" + `"}`:                                       "4",
	`{"jsonrpc":"2.0","id":5,"result":{"a":[}]}`:                                               "5",
}

// A fault inside a result is left to the result's decoder: DecodeOwned
// returns the response (so that its call gets an error, not a timeout)
// where Decode refuses the whole message; a fault anywhere else is refused
// by both.
func TestDecodeOwnedLeavesTheResultToItsDecoder(t *testing.T) {
	for in, id := range resultFaults {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("%s: Decode accepted it", in)
		}
		msgs, err := DecodeOwned([]byte(in))
		if err != nil || len(msgs) != 1 {
			t.Errorf("%s: DecodeOwned: %d messages, %v", in, len(msgs), err)
			continue
		}
		m := msgs[0]
		if m.ID.Raw() != id || !m.IsResponse() || jsondec.Valid(m.Result) {
			t.Errorf("%s: id %s, response %v, result %s", in, m.ID.Raw(), m.IsResponse(), m.Result)
		}
		var v any
		if jsondec.Unmarshal(m.Result, &v) == nil {
			t.Errorf("%s: the result's decoder accepted %s", in, m.Result)
		}
	}
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{},"extra":tru}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":tru}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x","data":[1,]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{} "x":1}`,
		`{"jsonrpc":"2.0","id":1,"result":{},}`,
		`{"jsonrpc":"2.0","id":1,"result":}`,
		`{"jsonrpc":"2.0","id":1,"result":{"a":"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"re\x01\":1,\"result\":{}}",
		`[{"jsonrpc":"2.0","id":1,"result":{}} {"jsonrpc":"2.0","id":2,"result":{}}]`,
		`[{"jsonrpc":"2.0","id":1,"result":{}},]`,
	} {
		a, aerr := Decode([]byte(in))
		b, berr := DecodeOwned([]byte(in))
		if berr == nil {
			t.Errorf("%s: DecodeOwned accepted it", in)
		}
		if d := sameMessages(a, b, aerr, berr); d != "" {
			t.Errorf("%s: %s", in, d)
		}
	}
}

func TestDecodeOwnedAliases(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]}}`,
		`[{"jsonrpc":"2.0","id":1,"result":[]},{"jsonrpc":"2.0","method":"m","params":{}}]`,
	} {
		data := []byte(in)
		msgs, err := DecodeOwned(data)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		for _, m := range msgs {
			for _, raw := range [][]byte{m.Params, m.Result} {
				if raw != nil && (!within(raw, data) || cap(raw) != len(raw)) {
					t.Errorf("%s: %s was copied, or may be appended to in place", in, raw)
				}
			}
		}
	}
}

func FuzzDecodeOwned(f *testing.F) {
	for _, in := range ownedCases {
		f.Add([]byte(in))
	}
	for in := range resultFaults {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, aerr := Decode(bytes.Clone(data))
		own := bytes.Clone(data)
		b, berr := DecodeOwned(own)
		// Where every result DecodeOwned returned is valid JSON, the two
		// agree; where one is not, Decode refused the input.
		resultsValid := true
		for _, m := range b {
			if m.Result != nil && !jsondec.Valid(m.Result) {
				resultsValid = false
			}
		}
		if !resultsValid && aerr == nil {
			t.Fatalf("%q: Decode accepted what DecodeOwned returned with an invalid result", data)
		}
		if d := sameMessages(a, b, aerr, berr); resultsValid && d != "" {
			t.Fatalf("%q: %s", data, d)
		}
		for _, m := range b {
			var errData []byte
			if m.Error != nil {
				errData = m.Error.Data
			}
			for _, raw := range [][]byte{m.Params, errData} {
				if raw != nil && !jsondec.Valid(raw) {
					t.Fatalf("%q: DecodeOwned returned invalid JSON outside a result: %s", data, raw)
				}
			}
		}
		for _, m := range b {
			for _, raw := range [][]byte{m.Params, m.Result} {
				if raw != nil && within(raw, own) && cap(raw) != len(raw) {
					t.Fatalf("%q: an aliased value may be appended to in place", data)
				}
			}
		}
	})
}

// benchMessages are a typical small answer and a 16 MiB tool result.
var benchMessages = map[string][]byte{
	"small": []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello, benchmark"}],"isError":false}}`),
	"16MiB": []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 16<<20) + `"}],"isError":false}}`),
}

func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"small", "16MiB"} {
		data := benchMessages[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeOwned(b *testing.B) {
	for _, name := range []string{"small", "16MiB"} {
		data := benchMessages[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				// The input is never written to, so handing the same one
				// over again is safe here.
				if _, err := DecodeOwned(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
