// Package reconnect owns time for the transports: how long to wait before
// trying again, and when to give up.
//
// A Policy is a plain value (initial delay, maximum delay, multiplier,
// jitter, attempts and a time budget without progress, caps on what servers
// may ask for). A Backoff is one run of it: each Next gives the next delay;
// Progress (a new event id, a delivered message, a good connection) starts
// the run over; a server's SSE retry: field sets the next delay, within
// the cap. Retry-After (delta-seconds or an HTTP date) is parsed here too,
// and honoured within a cap; a wait the cap or the caller's deadline cuts
// short becomes a *RetryAfterError that says how long the server asked for.
//
// Policy.Retrying puts it all in a go-retryablehttp client that sends a
// request again only when the server provably did not run it: a 429 or a
// 503 with Retry-After (after the wait it asks for; a 429 without one
// after the backoff), or a connection refused before anything was sent. A
// 503 without Retry-After, which a gateway may give after the server ran
// the request, is sent again only for a request the caller marks as safe
// to repeat (WithResendable). Every other answer or error comes back as
// is, so a tools/call is never run twice by a retry.
package reconnect
