package jsondec

import (
	"bytes"
	"errors"
	"unicode/utf8"
	"unsafe"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ShareMin is the smallest input UnmarshalOwned may share memory with:
// below it, sharing saves too little to be worth the lookup it costs each
// string.
const ShareMin = 1 << 20

// UnmarshalOwned is Unmarshal for data the caller gives up for good: it
// must never modify data again, nor hand it to anything that might. In
// exchange, a string of data's JSON that makes up at least half of data
// (and data at least ShareMin bytes) is not copied: the Go string decoded
// from it shares data's memory. That is what a large text or image result
// is — one string the size of its message — and it halves the memory its
// call takes: the message's bytes are the result's, with no second copy.
//
// Only a string the decoder would copy byte for byte is shared: one with no
// escape sequence and valid UTF-8 (anything else is decoded as Unmarshal
// decodes it, invalid UTF-8 becoming U+FFFD). Since a shared string is at
// least half of data, keeping it keeps at most as many bytes again alive.
// The result is the same as Unmarshal's in every other way, its errors
// included.
func UnmarshalOwned(data []byte, v any) error {
	return unmarshalOwned(data, v, ShareMin)
}

// unmarshalOwned is UnmarshalOwned with the smallest input it shares
// memory with as a parameter, which the tests lower.
func unmarshalOwned(data []byte, v any, shareMin int) error {
	if len(data) < shareMin {
		return Unmarshal(data, v)
	}
	if start, end, ok := bigString(data); ok && unmarshalStandIn(data, start, end, v) {
		return nil
	}
	share := setStrings(func(val []byte, s *string) bool {
		text := val[1 : len(val)-1] // a string value is quoted
		if 2*len(text) < len(data) || bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text) {
			return false
		}
		*s = unsafe.String(unsafe.SliceData(text), len(text))
		return true
	})
	return json.Unmarshal(data, v, opts, json.WithUnmarshalers(share))
}

// setStrings returns the unmarshalers that decode every JSON string bound
// for a Go string through choose: it gets the string's value, quotes
// included, and either sets the Go string itself (true) or leaves it to
// the decoder's own rules (false). Other JSON kinds (null, a type error)
// get the decoder's own rules too.
func setStrings(choose func(val []byte, s *string) bool) *json.Unmarshalers {
	return json.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *string) error {
		if dec.PeekKind() != '"' {
			return errors.ErrUnsupported
		}
		val, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if choose(val, s) {
			return nil
		}
		return json.Unmarshal(val, s, opts)
	})
}
