// Package reconnect says how the transports retry: how long to wait before
// trying again, and when to give up.
//
// A Policy is a plain value (initial and maximum delay, multiplier,
// jitter, attempts and a time budget without progress, caps on what
// servers may ask for). A host sets one for a Conn:
//
//	p := reconnect.DefaultPolicy()
//	p.MaxAttempts = 3
//	conn, err := client.Dial(ctx, target, client.WithReconnectPolicy(p))
//
// The transports send an HTTP request again only when the server provably
// did not run it (a 429, a 503 with Retry-After, a refused connection), so
// a tools/call is never run twice by a retry. Retry-After (seconds or an
// HTTP date) is honoured within a cap; a wait the cap or the caller's
// deadline cuts short is a *RetryAfterError that says how long the server
// asked for. What the Conn does with the policy: docs/resilience.md in the
// repository.
package reconnect
