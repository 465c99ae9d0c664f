package jsondec

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
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
// included (a type with a string field tagged with the string option,
// which Unmarshal refuses, is decoded by Unmarshal itself).
func UnmarshalOwned(data []byte, v any) error {
	return unmarshalOwned(data, v, ShareMin)
}

// unmarshalOwned is UnmarshalOwned with the smallest input it shares
// memory with as a parameter, which the tests lower.
func unmarshalOwned(data []byte, v any, shareMin int) error {
	if len(data) < shareMin || stringOption(reflect.TypeOf(v)) {
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

// stringOption reports whether decoding into t can reach a struct field of
// type string tagged with the string option (`json:"id,string"`). The
// decoder refuses that option on a string, but the string unmarshalers of
// setStrings take the field before the decoder looks at its options: such
// a type is decoded as Unmarshal decodes it, so that it fails as it does.
// The answer is kept per type.
func stringOption(t reflect.Type) bool {
	if t == nil {
		return false
	}
	if v, ok := stringOptions.Load(t); ok {
		return v.(bool)
	}
	found := findStringOption(t, map[reflect.Type]bool{})
	stringOptions.Store(t, found)
	return found
}

var stringOptions sync.Map // reflect.Type → bool

func findStringOption(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return findStringOption(t.Elem(), seen)
	case reflect.Map:
		return findStringOption(t.Key(), seen) || findStringOption(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.String && slices.Contains(strings.Split(tag, ",")[1:], "string") {
				return true
			}
			if findStringOption(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
