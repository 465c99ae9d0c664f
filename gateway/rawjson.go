package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/jsonrpc"
)

// The gateway's one reader of raw JSON: the members of an object and the
// elements of an array as sent, found by exact name, and edits that keep
// every other byte. It reads what jsondec.Valid accepts (encoding/json's
// leniencies); a name sent twice, or in other letter case, is ambiguous
// (only), never guessed.

// A member is one member of a JSON object, as sent.
type member struct {
	key        []byte // decoded
	rawKey     []byte // as sent, quotes included
	val        []byte // as sent
	start, end int    // val's offsets in the object
}

var errNotObject = errors.New("not a JSON object")

// scanObject reads the members of the JSON object obj, in order, and the
// offset of its closing brace. Anything but one valid object is an error.
func scanObject(obj []byte) ([]member, int, error) {
	return scanObjectInto(nil, obj)
}

// scanObjectInto is scanObject appending to ms[:0], to reuse its room.
func scanObjectInto(ms []member, obj []byte) ([]member, int, error) {
	if !jsondec.Valid(obj) {
		return nil, 0, errors.New("not valid JSON")
	}
	i := skipSpace(obj, 0)
	if obj[i] != '{' {
		return nil, 0, errNotObject
	}
	ms, closeAt := membersInto(ms, obj)
	return ms, closeAt, nil
}

// members reads the members of obj, a valid JSON object (a part of one
// that scanObject or jsondec.Valid passed), without checking it again.
func members(obj []byte) ([]member, int) { return membersInto(nil, obj) }

// membersInto is members appending to ms[:0].
func membersInto(ms []member, obj []byte) ([]member, int) {
	if ms == nil {
		ms = make([]member, 0, 8)
	}
	ms = ms[:0]
	i := skipSpace(obj, 0) + 1 // past {
	for {
		i = skipSpace(obj, i)
		switch obj[i] {
		case '}':
			return ms, i
		case ',':
			i = skipSpace(obj, i+1)
		}
		ks := i
		ke := skipString(obj, i)
		i = skipSpace(obj, ke) + 1 // past :
		vs := skipSpace(obj, i)
		ve := skipValue(obj, vs)
		ms = append(ms, member{key: keyAt(obj[ks:ke]), rawKey: obj[ks:ke], val: obj[vs:ve], start: vs, end: ve})
		i = ve
	}
}

