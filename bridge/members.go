package bridge

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/anymcp/anymcp/jsonrpc"
)

// The bridge reads a request's params and an upstream's result member by
// member, without reflection: what it forwards it slices, not copies, so
// a call costs a handful of allocations where a decode into maps and a
// re-encode cost hundreds.

// member is one member of a JSON object: its key as Go reads it and its
// value as written; span is the member's text (key through value).
type member struct {
	key  string
	val  json.RawMessage
	span []byte
}

// knownKeys are keys the bridge meets on every call, interned so that
// reading them allocates nothing.
var knownKeys = map[string]string{}

func init() {
	for _, k := range append([]string{"name", "arguments", "_meta", "uri", "cursor", "task",
		"inputResponses", "requestState", "content", "structuredContent", "isError",
		"resultType", "ttlMs", "cacheScope"}, ownMeta...) {
		knownKeys[k] = k
	}
}

// eachMember calls f with each member of data, a JSON object, in order,
// until f returns false. It returns false when data is not valid JSON or
// not an object (f is then not called).
func eachMember(data []byte, f func(m member) bool) bool {
	if !json.Valid(data) {
		return false
	}
	i := space(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = space(data, i+1)
	if data[i] == '}' {
		return true
	}
	for {
		start := i
		end := stringEnd(data, i)
		key, ok := memberKey(data[i+1 : end-1])
		if !ok {
			return false
		}
		i = space(data, end)
		i = space(data, i+1) // past ':'
		vend := valueEnd(data, i)
		if !f(member{key: key, val: data[i:vend], span: data[start:vend]}) {
			return true
		}
		i = space(data, vend)
		if data[i] == '}' {
			return true
		}
		i = space(data, i+1) // past ','
	}
}

// memberKey returns the Go string of a key's text: interned when known, and
// decoded as encoding/json decodes it when it holds escapes or invalid
// UTF-8.
func memberKey(text []byte) (string, bool) {
	if k, ok := knownKeys[string(text)]; ok {
		return k, true
	}
	if bytes.IndexByte(text, '\\') < 0 && utf8.Valid(text) {
		return string(text), true
	}
	var s string
	quoted := make([]byte, 0, len(text)+2)
	quoted = append(append(append(quoted, '"'), text...), '"')
	if json.Unmarshal(quoted, &s) != nil {
		return "", false
	}
	return s, true
}

// plainKey reports whether a key's text is written as json.Marshal would
// write it back: no escapes, nothing HTML-escaped, valid UTF-8.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			return false
		}
	}
	return true
}

// space returns the index of the first byte at or after i that is not
// JSON white space.
func space(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at data[i]
// (valid JSON).
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// valueEnd returns the index just past the value starting at data[i]
// (valid JSON).
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = stringEnd(data, i)
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
		return len(data)
	}
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// rawMap reads data, a JSON object, into a map of its members' values
// (slices of data; a repeated key keeps its last value, as
// encoding/json's); folded reports a key that equals want only without
// regard to case. ok is false when data is not an object.
func rawMap(data []byte, want string) (m map[string]json.RawMessage, folded, ok bool) {
	m = make(map[string]json.RawMessage, 4)
	ok = eachMember(data, func(mb member) bool {
		m[mb.key] = mb.val
		if mb.key != want && strings.EqualFold(mb.key, want) {
			folded = true
		}
		return true
	})
	return m, folded, ok
}

// plainString returns the string raw holds, decoded as encoding/json
// decodes it; "" when raw is not a string.
func plainString(raw json.RawMessage) string {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		s := raw[1 : n-1]
		if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
			if k, ok := knownKeys[string(s)]; ok {
				return k
			}
			return string(s)
		}
	}
	var s string
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// maxFastMembers bounds the members appendMembers sorts in place.
const maxFastMembers = 16

// appendMembers appends to buf the object json.Marshal writes for a map
// of ms (keys sorted, values compacted, HTML characters escaped): the
// bytes the bridge wrote when it re-encoded such maps, made without
// them. ms is sorted in place. false when ms has too many members, a
// repeated key, or a key or value json.Marshal would escape: the caller
// then encodes its map as it did.
func appendMembers(buf []byte, ms []member) ([]byte, bool) {
	if len(ms) > maxFastMembers {
		return buf, false
	}
	for i := 1; i < len(ms); i++ { // insertion sort: a handful of members
		for j := i; j > 0 && ms[j].key < ms[j-1].key; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	buf = append(buf, '{')
	for i, m := range ms {
		if (i > 0 && m.key == ms[i-1].key) || !plainKey(m.key) || htmlEscaped(m.val) {
			return buf, false
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = append(buf, m.key...)
		buf = append(buf, '"', ':')
		buf = appendCompact(buf, m.val)
	}
	return append(buf, '}'), true
}

// htmlEscaped reports whether json.Marshal would escape something in v
// (<, >, &, U+2028, U+2029).
func htmlEscaped(v []byte) bool {
	for i, c := range v {
		switch {
		case c == '<', c == '>', c == '&':
			return true
		case c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && (v[i+2] == 0xA8 || v[i+2] == 0xA9):
			return true
		}
	}
	return false
}

// appendCompact appends v (valid JSON) without its insignificant white
// space, as json.Compact does.
func appendCompact(buf []byte, v []byte) []byte {
	for i := 0; i < len(v); {
		switch c := v[i]; c {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			end := stringEnd(v, i)
			buf = append(buf, v[i:end]...)
			i = end
		default:
			buf = append(buf, c)
			i++
		}
	}
	return buf
}

// decodeBody is jsonrpc.DecodeMessage for a body the bridge read and
// never modifies: the message's members are slices of body, decoded
// without reflection when they can be. Any input the fast path does not
// take as DecodeMessage would (a batch, an invalid result, an error) goes
// to DecodeMessage.
func decodeBody(body []byte) (*jsonrpc.Message, error) {
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
		if msgs, err := jsonrpc.DecodeOwned(t); err == nil && len(msgs) == 1 &&
			(msgs[0].Result == nil || json.Valid(msgs[0].Result)) {
			return msgs[0], nil
		}
	}
	return jsonrpc.DecodeMessage(body)
}
