package gateway

import (
	"net/url"
	"strings"
	"testing"
)

func TestMatchTemplate(t *testing.T) {
	for _, tc := range []struct {
		tpl, uri string
		want     bool
	}{
		{"test://items/{id}", "test://items/42", true},
		{"test://items/{id}", "test://items/", false},
		{"test://items/{id}", "test://items/4/2", false},
		{"test://items/{id}", "test://items/42?x", false},
		{"test://items/{id}", "test://itemz/42", false},
		{"test://items/{id}/v{n}", "test://items/a/v3", true},
		{"test://items/{id}/v{n}", "test://items/a/v", false},
		{"file:///{+path}", "file:///etc/hosts", true},
		{"file:///{+path}", "file:///", false},
		{"file:///{path}", "file:///etc/hosts", false},
		{"db://{table}{?limit}", "db://users", true},
		{"db://{table}{?limit}", "db://users?limit=3", true},
		{"plain://x", "plain://x", true},
		{"plain://x", "plain://xy", false},
		{"broken://{id", "broken://{id", false},
		{"empty://{}", "empty://x", false},
		{"{a}{b}", "xy", true},
		{"{a}{b}", "x", false},
	} {
		if got := matchTemplate(tc.tpl, tc.uri); got != tc.want {
			t.Errorf("%s ~ %s: %v, want %v", tc.tpl, tc.uri, got, tc.want)
		}
	}
	long := strings.Repeat("{a}", 2000)
	if matchTemplate(long, strings.Repeat("x", maxTemplateLen+1)) {
		t.Error("an over-long URI matched")
	}
}

// A template expanded (level 1: values percent-encoded) matches its
// expansion; the matcher never panics and stays within its bound.
func FuzzMatchTemplate(f *testing.F) {
	f.Add("test://items/{id}", "a b/c")
	f.Add("x{+p}y{q}", "1/2")
	f.Add("{", "")
	f.Fuzz(func(t *testing.T, tpl, value string) {
		_ = matchTemplate(tpl, value) // any input: no panic
		parts, ok := parseTemplate(tpl)
		if !ok || value == "" {
			return
		}
		var b strings.Builder
		for _, p := range parts {
			if p.op == 0 {
				b.WriteString(p.lit)
			} else {
				b.WriteString(url.PathEscape(value))
			}
		}
		exp := strings.NewReplacer("/", "%2F", "?", "%3F", "#", "%23").Replace(b.String())
		if len(exp) <= maxTemplateLen && !strings.ContainsAny(tpl, "/?#") && !matchTemplate(tpl, exp) {
			t.Fatalf("%q does not match its expansion %q", tpl, exp)
		}
	})
}
