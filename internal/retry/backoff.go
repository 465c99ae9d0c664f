package retry

import (
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/anymcp/anymcp/reconnect"
)

// Fill returns p with its zero fields set to the defaults
// (reconnect.DefaultPolicy); filling a filled policy changes nothing.
func Fill(p reconnect.Policy) reconnect.Policy {
	d := reconnect.DefaultPolicy()
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

// Backoff is one run of a reconnect.Policy: each Next gives the next
// delay, Progress starts the run over, and a server's SSE retry: field
// sets the next delay within the cap. It is not safe for concurrent use.
type Backoff struct {
	p        reconnect.Policy
	exp      *backoff.ExponentialBackOff
	attempts int       // failed attempts since the last progress
	since    time.Time // when the failures since the last progress began
	server   time.Duration
	atOnce   bool // Immediate: the next wait is zero
	now      func() time.Time
}

// Start begins a run of p.
func Start(p reconnect.Policy) *Backoff {
	p = Fill(p)
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
func (b *Backoff) Policy() reconnect.Policy { return b.p }

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
