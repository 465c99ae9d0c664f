package retry

import (
	"github.com/anymcp/anymcp/reconnect"

	"math"
	"testing"
	"time"
)

// clock is a fake time for Backoff.now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// start begins a run of p on a fake clock.
func start(p reconnect.Policy) (*Backoff, *clock) {
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	b := Start(p)
	b.now = c.now
	return b, c
}

func TestPolicyDefaults(t *testing.T) {
	d := reconnect.DefaultPolicy()
	tests := []struct {
		name string
		in   reconnect.Policy
		want reconnect.Policy
	}{
		{"zero value is the defaults", reconnect.Policy{}, d},
		{"set fields are kept", reconnect.Policy{InitialDelay: time.Second, MaxDelay: time.Minute, Multiplier: 1.5, Jitter: 0.5, MaxAttempts: 3, Budget: time.Hour, MaxServerDelay: 5 * time.Second, MaxRetryAfter: 7 * time.Second},
			reconnect.Policy{InitialDelay: time.Second, MaxDelay: time.Minute, Multiplier: 1.5, Jitter: 0.5, MaxAttempts: 3, Budget: time.Hour, MaxServerDelay: 5 * time.Second, MaxRetryAfter: 7 * time.Second}},
		{"negative attempts and budget mean no limit", reconnect.Policy{MaxAttempts: -1, Budget: -1},
			func() reconnect.Policy { p := d; p.MaxAttempts, p.Budget = -1, -1; return p }()},
		{"negative jitter means none", reconnect.Policy{Jitter: -0.5}, func() reconnect.Policy { p := d; p.Jitter = -1; return p }()},
		{"jitter over 1 is 1", reconnect.Policy{Jitter: 3}, func() reconnect.Policy { p := d; p.Jitter = 1; return p }()},
		{"multiplier below 1 is the default", reconnect.Policy{Multiplier: 0.5}, d},
		{"multiplier 1 is constant delay", reconnect.Policy{Multiplier: 1}, func() reconnect.Policy { p := d; p.Multiplier = 1; return p }()},
		{"negative delays are the defaults", reconnect.Policy{InitialDelay: -1, MaxDelay: -1, MaxServerDelay: -1, MaxRetryAfter: -1}, d},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Start(tt.in).Policy()
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if again := Start(got).Policy(); again != got {
				t.Errorf("filled twice: %+v\nonce: %+v", again, got)
			}
		})
	}
}

func TestBackoffUnlimited(t *testing.T) {
	b, c := start(reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxAttempts: -1, Budget: -1})
	for i := range 10_000 {
		wait, ok := b.Next()
		if !ok {
			t.Fatalf("attempt %d: gave up with no limit", i+1)
		}
		c.t = c.t.Add(wait + time.Hour)
	}
	if b.Attempts() != 10_000 {
		t.Errorf("Attempts() = %d, want 10000", b.Attempts())
	}
}

func TestBackoffJitterBounds(t *testing.T) {
	for _, jitter := range []float64{0.1, 0.2, 0.5, 1} {
		p := reconnect.Policy{InitialDelay: 100 * time.Millisecond, Multiplier: 2, Jitter: jitter, MaxDelay: time.Hour, MaxAttempts: -1, Budget: -1}
		spread := false
		for range 200 {
			b, _ := start(p)
			nominal := p.InitialDelay
			for step := range 6 {
				wait, ok := b.Next()
				if !ok {
					t.Fatal("gave up")
				}
				lo := time.Duration(float64(nominal) * (1 - jitter))
				hi := time.Duration(float64(nominal)*(1+jitter)) + 1 // cenkalti's interval includes its top nanosecond
				if wait < lo || wait > hi {
					t.Fatalf("jitter %v, step %d: wait %v outside [%v, %v]", jitter, step, wait, lo, hi)
				}
				if wait != nominal {
					spread = true
				}
				nominal *= 2
			}
		}
		if !spread {
			t.Errorf("jitter %v: every wait was the nominal one", jitter)
		}
	}
}

