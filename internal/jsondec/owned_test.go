package jsondec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// shares reports whether s's bytes lie inside data's memory.
func shares(s string, data []byte) bool {
	if len(s) == 0 || len(data) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(data))
}

type textResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// A large text result is not copied: its string is the input's own bytes,
// and the input is left as it was.
func TestUnmarshalOwnedSharesALargeString(t *testing.T) {
	text := strings.Repeat("abcdefgh", ShareMin/8)
	data := []byte(`{"content":[{"type":"text","text":"` + text + `"}],"isError":false}`)
	before := bytes.Clone(data)
	var got textResult
	if err := UnmarshalOwned(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Content) != 1 || got.Content[0].Text != text || got.Content[0].Type != "text" {
		t.Fatalf("decoded %d items, text of %d bytes", len(got.Content), len(got.Content[0].Text))
	}
	if !shares(got.Content[0].Text, data) {
		t.Error("the large string was copied")
	}
	if shares(got.Content[0].Type, data) {
		t.Error("a small string shares the input's memory")
	}
	if !bytes.Equal(data, before) {
		t.Error("the input was modified")
	}
	allocs := testing.AllocsPerRun(5, func() {
		var r textResult
		_ = UnmarshalOwned(data, &r)
	})
	var r textResult
	copied := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = UnmarshalOwned(data, &r)
		}
	}).AllocedBytesPerOp()
	if copied >= int64(len(text)) {
		t.Errorf("UnmarshalOwned allocates %d bytes (%v allocs) for a %d-byte string", copied, allocs, len(text))
	}
}

// Below ShareMin, or for a string that is less than half of its input, or
// one that must be unescaped or mended, the string is copied; in every
// case the value decoded, and the error, are Unmarshal's.
func TestUnmarshalOwnedCopiesTheRest(t *testing.T) {
	big := strings.Repeat("x", ShareMin)
	for _, tc := range []struct {
		name, in string
		share    bool
	}{
		{"small input", `{"content":[{"type":"text","text":"hello"}]}`, false},
		{"two halves", `{"content":[{"text":"` + big[:ShareMin/2] + `"},{"text":"` + big[:ShareMin/2] + `"}]}`, false},
		{"escaped", `{"content":[{"text":"` + big + `\n"}]}`, false},
		{"invalid UTF-8", `{"content":[{"text":"` + big + "\xff" + `"}]}`, false},
		{"shared", `{"content":[{"text":"` + big + `"}]}`, true},
		{"number for a string", `{"content":[{"text":12}],"pad":"` + big + `"}`, false},
		{"null for a string", `{"content":[{"text":null}],"pad":"` + big + `"}`, false},
		{"truncated", `{"content":[{"text":"` + big, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.in)
			got, _ := sameAsUnmarshal(t, data, func() *textResult { return new(textResult) })
			shared := false
			for _, c := range got.Content {
				shared = shared || shares(c.Text, data)
			}
			if shared != tc.share {
				t.Errorf("shared %v, want %v", shared, tc.share)
			}
		})
	}
}

// FuzzUnmarshalOwned: with sharing allowed for any input, UnmarshalOwned
// decodes exactly what Unmarshal decodes, with the same error, never
// modifies its input, and shares only strings that lie in it.
func FuzzUnmarshalOwned(f *testing.F) {
	for _, s := range []string{
		`{"a":"x","b":["y","z"],"m":{"k":"v"},"any":"w"}`,
		`{"a":"long string here","b":[]}`,
		`{"a":"\u00e9\n","b":["\ud800"]}`,
		"{\"a\":\"\xff\"}",
		`{"A":"x","a":"y"}`,
		`{"a":1}`,
		`{"a":null}`,
		`{"b":["x",2]}`,
		`["a"]`,
		`"str"`,
		`{"r":"a long string here"}`,
		`{"n":"a long string here"}`,
		`{"any":{"k":"a long string here"}}`,
		`{"m":{"a long string here":"v"}}`,
		`{"a":"x\"y","b":["a long string here"]}`,
		`{"a":"xy\\","b":["a long string \\"]}`,
		"{\"a\":\"a long\tstring here\"}",
		`{"a":"é long string here"}`,
		`{"k":{"a long string here":"v"}}`,
	} {
		f.Add([]byte(s))
	}
	type T struct {
		A   string            `json:"a"`
		B   []string          `json:"b"`
		M   map[string]string `json:"m"`
		P   *string           `json:"p"`
		Any any               `json:"any"`
		R   json.RawMessage   `json:"r"`
		N   named             `json:"n"`
		K   map[named]string  `json:"k"`
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		data := bytes.Clone(in)
		var want, got T
		werr := Unmarshal(in, &want)
		gerr := unmarshalOwned(data, &got, 0)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("Unmarshal: %v\nunmarshalOwned: %v", werr, gerr)
		}
		if !bytes.Equal(data, in) {
			t.Fatal("the input was modified")
		}
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if !bytes.Equal(wb, gb) {
			t.Fatalf("Unmarshal: %s\nunmarshalOwned: %s", wb, gb)
		}
		for _, s := range append([]string{got.A}, got.B...) {
			if shares(s, data) && !bytes.Contains(data, []byte(`"`+s+`"`)) {
				t.Fatalf("%q shares memory but is not a string of the input", s)
			}
		}
	})
}

