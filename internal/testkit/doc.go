// Package testkit holds what the tests of several packages share: a
// recording HTTP server (Server), a bounded wait for a condition
// (Eventually), the table of how an HTTP status answering a request
// leaves its outcome (StatusOutcomes), and a client's end of a ServeStdio
// over pipes (ServeOverPipes). Tests only.
package testkit
