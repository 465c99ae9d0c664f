package gateway

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/go-json-experiment/json/jsontext"
)

var errNoName = errors.New("not a JSON object with a name")

// withName returns the JSON object raw with the value of its top-level
// "name" member (every one, should the server have sent it twice)
// replaced by name. Every other byte is as the server sent it: members
// in its order, members no type of this module knows kept.
func withName(raw json.RawMessage, name string) (json.RawMessage, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errNoName
	}
	type span struct{ start, end int }
	var spans []span
	for dec.PeekKind() != '}' {
		key, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		isName := key.String() == "name" // the token is void after the next read
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		if isName {
			end := int(dec.InputOffset())
			spans = append(spans, span{end - len(v), end})
		}
	}
	if len(spans) == 0 {
		return nil, errNoName
	}
	nb, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(raw)+len(spans)*len(nb))
	last := 0
	for _, s := range spans {
		out = append(append(out, raw[last:s.start]...), nb...)
		last = s.end
	}
	return append(out, raw[last:]...), nil
}
