// Package exact checks that an SDK's param type holds a JSON value as it
// was: decoded into the type and encoded again, the value is the same.
package exact

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Equal says whether a and b are the same JSON value: objects compared
// by key whatever their order, numbers by their text.
func Equal(a, b []byte) bool {
	var x, y any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Decode decodes raw into a T and checks that T encodes back to the same
// value. ok is false when it does not (the type drops or changes
// something): the caller then sends raw as it is.
func Decode[T any](raw json.RawMessage) (v T, ok bool, err error) {
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, false, err
	}
	back, err := json.Marshal(v)
	if err != nil {
		return v, false, nil
	}
	return v, Equal(raw, back), nil
}
