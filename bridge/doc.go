// Package bridge serves one upstream MCP server, of any era and transport,
// as a conformant MCP server to clients of every era.
//
// The upstream is whatever client.Dial reaches: a URL (Streamable HTTP or
// HTTP+SSE, OAuth included) or a command. The downstream faces are:
//
//   - Handler, at /mcp: Streamable HTTP for both eras. A request carrying
//     revision 2026-07-28's _meta is served statelessly (server/discover,
//     the Mcp-* headers checked against the body, subscriptions/listen,
//     input_required rounds, ttlMs and cacheScope on cacheable results);
//     initialize opens a session of the initialize era (Mcp-Session-Id,
//     resumable SSE with Last-Event-ID, the GET stream).
//   - Handler, at /sse and /message: HTTP+SSE for 2024-11-05 clients.
//   - ServeStdio: one client over stdin and stdout, either era.
//
// What one era asks of its client the other gets as its own: an
// initialize-era upstream's sampling, elicitation and roots requests
// become input_required rounds for a stateless client, and a stateless
// upstream's rounds become server requests to a session. A round's
// requestState is sealed with AES-GCM (Options.StateKey) and never trusted
// unverified.
//
// The bridge keeps one upstream Conn for stateless clients, one per
// session, and one per stateless call that may need input from an
// initialize-era upstream, whose questions come on the connection, not the
// call. Calls run concurrently; every queue toward a client is bounded,
// and a client that does not read is cut off rather than buffered for.
// A request sent again on a session with the same id is answered once
// (the tool runs once); stateless requests are never merged.
//
// Options.Observer sees every downstream request, on every face, and gives
// the context its upstream request runs in: the otel module's
// ServerObserver makes a SERVER span of each.
//
// The guide, with the translation table and the security rules, is
// docs/bridge.md in the repository; mcpcall bridge is its command.
package bridge
