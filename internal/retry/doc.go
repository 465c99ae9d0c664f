// Package retry is how the transports wait and send again, as a
// reconnect.Policy says: a Backoff is one run of a policy; Retrying and
// Sender send an HTTP request again only when the server provably did not
// run it (a 429, a 503 with Retry-After, a refused connection); the marks
// on a request's context (WithResendable, BeforeResend, FirstContact) say
// what else may be sent again, and how. The typed errors a host sees are
// reconnect's. The rules in full:
// docs/transports.md in the repository.
package retry