// named is a string type of its own: the stand-in of the big string cannot
// be set in it, so the answer is decoded again as it is.
type named string

// The big string is set where its stand-in lands when that is a Go string;
// wherever else it lands — raw JSON, an any, a string type of its own, a
// map key — the result is still Unmarshal's, and where it is a Go string
// it shares the input's memory.
func TestUnmarshalOwnedStandIn(t *testing.T) {
	type T struct {
		S   string            `json:"s"`
		R   json.RawMessage   `json:"r"`
		Any any               `json:"any"`
		N   named             `json:"n"`
		M   map[string]string `json:"m"`
	}
	big := strings.Repeat("y", ShareMin)
	for i, tc := range []struct {
		in    string
		share bool
	}{
		{`{"s":"` + big + `","n":"x"}`, true},
		{`{"r":"` + big + `","s":"x"}`, false},
		{`{"r":{"deep":["` + big + `"]}}`, false},
		{`{"any":"` + big + `"}`, false},
		{`{"n":"` + big + `"}`, false},
		{`{"m":{"` + big + `":"v"}}`, false},
		{`{"s":"` + big + `","s":"last"}`, false},
		{`{"s":"` + big + `","n":1}`, false},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			data := []byte(tc.in)
			got, err := sameAsUnmarshal(t, data, func() *T { return new(T) })
			if err == nil && shares(got.S, data) != tc.share {
				t.Errorf("S shares the input: %v, want %v", !tc.share, tc.share)
			}
		})
	}
}

// plain agrees with a byte at a time check on every length and every
// position of a bad byte.
func TestPlain(t *testing.T) {
	slow := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c == '\\' {
				return false
			}
		}
		return utf8.Valid(b)
	}
	for n := range 80 {
		for pos := range n {
			for _, c := range []byte{0x00, 0x1f, 0x20, '\\', '"', 0x7f, 0x80, 0xc3, 0xff} {
				b := bytes.Repeat([]byte("a"), n)
				b[pos] = c
				if plain(b) != slow(b) {
					t.Fatalf("%q: plain %v", b, plain(b))
				}
			}
		}
	}
	if !plain([]byte(strings.Repeat("héllo, wörld ", 10))) || plain([]byte(strings.Repeat("ab", 40)+"\xc3")) {
		t.Error("UTF-8 after an ASCII run")
	}
}

