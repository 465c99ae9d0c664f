package jsondec

import (
	"encoding/json"
	"strings"
	"testing"
)

// The leniencies of encoding/json hold: what it reads, Unmarshal reads the
// same way.
func TestLikeEncodingJSON(t *testing.T) {
	type T struct {
		Name  string          `json:"name"`
		Count int             `json:"count"`
		Raw   json.RawMessage `json:"raw"`
		Any   any             `json:"any"`
	}
	for _, in := range []string{
		`{"name":"a","count":1}`,
		`{"NAME":"a","Count":2}`,                              // names without case
		`{"name":"a","name":"b"}`,                             // a duplicate: the last wins
		"{\"name\":\"\xff\xfe\"}",                             // invalid UTF-8
		`{"raw":{"b": [1, 2] },"any":{"x":1.5},"extra":true}`, // raw kept as is, unknown ignored
		`{"count":1e2}`,
	} {
		var want, got T
		werr := json.Unmarshal([]byte(in), &want)
		gerr := Unmarshal([]byte(in), &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: encoding/json %v, jsondec %v", in, werr, gerr)
			continue
		}
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if string(wb) != string(gb) {
			t.Errorf("%s: encoding/json %s, jsondec %s", in, wb, gb)
		}
		if Valid([]byte(in)) != json.Valid([]byte(in)) {
			t.Errorf("%s: Valid differs", in)
		}
	}
	for _, bad := range []string{`{"name":}`, `{"count":"x"}`, `[1,]`, ``} {
		var v T
		if Unmarshal([]byte(bad), &v) == nil && json.Unmarshal([]byte(bad), &v) != nil {
			t.Errorf("%s: accepted", bad)
		}
		if Valid([]byte(bad)) != json.Valid([]byte(bad)) {
			t.Errorf("%s: Valid differs", bad)
		}
		if err := Check([]byte(bad)); (err == nil) != json.Valid([]byte(bad)) {
			t.Errorf("%s: Check says %v", bad, err)
		}
	}
}

// FuzzValid: the check agrees with encoding/json's.
// Check gives the reason, the nesting limit's included.
func TestCheck(t *testing.T) {
	if err := Check([]byte(`{"a":[1,2]}`)); err != nil {
		t.Errorf("a valid value: %v", err)
	}
	deep := []byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001))
	if err := Check(deep); err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Errorf("10,001 nested arrays: %v", err)
	}
	if err := Check([]byte(`{"a":tru}`)); err == nil || !strings.Contains(err.Error(), "tru") {
		t.Errorf("a bad literal: %v", err)
	}
}

func FuzzValid(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x",null,true,{"b":-1.5e3}]}`))
	f.Add([]byte("\"\xff\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		if Valid(data) != json.Valid(data) {
			t.Fatalf("%q: jsondec %v, encoding/json %v", data, Valid(data), json.Valid(data))
		}
	})
}
