package gateway

import (
	"encoding/json"
	"testing"
)

// Only the name's value changes: every other byte stays as sent.
func TestWithName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"name":"echo","x-odd":{"name":"inner"}, "b" : 1}`, `{"name":"srv__echo","x-odd":{"name":"inner"}, "b" : 1}`},
		{`{ "title":"T",  "name" : "echo" ,"z":[1,2]}`, `{ "title":"T",  "name" : "srv__echo" ,"z":[1,2]}`},
		{`{"name":"a","name":"b"}`, `{"name":"srv__echo","name":"srv__echo"}`},
	} {
		got, err := withName(json.RawMessage(tc.in), "srv__echo")
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`[]`, `{"title":"no name"}`, `{"name":`, `"s"`} {
		if got, err := withName(json.RawMessage(bad), "x"); err == nil {
			t.Errorf("%s: %s, want an error", bad, got)
		}
	}
}

// Whatever a server sends, withName does not panic, and what it returns
// is JSON whose name is the one given.
func FuzzWithName(f *testing.F) {
	f.Add([]byte(`{"name":"echo","inputSchema":{"type":"object"}}`))
	f.Add([]byte(`{"name":1}`))
	f.Add([]byte(`{"a":{"name":"x"},"name":"y"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := withName(raw, "s__t")
		if err != nil {
			return
		}
		var m struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(out, &m) != nil && json.Valid(raw) {
			t.Fatalf("%s became %s, not JSON", raw, out)
		}
		if json.Valid(raw) && m.Name != "s__t" {
			t.Fatalf("%s became %s, named %q", raw, out, m.Name)
		}
	})
}
