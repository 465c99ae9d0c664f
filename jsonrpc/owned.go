package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/anymcp/anymcp/internal/jsondec"
)

// DecodeOwned is Decode for a buffer the caller hands over and never
// modifies or reuses afterwards, made to read every byte of a large answer
// once: Params and Result may be sub-slices of data, and a response's
// Result is not checked here but by whoever decodes it into its type, in
// the same pass. It returns what Decode returns for every input but one
// whose only fault lies inside a result: DecodeOwned returns that message,
// its Result not valid JSON. Messages the fast path cannot decode exactly
// as encoding/json would go through Decode's own code. Transports use it
// for buffers they allocated for one message (a body, a line, an event).
func DecodeOwned(data []byte) ([]*Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || (data[0] != '[' && data[0] != '{') {
		return Decode(data)
	}
	if data[0] == '{' {
		if end := skipValue(data, 0); end != len(data) {
			return Decode(data)
		}
		if m := decodeOwnedOne(data); m != nil {
			return []*Message{m}, nil
		}
		return Decode(data)
	}
	if err := checkBatchSize(data); err != nil {
		return nil, err
	}
	elems, ok := splitBatch(data)
	if !ok {
		return Decode(data)
	}
	if len(elems) == 0 {
		return nil, newDecodeError("empty batch", data)
	}
	msgs := make([]*Message, 0, len(elems))
	var errs []error
	for _, e := range elems {
		if m := decodeOwnedOne(e); m != nil {
			msgs = append(msgs, m)
			continue
		}
		if !jsondec.Valid(e) {
			// Invalid JSON outside a result: Decode refuses the whole batch.
			return Decode(data)
		}
		m, err := decodeOne(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		msgs = append(msgs, m)
	}
	return msgs, errors.Join(errs...)
}

// MaxBatch is how many messages one batch may hold. A longer one is refused
// whole, before anything is decoded: a line of tiny members (`[{},{},…]`)
// would otherwise cost a hundred times its size in messages and errors.
// (Batches were dropped from MCP in 2025-06-18; a server of 2025-03-26
// that sends one sends a few.)
const MaxBatch = 1024

// checkBatchSize refuses the array data (data[0] is '[') when it holds
// more than MaxBatch elements, counting them without allocating; an array
// that is not well formed is left to the decoder to describe.
func checkBatchSize(data []byte) error {
	n := 0
	i := skipSpace(data, 1)
	if i < len(data) && data[i] == ']' {
		return nil
	}
	for i < len(data) {
		end := skipValue(data, i)
		if end <= i {
			return nil
		}
		if n++; n > MaxBatch {
			return newDecodeError(fmt.Sprintf("a batch of more than %d messages", MaxBatch), data)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ',' {
			return nil
		}
		i = skipSpace(data, i+1)
	}
	return nil
}

// splitBatch returns the elements of the array data (data[0] is '['), each
// a value whose ends are where a JSON scanner would put them, or false when
// the array is not well formed or does not end where data does.
func splitBatch(data []byte) ([][]byte, bool) {
	var elems [][]byte
	i := skipSpace(data, 1)
	if i < len(data) && data[i] == ']' {
		return elems, i+1 == len(data)
	}
	for {
		end := skipValue(data, i)
		if end <= i {
			return nil, false // unclosed, or no value
		}
		elems = append(elems, data[i:end:end])
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return elems, i+1 == len(data)
		default:
			return nil, false
		}
	}
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

// decodeOwnedOne decodes one object whose braces match (skipValue),
// aliasing data, or returns nil for an object to leave to decodeOne: one
// that needs encoding/json's rules, or is not a message (whose error is
// then Decode's own).
func decodeOwnedOne(data []byte) *Message {
	m, ok := sliceMembers(data)
	if !ok || checkMessage(m, data) != nil {
		return nil
	}
	return m
}

// sliceMembers reads the members of the object data into a Message,
// checking its syntax and every member's value but the result's, which it
// only delimits. It reports false when the object is not well formed or
// needs encoding/json's rules: a member name with an escape, a control or
// non-ASCII byte or another case of an envelope member, an envelope member
// given twice, or a value of the wrong type.
func sliceMembers(data []byte) (*Message, bool) {
	// data is delimited by skipValue: it ends with a bracket, so no index
	// below runs past it.
	if len(data) < 2 || data[0] != '{' {
		return nil, false
	}
	m := new(Message)
	seen := 0
	version := false
	i := skipSpace(data, 1)
	if data[i] == '}' {
		return nil, false // {} has no "jsonrpc"
	}
	for {
		if data[i] != '"' {
			return nil, false
		}
		kEnd := skipString(data, i)
		if kEnd < 0 {
			return nil, false
		}
		key := data[i+1 : kEnd-1]
		i = skipSpace(data, kEnd)
		if data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		vEnd := skipValue(data, i)
		if vEnd <= i {
			return nil, false
		}
		val := data[i:vEnd:vEnd]
		if i = skipSpace(data, vEnd); i >= len(data) {
			return nil, false
		}
		last := data[i] == '}'
		if !last && data[i] != ',' {
			return nil, false
		}
		i = skipSpace(data, i+1)

		bit := memberBit(key)
		if bit != seenResult && !jsondec.Valid(val) {
			return nil, false
		}
		if bit == 0 {
			if !plainOtherName(key) {
				return nil, false
			}
		} else {
			if seen&bit != 0 {
				return nil, false
			}
			seen |= bit
		}
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
			if string(val) != "null" {
				s, ok := plainString(val)
				if !ok {
					return nil, false
				}
				m.Method = s
			}
		case seenParams:
			m.Params = val
		case seenResult:
			m.Result = val
		case seenError:
			if string(val) != "null" {
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
		if last {
			return m, version && i == len(data)
		}
		if i >= len(data) {
			return nil, false
		}
	}
}

// plainOtherName reports whether an object member name that is not one of
// the envelope's is surely ignored by encoding/json: no escape, no
// non-ASCII byte (either could spell an envelope name, exactly or up to
// case folding), no control byte (not valid in JSON) and not another case
// of an envelope name.
func plainOtherName(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
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

// The scanning helpers below only delimit values: they find where a value
// ends as a JSON scanner would if the value is valid, and never read past
// data, whatever it holds. A value they delimit is not thereby valid.

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space (len(data) if none).
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
// data[i] (a '"'), or -1 when it does not end.
func skipString(data []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		// The quote ends the string unless an odd number of backslashes
		// escapes it (data[i] is a quote, so the count stops there).
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

// skipValue returns the index just past the value that starts at data[i]:
// a string, an object or array whose brackets balance, or the run of bytes
// up to the next delimiter; -1 when a string or a bracket does not close
// before data ends. i may be len(data): the value is then empty.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				if i = skipString(data, i); i < 0 {
					return -1
				}
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
		return -1
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
