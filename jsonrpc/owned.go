package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/anymcp/anymcp/internal/jsondec"
)

// DecodeOwned is Decode for a buffer the caller hands over: it returns the
// same messages and errors as Decode for every input, but the Params and
// Result of the messages may be sub-slices of data instead of copies, so a large result is not copied a second time.
//
// The caller gives up data: it must neither modify nor reuse it afterwards,
// for as long as any of the returned messages is in use. Transports use it
// for buffers they allocated for one message (a body, a line, an event) and
// never touch again.
//
// The input is validated once (json.Valid); the envelope is then sliced out
// of it without another pass of the JSON scanner over params and result.
// Messages the fast path does not handle exactly as encoding/json would
// (escaped or case-folded member names, repeated members, type errors, an
// invalid envelope) are decoded by Decode's own code instead, which copies.
func DecodeOwned(data []byte) ([]*Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || (data[0] != '[' && data[0] != '{') || !jsondec.Valid(data) {
		return Decode(data)
	}
	if data[0] == '{' {
		m, err := decodeOwnedOne(data)
		if err != nil {
			return nil, err
		}
		return []*Message{m}, nil
	}
	var elems [][]byte
	i := skipSpace(data, 1)
	for data[i] != ']' {
		end := skipValue(data, i)
		elems = append(elems, data[i:end:end])
		i = skipSpace(data, end)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if len(elems) == 0 {
		return nil, newDecodeError("empty batch", data)
	}
	msgs := make([]*Message, 0, len(elems))
	var errs []error
	for _, e := range elems {
		var m *Message
		var err error
		if e[0] == '{' {
			m, err = decodeOwnedOne(e)
		} else {
			m, err = decodeOne(e)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		msgs = append(msgs, m)
	}
	return msgs, errors.Join(errs...)
}

// The members of the envelope, as bits of a set.
const (
	seenJSONRPC = 1 << iota
	seenID
	seenMethod
	seenParams
	seenResult
	seenError
)

// memberNames are the envelope's member names, in the order of their bits.
var memberNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// memberBit returns the bit of an envelope member name, or 0.
func memberBit(key []byte) int {
	switch string(key) {
	case "jsonrpc":
		return seenJSONRPC
	case "id":
		return seenID
	case "method":
		return seenMethod
	case "params":
		return seenParams
	case "result":
		return seenResult
	case "error":
		return seenError
	}
	return 0
}

// decodeOwnedOne decodes one object, known to be valid JSON, aliasing data.
// Whatever it cannot decode exactly as encoding/json would go to decodeOne.
func decodeOwnedOne(data []byte) (*Message, error) {
	m, ok := sliceMembers(data)
	if !ok {
		return decodeOne(data)
	}
	if err := checkMessage(m, data); err != nil {
		return nil, err
	}
	return m, nil
}

// sliceMembers reads the members of the object data (valid JSON) into a
// Message. It reports false when the object needs encoding/json's rules:
// a member name with an escape, a non-ASCII byte or another case of an
// envelope member, an envelope member given twice, or a value of the
// wrong type.
func sliceMembers(data []byte) (*Message, bool) {
	m := new(Message)
	seen := 0
	version := false
	i := skipSpace(data, 1)
	for data[i] != '}' {
		kEnd := skipString(data, i)
		key := data[i+1 : kEnd-1]
		i = skipSpace(data, kEnd)
		i = skipSpace(data, i+1) // past ':'
		vEnd := skipValue(data, i)
		val := data[i:vEnd:vEnd]
		i = skipSpace(data, vEnd)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}

		bit := memberBit(key)
		if bit == 0 {
			if !plainOtherName(key) {
				return nil, false
			}
			continue
		}
		if seen&bit != 0 {
			return nil, false
		}
		seen |= bit
		switch bit {
		case seenJSONRPC:
			if string(val) != `"2.0"` {
				return nil, false
			}
			version = true
		case seenID:
			if err := m.ID.UnmarshalJSON(val); err != nil {
				return nil, false
			}
		case seenMethod:
			if string(val) == "null" {
				continue
			}
			s, ok := plainString(val)
			if !ok {
				return nil, false
			}
			m.Method = s
		case seenParams:
			m.Params = val
		case seenResult:
			m.Result = val
		case seenError:
			if string(val) == "null" {
				continue
			}
			if val[0] != '{' {
				return nil, false
			}
			e := new(Error)
			if err := json.Unmarshal(val, e); err != nil {
				return nil, false
			}
			m.Error = e
		}
	}
	return m, version
}

// plainOtherName reports whether an object member name that is not one of
// the envelope's is surely ignored by encoding/json: no escape, no
// non-ASCII byte (either could spell an envelope name, exactly or up to
// case folding) and not another case of an envelope name.
func plainOtherName(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	for _, name := range memberNames {
		if len(name) == len(key) && bytes.EqualFold(key, []byte(name)) {
			return false
		}
	}
	return true
}

// plainString returns the value of a JSON string without escapes whose
// bytes are valid UTF-8: what encoding/json would decode it to.
func plainString(val []byte) (string, bool) {
	if val[0] != '"' {
		return "", false
	}
	s := val[1 : len(val)-1]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return "", false
	}
	return string(s), true
}

// The scanning helpers below work on input already known to be valid JSON
// (json.Valid), so they only look for where each value ends.

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string that starts at
// data[i] (a '"').
func skipString(data []byte, i int) int {
	j := i + 1
	for {
		j += bytes.IndexByte(data[j:], '"')
		// The quote ends the string unless an odd number of backslashes
		// escapes it.
		n := 0
		for data[j-1-n] == '\\' {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// skipValue returns the index just past the value that starts at data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for {
			switch data[i] {
			case '"':
				i = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	default: // a number, true, false or null
		for i < len(data) {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}
