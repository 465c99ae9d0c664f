package negotiate

import "testing"

// TestParseEraPolicy: the era policy reads its own names and, as aliases,
// the names the eras had before ("modern", "legacy"), and writes only the
// new ones.
func TestParseEraPolicy(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want EraPolicy
		name string
	}{
		{"auto", EraAuto, "auto"},
		{"stateless", StatelessOnly, "stateless"},
		{"initialize", InitializeOnly, "initialize"},
		{"modern", StatelessOnly, "stateless"},
		{"legacy", InitializeOnly, "initialize"},
	} {
		got, err := ParseEraPolicy(tc.in)
		if err != nil || got != tc.want || got.String() != tc.name {
			t.Errorf("ParseEraPolicy(%q) = %v (%s), %v; want %v (%s)", tc.in, got, got, err, tc.want, tc.name)
		}
	}
	for _, bad := range []string{"", "Modern", "dual", "stateless-only"} {
		if _, err := ParseEraPolicy(bad); err == nil {
			t.Errorf("ParseEraPolicy(%q): no error", bad)
		}
	}
}

// TestParseTransportPolicy: the transport policy's names round-trip, TransportAuto
// (the zero value) among them.
func TestParseTransportPolicy(t *testing.T) {
	for _, p := range []TransportPolicy{TransportAuto, StreamableOnly, SSEOnly, SSEFirst} {
		got, err := ParseTransportPolicy(p.String())
		if err != nil || got != p {
			t.Errorf("ParseTransportPolicy(%q) = %v, %v", p.String(), got, err)
		}
	}
	if TransportAuto != 0 || EraAuto != 0 {
		t.Errorf("the defaults are not the zero values: TransportAuto %d, EraAuto %d", TransportAuto, EraAuto)
	}
}
