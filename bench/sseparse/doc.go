// Package sseparse compares Server-Sent Events parsers; it holds only tests.
//
// The benchmarks in sseparse_test.go run anymcp's sse.Reader, the Read
// iterator of github.com/tmaxmax/go-sse and the EventStreamReader of
// github.com/r3labs/sse/v2 side by side on the same inputs: 10,000 small
// JSON-RPC message events and one event of 16 MiB. Each input is fed two
// ways: from memory in one Read call, and in reads of at most 16 KiB, the
// most a TLS record carries and so what an HTTPS response body usually
// yields.
//
// r3labs/sse exports only its event framing (NewEventStreamReader and
// ReadEvent, which return the raw bytes of one event); the field parsing is
// an unexported method of its HTTP client. Its benchmark numbers therefore
// cover framing alone and are a lower bound of its real cost, and its
// conformance results come from running its client against an
// httptest server.
//
// TestConformance feeds every parser the same tricky streams (line-ending
// mixes, priming events, NUL in ids, retry values, EOF without a blank
// line) and logs where each one departs from the WHATWG rules. Run it with
// go test -v -run Conformance.
package sseparse