// BenchmarkTextResult16MiB: a 16 MiB text result decoded by Unmarshal (a
// copy of the string) and by UnmarshalOwned (the string shares the input).
func BenchmarkTextResult16MiB(b *testing.B) {
	data := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 16<<20) + `"}]}`)
	for _, bc := range []struct {
		name string
		f    func([]byte, any) error
	}{{"Unmarshal", Unmarshal}, {"UnmarshalOwned", UnmarshalOwned}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for range b.N {
				var r textResult
				if err := bc.f(data, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// bigString finds the big string as the decoder reads strings: a quote a
// backslash escapes does not end one, a quote after an escaped backslash
// does.
func TestBigString(t *testing.T) {
	long := strings.Repeat("L", 40)
	for _, tc := range []struct {
		in   string
		want string // the span found, or "" for none
	}{
		{`{"a":"x\"y","b":"` + long + `"}`, `"` + long + `"`},
		{`{"a":"x\\","b":"` + long + `"}`, `"` + long + `"`},
		{`{"a":"\\\"\\","b":["` + long + `"]}`, `"` + long + `"`},
		{`{"` + long + `":1}`, `"` + long + `"`},
		{`{"a":"` + long[:10] + `","b":"` + long[:10] + `"}`, ""},
		{`{"a":"` + long + `\n"}`, ""},
		{`{"a":"` + long + "\x01" + `"}`, ""},
		{`{"a":"` + long, ""},
	} {
		start, end, ok := bigString([]byte(tc.in))
		got := ""
		if ok {
			got = tc.in[start:end]
		}
		if got != tc.want {
			t.Errorf("%s: found %q, want %q", tc.in, got, tc.want)
		}
	}
}

// sameAsUnmarshal decodes data into a new *T with Unmarshal and with
// UnmarshalOwned, each starting from what start gives, and fails unless
// both give the same value and the same error. It returns UnmarshalOwned's
// value and the error.
func sameAsUnmarshal[T any](t *testing.T, data []byte, start func() *T) (*T, error) {
	t.Helper()
	want, got := start(), start()
	werr := Unmarshal(data, want)
	gerr := UnmarshalOwned(data, got)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("Unmarshal: %v; UnmarshalOwned: %v", werr, gerr)
	}
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if !bytes.Equal(wb, gb) {
		t.Fatalf("decoded differently:\nUnmarshal      %.120s\nUnmarshalOwned %.120s", wb, gb)
	}
	return got, gerr
}

// A big string that is the key of a map of a named string type never
// reaches the string unmarshaler, so the decode with the stand-in fails
// to place it: what that decode wrote must not stay in the result (the
// stand-in as a second key), since the answer is then decoded again.
func TestUnmarshalOwnedBigKeyOfNamedType(t *testing.T) {
	key := strings.Repeat("k", ShareMin)
	type result struct {
		Tags map[named]string `json:"tags"`
	}
	sameAsUnmarshal(t, []byte(`{"tags":{"`+key+`":"v"}}`), func() *result { return new(result) })
	sameAsUnmarshal(t, []byte(`{"`+key+`":1}`), func() *map[named]int { return new(map[named]int) })
}

// The decoder refuses the string option on a string field; so must
// UnmarshalOwned, on the shared-string path and the stand-in path alike.
func TestUnmarshalOwnedStringOption(t *testing.T) {
	big := strings.Repeat("y", ShareMin)
	type onString struct {
		Text string `json:"text"`
		ID   string `json:"id,string"`
	}
	type onPointer struct {
		Text string  `json:"text"`
		ID   *string `json:"id,string"`
	}
	type nested struct {
		Items []onString `json:"items"`
	}
	for _, data := range []string{
		`{"text":"` + big + `","id":"7"}`,   // the stand-in path
		`{"text":"` + big + `\n","id":"7"}`, // an escape: the shared-string path
	} {
		sameAsUnmarshal(t, []byte(data), func() *onString { return new(onString) })
		sameAsUnmarshal(t, []byte(data), func() *onPointer { return new(onPointer) })
		sameAsUnmarshal(t, []byte(`{"items":[`+data+`]}`), func() *nested { return new(nested) })
	}
	if !stringOption(reflect.TypeFor[*nested]()) || stringOption(reflect.TypeFor[*textResult]()) {
		t.Error("stringOption misreads a type")
	}
}

// Decoding into a value that already holds something merges into it, as
// Unmarshal does.
func TestUnmarshalOwnedIntoAFilledValue(t *testing.T) {
	type result struct {
		Text string            `json:"text"`
		Keep string            `json:"keep"`
		M    map[string]string `json:"m"`
	}
	data := []byte(`{"text":"` + strings.Repeat("z", ShareMin) + `","m":{"b":"2"}}`)
	sameAsUnmarshal(t, data, func() *result { return &result{Keep: "kept", M: map[string]string{"a": "1"}} })
	var got result
	if err := UnmarshalOwned(data, &got); err != nil || !shares(got.Text, data) {
		t.Errorf("a zero value: err %v, shares %v", err, shares(got.Text, data))
	}
}
