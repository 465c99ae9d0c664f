package jsondec

import (
	"bytes"
	stdjson "encoding/json"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// UnmarshalShared is Unmarshal, except that every json.RawMessage it sets
// is a slice of data itself, not a copy: the bytes the server sent, in
// place. The caller gives data up for good, as for UnmarshalOwned: it must
// never modify data again. Each such slice is capped at its own end, so
// an append to it copies rather than overwrite what follows.
//
// A raw value keeps all of data alive for as long as it lives: use it
// where the values decoded are kept together with data anyway (a cached
// answer, a listing kept whole), not to pick one small value out of a
// large message.
func UnmarshalShared(data []byte, v any) error {
	share := json.UnmarshalFromFunc(func(dec *jsontext.Decoder, r *stdjson.RawMessage) error {
		val, err := dec.ReadValue()
		if err != nil {
			return err
		}
		// The value ends where the decoder now stands, in data's own
		// offsets: the decoder reads data from its start.
		end := int(dec.InputOffset())
		start := end - len(val)
		if start < 0 || end > len(data) || string(data[start:end]) != string(val) {
			*r = bytes.Clone(val) // not expected: a copy, as Unmarshal makes
			return nil
		}
		*r = data[start:end:end]
		return nil
	})
	return json.Unmarshal(data, v, opts, json.WithUnmarshalers(share))
}
