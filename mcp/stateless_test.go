package mcp

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// Freshness is ttlMs as a duration, at most a day, and none for a ttlMs
// that is absent, zero or negative. A ttlMs too large for a Duration in
// nanoseconds (past about 292 years) is a day too, where the
// multiplication overflowed: 9,300,000,000,000 ms came out negative (not
// cached at all, and a negative Freshness for the host), and
// 18,446,744,073,710 ms fresh for under a millisecond.
func TestFreshness(t *testing.T) {
	for _, tc := range []struct {
		ttl  *TTL
		want time.Duration
	}{
		{nil, 0},
		{ptr(-5), 0},
		{ptr(math.MinInt64), 0},
		{ptr(0), 0},
		{ptr(1), time.Millisecond},
		{ptr(300000), 5 * time.Minute},
		{ptr(int64(maxFreshness / time.Millisecond)), maxFreshness},
		{ptr(int64(maxFreshness/time.Millisecond) + 1), maxFreshness},
		{ptr(math.MaxInt64 / int64(time.Millisecond)), maxFreshness},
		{ptr(math.MaxInt64/int64(time.Millisecond) + 1), maxFreshness},
		{ptr(9300000000000), maxFreshness},
		{ptr(18446744073710), maxFreshness},
		{ptr(math.MaxInt64), maxFreshness},
	} {
		if got := (Cacheable{TTLMs: tc.ttl}).Freshness(); got != tc.want {
			t.Errorf("ttlMs %v: Freshness %v, want %v", deref(tc.ttl), got, tc.want)
		}
	}
}

func ptr(n int64) *TTL { t := TTL(n); return &t }

func deref(p *TTL) any {
	if p == nil {
		return nil
	}
	return *p
}

// A ttlMs is read from any JSON number: an integer written with a
// fraction or an exponent, or past the range of int64, where only a
// decimal int64 decoded and anything else failed the result it came in.
func TestTTLDecodesAnyNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{`0`, 0},
		{`60000`, 60000},
		{`-5`, -5},
		{`60000.0`, 60000},
		{`60000.9`, 60000},
		{`6e4`, 60000},
		{`6E+4`, 60000},
		{`123456789012345678`, 123456789012345678},
		{`9223372036854775807`, math.MaxInt64},
		{`9223372036854775808`, math.MaxInt64},
		{`1e20`, math.MaxInt64},
		{`1e400`, math.MaxInt64},
		{`-1e20`, math.MinInt64},
		{` 7 `, 7},
	} {
		var r ListToolsResult
		if err := json.Unmarshal([]byte(`{"tools":[],"ttlMs":`+tc.in+`}`), &r); err != nil || r.TTLMs == nil || int64(*r.TTLMs) != tc.want {
			t.Errorf("ttlMs %s: %v %v, want %d", tc.in, deref(r.TTLMs), err, tc.want)
		}
	}
	var r ListToolsResult
	if err := json.Unmarshal([]byte(`{"tools":[],"ttlMs":null}`), &r); err != nil || r.TTLMs != nil {
		t.Errorf("ttlMs null: %v %v, want none", deref(r.TTLMs), err)
	}
	for _, bad := range []string{`"60000"`, `true`, `{}`} {
		if err := json.Unmarshal([]byte(`{"tools":[],"ttlMs":`+bad+`}`), &r); err == nil {
			t.Errorf("ttlMs %s: no error", bad)
		}
	}
	b, err := json.Marshal(Cacheable{TTLMs: ptr(300000)})
	if err != nil || string(b) != `{"ttlMs":300000}` {
		t.Errorf("encoded %s %v", b, err)
	}
}
