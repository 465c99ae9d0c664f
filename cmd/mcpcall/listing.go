package main

import (
	"bytes"
	"encoding/json"
	"iter"

	"github.com/anymcp/anymcp/client"
)

// listAll gathers every item of a raw listing (client.Conn.RawTools and
// its kind): all pages, within the client's bounds, from its cache when
// fresh, each item exactly as the server sent it, so that --json loses no
// field.
func listAll(items iter.Seq2[json.RawMessage, error]) ([]json.RawMessage, error) {
	var all []json.RawMessage
	for it, err := range items {
		if err != nil {
			return nil, err
		}
		all = append(all, it)
	}
	return all, nil
}

// writeList writes a listing as --json prints it: {key: [...]} plus
// meta, each item as it came.
func (s *session) writeList(key string, items []json.RawMessage) error {
	if items == nil {
		items = []json.RawMessage{}
	}
	b, err := marshalAsSent(map[string][]json.RawMessage{key: items})
	if err != nil {
		return err
	}
	return s.writeResult(b)
}

// marshalAsSent encodes v as json.Marshal does, but leaves <, > and &
// as they are: a json.RawMessage in v (an item as the server sent it)
// keeps its bytes, and loses only its whitespace.
func marshalAsSent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// decodeItems decodes the raw items of a method's listing into typed ones
// for human output. An item that does not decode is a *client.ResultError:
// the request ran, only its answer is unusable (exit 5, not 4).
func decodeItems[T any](method string, raw []json.RawMessage) ([]T, error) {
	out := make([]T, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, &client.ResultError{Method: method, Err: err}
		}
	}
	return out, nil
}
