package reconnect

import "time"

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