func TestBackoffGrowthCapped(t *testing.T) {
	tests := []struct {
		name   string
		p      reconnect.Policy
		waits  []time.Duration
		jitter bool
	}{
		{"×3 to the cap", reconnect.Policy{InitialDelay: 10 * time.Millisecond, Multiplier: 3, MaxDelay: 100 * time.Millisecond, Jitter: -1},
			[]time.Duration{10, 30, 90, 100, 100, 100}, false},
		{"×2 from the cap", reconnect.Policy{InitialDelay: time.Second, Multiplier: 2, MaxDelay: 500 * time.Millisecond, Jitter: -1},
			[]time.Duration{500, 500, 500}, false},
		{"constant", reconnect.Policy{InitialDelay: 7 * time.Millisecond, Multiplier: 1, MaxDelay: time.Second, Jitter: -1},
			[]time.Duration{7, 7, 7, 7}, false},
		{"jittered never above the cap", reconnect.Policy{InitialDelay: 10 * time.Millisecond, Multiplier: 2, MaxDelay: 50 * time.Millisecond, Jitter: 0.5},
			[]time.Duration{15, 30, 50, 50, 50, 50, 50, 50}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.p.MaxAttempts, tt.p.Budget = -1, -1
			b, _ := start(tt.p)
			for i, ms := range tt.waits {
				want := ms * time.Millisecond
				wait, ok := b.Next()
				switch {
				case !ok:
					t.Fatalf("wait %d: gave up", i)
				case tt.jitter && wait > want:
					t.Errorf("wait %d = %v, want at most %v", i, wait, want)
				case !tt.jitter && wait != want:
					t.Errorf("wait %d = %v, want %v", i, wait, want)
				}
			}
		})
	}
}

// TestBackoffHugeDelays: a MaxDelay at the top of time.Duration (no cap
// to speak of) still gives waits within [0, MaxDelay], never one that
// wraps round: the jittered wait is computed as a float, and one
// past the largest Duration made a Duration is not a wait (on amd64 the
// most negative one, which Sleep takes for none: a retry at once).
func TestBackoffHugeDelays(t *testing.T) {
	for _, p := range []reconnect.Policy{
		{InitialDelay: 1 << 62, MaxDelay: math.MaxInt64, Jitter: 0.2},
		{InitialDelay: math.MaxInt64, MaxDelay: math.MaxInt64, Jitter: 1},
		{InitialDelay: time.Hour, MaxDelay: math.MaxInt64, Multiplier: 1e9, Jitter: 0.5},
	} {
		p.MaxAttempts, p.Budget = -1, -1
		b, _ := start(p)
		for i := range 64 {
			wait, ok := b.Next()
			if !ok || wait < 0 || wait > p.MaxDelay {
				t.Fatalf("%+v: wait %d = %v, %v", p, i, wait, ok)
			}
		}
	}
}

func TestBackoffMaxAttempts(t *testing.T) {
	for _, max := range []int{1, 3, 10} {
		b, _ := start(reconnect.Policy{InitialDelay: time.Millisecond, MaxAttempts: max, Budget: -1})
		for i := range max {
			if _, ok := b.Next(); !ok {
				t.Fatalf("MaxAttempts %d: gave up at failure %d", max, i+1)
			}
		}
		if wait, ok := b.Next(); ok || wait != 0 {
			t.Errorf("MaxAttempts %d: failure %d gave (%v, %v), want (0, false)", max, max+1, wait, ok)
		}
		if _, ok := b.Next(); ok {
			t.Errorf("MaxAttempts %d: went on after giving up", max)
		}
	}
}

func TestBackoffBudget(t *testing.T) {
	// 100ms waits, 1s budget: the 10th wait ends exactly at the budget,
	// the 11th would end past it.
	b, c := start(reconnect.Policy{InitialDelay: 100 * time.Millisecond, Multiplier: 1, Jitter: -1, MaxAttempts: -1, Budget: time.Second})
	for i := range 10 {
		wait, ok := b.Next()
		if !ok {
			t.Fatalf("gave up at failure %d, %v into a 1s budget", i+1, time.Duration(i)*100*time.Millisecond)
		}
		c.t = c.t.Add(wait)
	}
	if _, ok := b.Next(); ok {
		t.Error("went on past the budget")
	}

	// A wait that alone ends past the budget ends the run at once.
	b, _ = start(reconnect.Policy{InitialDelay: 2 * time.Second, Jitter: -1, MaxAttempts: -1, Budget: time.Second})
	if _, ok := b.Next(); ok {
		t.Error("first wait over the budget was allowed")
	}
}

func TestBackoffProgress(t *testing.T) {
	p := reconnect.Policy{InitialDelay: 10 * time.Millisecond, Multiplier: 2, MaxDelay: time.Second, Jitter: -1, MaxAttempts: 3, Budget: 100 * time.Millisecond}
	b, c := start(p)
	for _, want := range []time.Duration{10, 20, 40} {
		wait, ok := b.Next()
		if !ok || wait != want*time.Millisecond {
			t.Fatalf("Next() = (%v, %v), want (%v, true)", wait, ok, want*time.Millisecond)
		}
		c.t = c.t.Add(wait)
	}
	b.Progress()
	if b.Attempts() != 0 {
		t.Errorf("Attempts() after Progress = %d, want 0", b.Attempts())
	}
	c.t = c.t.Add(time.Hour) // the budget counts from the first failure after progress
	for i, want := range []time.Duration{10, 20, 40} {
		wait, ok := b.Next()
		if !ok || wait != want*time.Millisecond {
			t.Fatalf("after Progress, Next() %d = (%v, %v), want (%v, true): attempts, budget and growth start over", i, wait, ok, want*time.Millisecond)
		}
		c.t = c.t.Add(wait)
	}
	if _, ok := b.Next(); ok {
		t.Error("a 4th failure after Progress was allowed with MaxAttempts 3")
	}
}

