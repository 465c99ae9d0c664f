package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// An error whose data says the request may have run matches
// ErrOutcomeUnknown, through wrapping too, and stays an *Error with its
// code and message; one that says it did not run, or says nothing,
// does not match.
func TestErrorOutcome(t *testing.T) {
	cases := []struct {
		data    string
		outcome string
		unknown bool
	}{
		{``, "", false},
		{`null`, "", false},
		{`"io.github.anymcp/outcome"`, "", false},
		{`{"supported":["2026-07-28"]}`, "", false},
		{`{"outcome":"unknown"}`, "", false}, // not our key: a server's own data
		{`{"io.github.anymcp/outcome":"unknown"}`, OutcomeUnknown, true},
		{` {"x":1,"io.github.anymcp/outcome":"unknown"}`, OutcomeUnknown, true},
		{`{"io.github.anymcp/outcome":"not-run"}`, OutcomeNotRun, false},
		{`{"io.github.anymcp/outcome":7}`, "", false},
	}
	for _, tc := range cases {
		msg, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"lost"` + dataMember(tc.data) + `}}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.data, err)
		}
		e := msg.Error
		if got := e.Outcome(); got != tc.outcome {
			t.Errorf("%s: Outcome() = %q, want %q", tc.data, got, tc.outcome)
		}
		wrapped := fmt.Errorf("tools/call: %w", e)
		if got := errors.Is(wrapped, ErrOutcomeUnknown); got != tc.unknown {
			t.Errorf("%s: errors.Is(err, ErrOutcomeUnknown) = %v, want %v", tc.data, got, tc.unknown)
		}
		var as *Error
		if !errors.As(wrapped, &as) || as.Code != CodeInternalError || as.Message != "lost" {
			t.Errorf("%s: errors.As gave %+v", tc.data, as)
		}
		if errors.Is(wrapped, ErrSessionExpired) {
			t.Errorf("%s: matches ErrSessionExpired", tc.data)
		}
	}
}

func dataMember(data string) string {
	if data == "" {
		return ""
	}
	return `,"data":` + data
}

// WithOutcome adds the member and keeps what the data held.
func TestErrorWithOutcome(t *testing.T) {
	cases := []struct{ data, want string }{
		{``, `{"io.github.anymcp/outcome":"unknown"}`},
		{`null`, `{"io.github.anymcp/outcome":"unknown"}`},
		{`{"supported":["a"]}`, `{"io.github.anymcp/outcome":"unknown","supported":["a"]}`},
		{`{"io.github.anymcp/outcome":"not-run","n":1}`, `{"io.github.anymcp/outcome":"unknown","n":1}`},
		{`"a detail"`, `{"io.github.anymcp/outcome":"unknown","value":"a detail"}`},
		{`[1,2]`, `{"io.github.anymcp/outcome":"unknown","value":[1,2]}`},
	}
	for _, tc := range cases {
		e := &Error{Code: -32603, Message: "m", Data: json.RawMessage(tc.data)}
		got := e.WithOutcome(OutcomeUnknown)
		if string(got.Data) != tc.want {
			t.Errorf("%s: data %s, want %s", tc.data, got.Data, tc.want)
		}
		if string(e.Data) != tc.data {
			t.Errorf("%s: the original changed to %s", tc.data, e.Data)
		}
		if got.Code != e.Code || got.Message != e.Message || !errors.Is(got, ErrOutcomeUnknown) {
			t.Errorf("%s: %+v", tc.data, got)
		}
	}
}

// FuzzErrorOutcome: whatever data a peer sends, Outcome does not panic,
// and WithOutcome gives JSON data whose outcome is the one set, keeping
// the members of object data.
func FuzzErrorOutcome(f *testing.F) {
	for _, d := range []string{``, `null`, `{}`, `"x"`, `[1]`, `{"io.github.anymcp/outcome":"unknown"}`, `{"a":{"b":[1]}}`, `{`, ` {"x":1}`} {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e := &Error{Code: CodeInternalError, Message: "m", Data: data}
		_ = e.Outcome()
		_ = errors.Is(e, ErrOutcomeUnknown)
		out := e.WithOutcome(OutcomeNotRun)
		if !json.Valid(out.Data) || out.Outcome() != OutcomeNotRun || errors.Is(out, ErrOutcomeUnknown) {
			t.Fatalf("data %q: WithOutcome gave %s", data, out.Data)
		}
		var before map[string]json.RawMessage
		if json.Unmarshal(data, &before) == nil && before != nil {
			var after map[string]json.RawMessage
			if err := json.Unmarshal(out.Data, &after); err != nil {
				t.Fatal(err)
			}
			for k := range before {
				if _, ok := after[k]; !ok {
					t.Fatalf("data %q: member %q lost in %s", data, k, out.Data)
				}
			}
		}
	})
}
