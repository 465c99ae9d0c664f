package auth

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		name    string
		values  []string
		want    []Challenge
		wantErr bool
	}{
		{
			name:   "bearer with quoted params",
			values: []string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`},
			want:   []Challenge{{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource", "scope": "files:read"}}},
		},
		{
			name:   "token values, names in any case, bad whitespace around =",
			values: []string{`bearer Error = invalid_token ,SCOPE="a b"`},
			want:   []Challenge{{Scheme: "bearer", Params: map[string]string{"error": "invalid_token", "scope": "a b"}}},
		},
		{
			name:   "several challenges in one value",
			values: []string{`Basic realm="x", Bearer error="insufficient_scope", scope="files:write", Negotiate`},
			want: []Challenge{
				{Scheme: "Basic", Params: map[string]string{"realm": "x"}},
				{Scheme: "Bearer", Params: map[string]string{"error": "insufficient_scope", "scope": "files:write"}},
				{Scheme: "Negotiate"},
			},
		},
		{
			name:   "several header fields",
			values: []string{`Basic realm="a"`, `Bearer scope="s"`},
			want: []Challenge{
				{Scheme: "Basic", Params: map[string]string{"realm": "a"}},
				{Scheme: "Bearer", Params: map[string]string{"scope": "s"}},
			},
		},
		{
			name:   "token68",
			values: []string{`Negotiate YIIBmwYGKwYBBQUC==, Bearer`},
			want:   []Challenge{{Scheme: "Negotiate", Token68: "YIIBmwYGKwYBBQUC=="}, {Scheme: "Bearer"}},
		},
		{
			name:   "escapes and commas inside quotes",
			values: []string{`Bearer error_description="say \"no\", twice", scope="a,b"`},
			want:   []Challenge{{Scheme: "Bearer", Params: map[string]string{"error_description": `say "no", twice`, "scope": "a,b"}}},
		},
		{
			name:   "empty list elements",
			values: []string{` , Bearer scope="x" ,, `},
			want:   []Challenge{{Scheme: "Bearer", Params: map[string]string{"scope": "x"}}},
		},
		{
			name:    "unterminated quote: the value is dropped",
			values:  []string{`Bearer scope="x`, `Basic realm="ok"`},
			want:    []Challenge{{Scheme: "Basic", Params: map[string]string{"realm": "ok"}}},
			wantErr: true,
		},
		{
			name:    "a parameter twice cannot override the first",
			values:  []string{`Bearer resource_metadata="https://good", resource_metadata="https://evil"`},
			wantErr: true,
		},
		{
			name:    "a missing comma cannot smuggle a parameter",
			values:  []string{`Bearer scope="a" resource_metadata="https://evil"`},
			wantErr: true,
		},
		{
			name:    "control character",
			values:  []string{"Bearer scope=\"a\x00\""},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseChallenges(tt.values)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// formatChallenge writes c back in the grammar, every value quoted.
func formatChallenge(c Challenge) string {
	s := c.Scheme
	if c.Token68 != "" {
		return s + " " + c.Token68
	}
	first := true
	for _, k := range slices.Sorted(maps.Keys(c.Params)) {
		if first {
			s += " "
			first = false
		} else {
			s += ", "
		}
		v := strings.ReplaceAll(strings.ReplaceAll(c.Params[k], `\`, `\\`), `"`, `\"`)
		s += k + `="` + v + `"`
	}
	return s
}

// FuzzParseChallenges: the parser never panics, what it returns is made of
// valid tokens, and writing its challenges back and parsing them again
// gives the same challenges.
func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"`,
		`Basic realm="x", Bearer error="insufficient_scope"`,
		`Negotiate abc==, Bearer`,
		`Bearer error_description="\"q\" \\ ,"`,
		` ,, `, `Bearer a=b, c=d, Basic`, `x y=`, `Bearer scope="unterminated`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseChallenges([]string{s})
		if err != nil && got != nil {
			t.Fatalf("one value: challenges %v with error %v", got, err)
		}
		var parts []string
		for _, c := range got {
			if c.Scheme == "" || strings.IndexFunc(c.Scheme, func(r rune) bool { return r > 0x7f || !isTokenChar(byte(r)) }) >= 0 {
				t.Fatalf("scheme %q is not a token", c.Scheme)
			}
			for k, v := range c.Params {
				if k != strings.ToLower(k) || k == "" {
					t.Fatalf("param name %q", k)
				}
				if strings.ContainsAny(v, "\x00\r\n") {
					t.Fatalf("param %s value %q has a control character", k, v)
				}
			}
			parts = append(parts, formatChallenge(c))
		}
		again, err := ParseChallenges([]string{strings.Join(parts, ", ")})
		if err != nil {
			t.Fatalf("re-parsing %q: %v", strings.Join(parts, ", "), err)
		}
		if len(again) != len(got) {
			t.Fatalf("re-parsed %d challenges, want %d", len(again), len(got))
		}
		for i := range got {
			if got[i].Scheme != again[i].Scheme || got[i].Token68 != again[i].Token68 || len(got[i].Params) != len(again[i].Params) {
				t.Fatalf("challenge %d: %#v, re-parsed %#v", i, got[i], again[i])
			}
			for k, v := range got[i].Params {
				if again[i].Params[k] != v {
					t.Fatalf("challenge %d param %s: %q, re-parsed %q", i, k, v, again[i].Params[k])
				}
			}
		}
	})
}
