package mcp

import (
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
		ttl  *int64
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

func ptr(n int64) *int64 { return &n }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
