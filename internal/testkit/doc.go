// Package testkit holds what the tests of several packages share: a
// recording HTTP server (Server), a bounded wait for a condition
// (Eventually), and the table of how an HTTP status answering a request
// leaves its outcome (StatusOutcomes). Tests only.
package testkit
