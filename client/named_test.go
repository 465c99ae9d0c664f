package client

import (
	"errors"
	"testing"
)

// TestNamed: a request's error names its method once: prefixed when the
// error does not name it, left alone when a transport or the server did.
func TestNamed(t *testing.T) {
	sentinel := errors.New("boom")
	tests := []struct {
		method, msg, want string
	}{
		{"tools/list", "stdio: broken pipe", "tools/list: stdio: broken pipe"},
		{"tools/list", "modern: tools/list (id 3): session expired", "modern: tools/list (id 3): session expired"},
		{"notifications/initialized", "modern: notifications/initialized: POST u → 500", "modern: notifications/initialized: POST u → 500"},
		{"bogus/method", "jsonrpc error -32601: Method not found: bogus/method", "jsonrpc error -32601: Method not found: bogus/method"},
		{"ping", "mapping failed", "ping: mapping failed"},                                     // a word that holds it is not it
		{"tools/list", "tools/list_changed refused", "tools/list: tools/list_changed refused"}, // nor is a longer name
		{"tools/call", "x tools/call", "x tools/call"},
	}
	for _, tt := range tests {
		err := named(tt.method, &textError{tt.msg, sentinel})
		if got := err.Error(); got != tt.want {
			t.Errorf("named(%q, %q) = %q, want %q", tt.method, tt.msg, err, tt.want)
		}
		if !errors.Is(err, sentinel) {
			t.Errorf("named(%q, %q) lost the error it wraps", tt.method, tt.msg)
		}
	}
}

// textError is an error with a given text that wraps another.
type textError struct {
	msg string
	err error
}

func (e *textError) Error() string { return e.msg }
func (e *textError) Unwrap() error { return e.err }
