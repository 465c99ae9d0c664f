package reconnect

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Policy says how to retry. The zero value of a field means its default
// (see DefaultPolicy); a negative MaxAttempts or Budget means no limit.
type Policy struct {
	// InitialDelay is the first wait. Default 250ms.
	InitialDelay time.Duration
	// MaxDelay caps every wait the policy computes. Default 30s.
	MaxDelay time.Duration
	// Multiplier grows the wait after each failed attempt. Default 2.
	Multiplier float64
	// Jitter spreads each wait by ± this fraction, so that many clients
	// do not retry in step. Default 0.2; a negative value means none.
	Jitter float64
	// MaxAttempts is how many failed attempts in a row, without progress,
	// may each be followed by another: at most MaxAttempts+1 attempts,
	// MaxAttempts waits. Default 10.
	MaxAttempts int
	// Budget is how long attempts may go on failing without progress
	// before giving up. Default 2 minutes.
	Budget time.Duration
	// MaxServerDelay caps the wait a server's SSE retry: field may ask for.
	// Default 60s.
	MaxServerDelay time.Duration
	// MaxRetryAfter caps the Retry-After a 429 or 503 may ask for; a
	// longer one is not waited for but reported. Default 60s.
	MaxRetryAfter time.Duration
}

// DefaultPolicy returns the defaults every zero field stands for.
func DefaultPolicy() Policy {
	return Policy{
		InitialDelay:   250 * time.Millisecond,
		MaxDelay:       30 * time.Second,
		Multiplier:     2,
		Jitter:         0.2,
		MaxAttempts:    10,
		Budget:         2 * time.Minute,
		MaxServerDelay: 60 * time.Second,
		MaxRetryAfter:  60 * time.Second,
	}
}

// withDefaults fills the zero fields; filling a filled policy changes
// nothing.
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.InitialDelay <= 0 {
		p.InitialDelay = d.InitialDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = d.MaxDelay
	}
	if p.Multiplier < 1 {
		p.Multiplier = d.Multiplier
	}
	switch {
	case p.Jitter == 0:
		p.Jitter = d.Jitter
	case p.Jitter < 0:
		p.Jitter = -1 // none, and still none when filled again
	case p.Jitter > 1:
		p.Jitter = 1
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.Budget == 0 {
		p.Budget = d.Budget
	}
	if p.MaxServerDelay <= 0 {
		p.MaxServerDelay = d.MaxServerDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	return p
}

// Backoff is one run of a Policy. It is not safe for concurrent use.
type Backoff struct {
	p        Policy
	exp      *backoff.ExponentialBackOff
	attempts int       // failed attempts since the last progress
	since    time.Time // when the failures since the last progress began
	server   time.Duration
	atOnce   bool // Immediate: the next wait is zero
	now      func() time.Time
}

// Start begins a run of the policy.
func (p Policy) Start() *Backoff {
	p = p.withDefaults()
	exp := &backoff.ExponentialBackOff{
		InitialInterval:     p.InitialDelay,
		RandomizationFactor: max(p.Jitter, 0),
		Multiplier:          p.Multiplier,
		MaxInterval:         p.MaxDelay,
		MaxElapsedTime:      0, // the budget is ours: it restarts on progress
		Stop:                backoff.Stop,
		Clock:               backoff.SystemClock,
	}
	exp.Reset()
	return &Backoff{p: p, exp: exp, now: time.Now}
}

// Policy returns the policy in force, defaults filled in.
func (b *Backoff) Policy() Policy { return b.p }

// Next records a failed attempt and returns how long to wait before the
// next one. ok is false when the policy gives up: MaxAttempts failures in
// a row, or Budget spent, without progress in between.
func (b *Backoff) Next() (wait time.Duration, ok bool) {
	wait, why := b.step(b.now(), -1)
	return wait, why == ""
}

// Why a run of the policy ends.
const (
	reasonAttempts = "attempts used up without progress"
	reasonBudget   = "time budget spent without progress"
)

// step records a failed attempt at now and returns the wait before the
// next one: given when a server named it (given >= 0), else a pending
// ServerRetry, else none after Immediate, else the backoff's. why is
// non-empty when the run is over.
func (b *Backoff) step(now time.Time, given time.Duration) (wait time.Duration, why string) {
	if b.attempts == 0 {
		b.since = now
	}
	b.attempts++
	atOnce := b.atOnce
	b.atOnce = false
	if b.p.MaxAttempts > 0 && b.attempts > b.p.MaxAttempts {
		return 0, reasonAttempts
	}
	switch {
	case given >= 0:
		wait = given
	case b.server > 0:
		wait, b.server = b.server, 0
	case atOnce:
		wait = 0
	default:
		// The jittered wait is a float made a Duration: past the largest
		// Duration (a MaxDelay near it) it comes back negative on amd64.
		if wait = b.exp.NextBackOff(); wait < 0 || wait > b.p.MaxDelay {
			wait = b.p.MaxDelay
		}
	}
	if b.p.Budget > 0 && now.Add(wait).Sub(b.since) > b.p.Budget {
		return wait, reasonBudget
	}
	return wait, ""
}

// Progress says an attempt got somewhere: the run starts over (attempts,
// budget and growth). A pending ServerRetry stays: a server's retry: often
// comes with the event that made progress, and still rules the next wait.
func (b *Backoff) Progress() {
	b.attempts = 0
	b.exp.Reset()
}

// ServerRetry takes the reconnection time a server gave in an SSE retry:
// field: the next wait is exactly that, capped at MaxServerDelay.
func (b *Backoff) ServerRetry(d time.Duration) {
	if d < 0 {
		d = 0
	}
	b.server = min(d, b.p.MaxServerDelay)
	if b.server == 0 {
		b.server = 1 // "retry: 0" still means "now", not "use the backoff"
	}
}

// Immediate makes the next wait zero, unless the server named one
// (ServerRetry): for the first attempt after a break that says nothing
// about the server's state, such as a cut connection, which may well
// succeed at once. The attempt still counts; the backoff's own waits,
// from InitialDelay on, begin with the one after.
func (b *Backoff) Immediate() { b.atOnce = true }

// Attempts returns how many attempts in a row have failed.
func (b *Backoff) Attempts() int { return b.attempts }