func TestBackoffServerRetry(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name  string
		retry time.Duration
		want  time.Duration
	}{
		{"exactly the server's", 777 * ms, 777 * ms},
		{"above MaxDelay is fine", 3 * time.Second, 3 * time.Second},
		{"capped at MaxServerDelay", time.Hour, 5 * time.Second},
		{"retry: 0 means now", 0, 1},
		{"negative means now", -time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := start(reconnect.Policy{InitialDelay: 10 * ms, Multiplier: 2, MaxDelay: time.Second, Jitter: -1, MaxServerDelay: 5 * time.Second})
			if wait, _ := b.Next(); wait != 10*ms {
				t.Fatalf("first wait %v, want 10ms", wait)
			}
			b.ServerRetry(tt.retry)
			if wait, ok := b.Next(); !ok || wait != tt.want {
				t.Errorf("after ServerRetry(%v): Next() = (%v, %v), want (%v, true)", tt.retry, wait, ok, tt.want)
			}
			if wait, _ := b.Next(); wait != 20*ms {
				t.Errorf("the wait after: %v, want 20ms (the server's sets only the next, growth goes on)", wait)
			}
		})
	}

	t.Run("survives Progress", func(t *testing.T) {
		b, _ := start(reconnect.Policy{InitialDelay: 10 * ms, Jitter: -1})
		b.ServerRetry(500 * ms) // e.g. the priming event: id and retry: together
		b.Progress()
		if wait, _ := b.Next(); wait != 500*ms {
			t.Errorf("Next() = %v, want the server's 500ms", wait)
		}
	})
	t.Run("the last one wins", func(t *testing.T) {
		b, _ := start(reconnect.Policy{InitialDelay: 10 * ms, Jitter: -1})
		b.ServerRetry(500 * ms)
		b.ServerRetry(300 * ms)
		if wait, _ := b.Next(); wait != 300*ms {
			t.Errorf("Next() = %v, want 300ms", wait)
		}
	})
	t.Run("counts as an attempt", func(t *testing.T) {
		b, _ := start(reconnect.Policy{InitialDelay: 10 * ms, MaxAttempts: 1})
		b.ServerRetry(ms)
		if _, ok := b.Next(); !ok {
			t.Fatal("first failure refused")
		}
		b.ServerRetry(ms)
		if _, ok := b.Next(); ok {
			t.Error("a server's retry: went past MaxAttempts")
		}
	})
}

// TestBackoffImmediate: after Immediate the next wait is zero, counted as
// an attempt; the backoff's own waits begin with the one after, at
// InitialDelay; a server's retry: takes precedence.
func TestBackoffImmediate(t *testing.T) {
	const ms = time.Millisecond
	p := reconnect.Policy{InitialDelay: 10 * ms, Multiplier: 2, MaxDelay: time.Second, Jitter: -1, MaxAttempts: 3}
	tests := []struct {
		name    string
		prepare func(b *Backoff)
		want    []time.Duration // the waits of Next, in order, until it gives up
	}{
		{"at once, then the backoff from its start", func(b *Backoff) { b.Immediate() }, []time.Duration{0, 10 * ms, 20 * ms}},
		{"without it, the backoff at once", func(*Backoff) {}, []time.Duration{10 * ms, 20 * ms, 40 * ms}},
		{"a server's retry: wins", func(b *Backoff) { b.Immediate(); b.ServerRetry(300 * ms) }, []time.Duration{300 * ms, 10 * ms, 20 * ms}},
		{"the same in the other order", func(b *Backoff) { b.ServerRetry(300 * ms); b.Immediate() }, []time.Duration{300 * ms, 10 * ms, 20 * ms}},
		{"after Progress, at once again", func(b *Backoff) { b.Next(); b.Next(); b.Progress(); b.Immediate() }, []time.Duration{0, 10 * ms, 20 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := start(p)
			tt.prepare(b)
			for i, want := range tt.want {
				wait, ok := b.Next()
				if !ok || wait != want {
					t.Fatalf("Next() #%d = (%v, %v), want (%v, true)", i+1, wait, ok, want)
				}
			}
			if _, ok := b.Next(); ok {
				t.Errorf("a 4th attempt allowed with MaxAttempts 3: Immediate must count as an attempt")
			}
		})
	}
}
