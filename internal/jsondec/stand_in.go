package jsondec

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"reflect"
	"unicode/utf8"
	"unsafe"

	json "github.com/go-json-experiment/json"
)

// The decoder checks a string byte by byte (about 3 GB/s here), which is
// most of what a 16 MiB text result costs to decode. The big string of an
// answer is checked here instead, 8 bytes at a time (about 13 GB/s), and
// the decoder is given the answer with a short stand-in in its place: the
// string is then set where the stand-in lands. When the stand-in does not
// land in a Go string (a json.RawMessage, an any, a named string type),
// the answer is decoded again as it is, so the result is Unmarshal's in
// every case.

// standIn is a JSON string that no server can send by chance or design: it
// holds 16 random bytes drawn once per process, behind a NUL.
var standIn = func() []byte {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
	return []byte(`"\u0000anymcp stand-in ` + hex.EncodeToString(nonce[:]) + `"`)
}()

// bigString finds the string of data that is at least half of data, and
// returns its span, quotes included, when there is one that the decoder
// would copy byte for byte: no escape sequence, no control byte, valid
// UTF-8. Strings are found as the decoder finds them in valid JSON: a quote
// outside a string opens one, the next quote not escaped closes it; in
// invalid JSON whatever is found is harmless, since the decode with the
// stand-in then fails and the answer is decoded as it is.
func bigString(data []byte) (start, end int, ok bool) {
	for pos := 0; pos < len(data); {
		i := bytes.IndexByte(data[pos:], '"')
		if i < 0 {
			return 0, 0, false
		}
		start = pos + i
		end = closingQuote(data, start+1)
		if end < 0 {
			return 0, 0, false
		}
		end++
		if text := data[start+1 : end-1]; 2*len(text) >= len(data) {
			return start, end, plain(text)
		}
		pos = end
	}
	return 0, 0, false
}

// closingQuote returns the index of the first quote at or after from that
// no backslash escapes, or -1.
func closingQuote(data []byte, from int) int {
	for j := from; ; j++ {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for n < j-from && data[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j
		}
	}
}

// plain reports whether text, the inside of a JSON string, has no escape
// sequence, no control byte and is valid UTF-8: what the decoder would copy
// as it is. ASCII goes 32 bytes a step.
func plain(text []byte) bool {
	if bytes.IndexByte(text, '\\') >= 0 {
		return false
	}
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+32 <= len(text); i += 32 {
		w0 := binary.LittleEndian.Uint64(text[i:])
		w1 := binary.LittleEndian.Uint64(text[i+8:])
		w2 := binary.LittleEndian.Uint64(text[i+16:])
		w3 := binary.LittleEndian.Uint64(text[i+24:])
		// A byte below 0x20 borrows, a byte of 0x80 or more has its top
		// bit: either sets a top bit of the word.
		if ((w0-0x20*ones)|w0|(w1-0x20*ones)|w1|(w2-0x20*ones)|w2|(w3-0x20*ones)|w3)&highs != 0 {
			break
		}
	}
	rest := text[i:] // text[:i] is ASCII without control bytes
	for _, c := range rest {
		if c < 0x20 {
			return false
		}
	}
	return utf8.Valid(rest)
}

// unmarshalStandIn decodes data into v with the string at data[start:end]
// (a plain one: see bigString) replaced by standIn, then set where standIn
// landed, as that string, sharing data's memory. It reports false when
// that did not work out — the stand-in landed in no Go string, or twice,
// or the decode failed — and v must then be decoded from data again. The
// decode with the stand-in goes into a new value of v's type, set into v
// only once it worked out: the decoder merges into what v holds, so a
// failed first pass must leave v untouched (the stand-in would otherwise
// stay behind, as a key of a map of a named string type, which never
// reaches the string unmarshaler). For the same reason it does nothing
// (false) unless v points to a zero value.
func unmarshalStandIn(data []byte, start, end int, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || !rv.Elem().IsZero() {
		return false
	}
	fresh := reflect.New(rv.Elem().Type())
	small := make([]byte, 0, start+len(standIn)+len(data)-end)
	small = append(small, data[:start]...)
	small = append(small, standIn...)
	small = append(small, data[end:]...)
	text := data[start+1 : end-1]
	big := unsafe.String(unsafe.SliceData(text), len(text))
	landed := 0
	set := setStrings(func(val []byte, s *string) bool {
		if bytes.Equal(val, standIn) {
			landed++
			*s = big
			return true
		}
		if inner := val[1 : len(val)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			*s = string(inner)
			return true
		}
		return false
	})
	if err := json.Unmarshal(small, fresh.Interface(), opts, json.WithUnmarshalers(set)); err != nil || landed != 1 {
		return false
	}
	rv.Elem().Set(fresh.Elem())
	return true
}