// elements returns the elements of arr, a valid JSON array, as slices of
// it; nil when arr is no array.
func elements(arr []byte) []json.RawMessage {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil
	}
	out := []json.RawMessage{}
	for i++; ; {
		i = skipSpace(arr, i)
		switch arr[i] {
		case ']':
			return out
		case ',':
			i = skipSpace(arr, i+1)
		}
		e := skipValue(arr, i)
		out = append(out, arr[i:e])
		i = e
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the end of the valid JSON value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// keyAt decodes a valid JSON string literal, sharing its bytes when it
// holds no escape.
func keyAt(lit []byte) []byte {
	if bytes.IndexByte(lit, '\\') < 0 {
		return lit[1 : len(lit)-1]
	}
	var s string
	_ = json.Unmarshal(lit, &s)
	return []byte(s)
}

// stringValue decodes val, a valid JSON value, when it is a string.
func stringValue(val []byte) (string, bool) {
	if len(val) == 0 || val[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(val, '\\') < 0 && utf8.Valid(val) {
		return string(val[1 : len(val)-1]), true
	}
	var s string
	return s, json.Unmarshal(val, &s) == nil
}

// only returns the member key of ms, nil when there is none. A key sent
// twice, or in another case too (a decoder that ignores case could read
// either), is an error: the view never guesses which one counts.
func only(ms []member, key string) (*member, error) {
	var found *member
	for i := range ms {
		if !strings.EqualFold(string(ms[i].key), key) {
			continue
		}
		if found != nil || string(ms[i].key) != key {
			return nil, fmt.Errorf("the member %q is ambiguous", key)
		}
		found = &ms[i]
	}
	return found, nil
}

// stringMember is the string member key of a request's params.
func stringMember(method string, ms []member, key string) (string, *jsonrpc.Error) {
	m, err := only(ms, key)
	if err != nil {
		return "", badParams(method, err.Error())
	}
	if m == nil {
		return "", badParams(method, key+" must be a string")
	}
	s, ok := stringValue(m.val)
	if !ok {
		return "", badParams(method, key+" must be a string")
	}
	return s, nil
}

// stringOf is the string member key of ms, "" when absent, ambiguous or
// not a string.
func stringOf(ms []member, key string) string {
	m, err := only(ms, key)
	if err != nil || m == nil {
		return ""
	}
	s, _ := stringValue(m.val)
	return s
}

// An edit replaces obj[start:end] with val.
type edit struct {
	start, end int
	val        []byte
}

// splice applies edits (which do not overlap) to a copy of obj.
func splice(obj []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	out := make([]byte, 0, len(obj)+64)
	at := 0
	for _, e := range edits {
		out = append(append(out, obj[at:e.start]...), e.val...)
		at = e.end
	}
	return append(out, obj[at:]...)
}

// withMember returns the JSON object obj with the member key set to val
// (obj has no such member yet).
func withMember(obj json.RawMessage, key string, val []byte) json.RawMessage {
	ms, closeAt, err := scanObject(obj)
	if err != nil {
		return obj
	}
	add := append(quoteJSON(key), ':')
	if len(ms) > 0 {
		add = append([]byte{','}, add...)
	}
	return splice(obj, []edit{{closeAt, closeAt, append(add, val...)}})
}

// joinArray is the JSON array of items.
func joinArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// quoteJSON is s as a JSON string, its HTML characters kept as they are.
func quoteJSON(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// rawParams returns params as JSON.
func rawParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return json.RawMessage(`{}`), nil
	case json.RawMessage:
		if len(bytes.TrimSpace(p)) == 0 || string(p) == "null" {
			return json.RawMessage(`{}`), nil
		}
		return p, nil
	case []byte:
		return rawParams(json.RawMessage(p))
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("params do not encode: %w", err)
	}
	return b, nil
}

// paramsObject reads method's params as a JSON object: its raw bytes
// and its members, or the -32602 error that says which it is not.
func paramsObject(method string, params any) (json.RawMessage, []member, error) {
	raw, err := rawParams(params)
	if err != nil {
		return nil, nil, badParams(method, err.Error())
	}
	ms, _, err := scanObject(raw)
	if err != nil {
		return nil, nil, badParams(method, "params must be a JSON object")
	}
	return raw, ms, nil
}

// setResult gives raw to the caller's result: the bytes themselves to a
// *json.RawMessage, decoded to anything else.
func setResult(raw json.RawMessage, result any) error {
	switch r := result.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*r = raw
		return nil
	}
	return json.Unmarshal(raw, result)
}

// withName returns the JSON object raw with the value of its top-level
// "name" member (every one, should the server have sent it twice)
// replaced by name. Every other byte is as the server sent it: members
// in its order, members no type of this module knows kept.
func withName(raw json.RawMessage, name string) (json.RawMessage, error) {
	ms, _, err := scanObject(raw)
	if err != nil {
		return nil, errNoName
	}
	var edits []edit
	for _, m := range ms {
		if string(m.key) == "name" {
			edits = append(edits, edit{m.start, m.end, quoteJSON(name)})
		}
	}
	if len(edits) == 0 {
		return nil, errNoName
	}
	return splice(raw, edits), nil
}

var errNoName = errors.New("not a JSON object with a name")

// isString says whether val, a JSON value as sent, is the string s as
// quoteJSON writes it: s is printable ASCII but " and \, written as it is.
func isString(val []byte, s string) bool {
	if len(val) != len(s)+2 || val[0] != '"' || val[len(val)-1] != '"' || string(val[1:len(val)-1]) != s {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\' {
			return false
		}
	}
	return true
}
