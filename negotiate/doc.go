// Package negotiate holds what a host sets and reads about the ladder that
// finds out what a server speaks: its protocol era, stateless (2026-07-28
// on: every request carries its revision and capabilities in _meta) or
// initialize-era (2024-11-05 to 2025-11-25: initialize and a session),
// and, for a URL, its transport, Streamable HTTP or HTTP+SSE.
//
// The ladder itself runs inside client.Dial and client.Open. Hosts set it
// with client.WithCache, WithTransportPolicy, WithEra and
// WithProtocolVersion, and read what it did in Conn.Info().Negotiation.
// This package holds those values:
//
//   - the policies, TransportPolicy (which HTTP transports, in what order)
//     and EraPolicy (which eras);
//   - a Cache, which remembers the outcome per URL or command line, so that
//     a server known to be initialize-era costs no probe next time;
//   - the Report: every attempt, what it sent, what came back, and why the
//     next one followed;
//   - the errors of a negotiation that failed: *Error (every attempt),
//     *NewerServerError, ErrProbeDropped, ErrTooManyEarlyRequests.
//
// For a URL, in the order of the specification's backward-compatibility
// rules:
//
//  1. POST server/discover with the newest stateless revision. A
//     DiscoverResult, or a recognised stateless error, means a stateless
//     server; any other 4xx means an initialize-era one.
//  2. POST initialize over Streamable HTTP. A 2xx means Streamable HTTP;
//     400, 404 or 405 without a stateless body mean "try HTTP+SSE".
//  3. GET the URL, expect an endpoint event, initialize over HTTP+SSE.
//
// 401/403, 5xx, 406/415, refused redirects, timeouts and network errors are
// reported as themselves, never masked by another rung. Over stdio the
// probe is the same server/discover, bounded by a timeout: silence or an
// error that is not stateless means initialize-era.
//
// The ladder in full, the report and its cost: docs/negotiation.md in the
// repository.
package negotiate
