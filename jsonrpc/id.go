package jsonrpc

import (
	"bytes"
	"errors"
	"strconv"
)

// ID is a JSON-RPC request id: a JSON string or number, kept as the exact JSON
// text it arrived as, so that it goes back to the peer byte for byte. The zero
// ID means "no id" (a notification).
type ID struct {
	raw string
}

// Int returns the numeric id n.
func Int(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// String returns the string id s.
func String(s string) ID {
	b, _ := marshalString(s)
	return ID{raw: string(b)}
}

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// Raw returns the id's JSON text ("" for the zero ID).
func (id ID) Raw() string { return id.raw }

// Int64 returns the id's value when it is an integer number.
func (id ID) Int64() (int64, bool) {
	if id.raw == "" || id.raw[0] == '"' {
		return 0, false
	}
	n, err := strconv.ParseInt(id.raw, 10, 64)
	return n, err == nil
}

// String returns the id's JSON text, for logs.
func (id ID) String() string { return id.raw }

// MarshalJSON writes the id exactly as it was received or created.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

var errBadID = errors.New("JSON-RPC id must be a string or a number")

// UnmarshalJSON accepts a JSON string or number; null leaves the id zero.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errBadID
	case string(b) == "null":
		id.raw = ""
		return nil
	case b[0] == '"':
		if len(b) < 2 || b[len(b)-1] != '"' {
			return errBadID
		}
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		if _, err := strconv.ParseFloat(string(b), 64); err != nil {
			return errBadID
		}
	default:
		return errBadID
	}
	id.raw = string(b)
	return nil
}
