// Package negotiate owns the ladder that finds out what a server speaks:
// its protocol era — modern (2026-07-28 on: stateless, every request
// carries its revision and the client's capabilities in _meta) or legacy
// (2024-11-05 to 2025-11-25: the initialize handshake and a session) — and,
// for a URL, its transport: Streamable HTTP or the older HTTP+SSE. It sends
// the opening requests the protocol layer built (Hello), reports every
// attempt and why the next one followed (Report), and hands back the live
// transport with the answer.
//
// For a URL (Connect) the rules are the specification's
// backward-compatibility sections, in order:
//
//  1. The modern request: POST server/discover carrying the newest modern
//     revision in _meta and in the MCP-Protocol-Version, Mcp-Method headers.
//     A DiscoverResult (it lists supportedVersions), or a recognised modern
//     error — -32022 listing revisions, -32020, -32021, or a 404 whose body
//     is -32601 — means a modern server: a -32022 listing another modern
//     revision we speak is tried again with it, one listing only legacy
//     revisions sends initialize. Any other 4xx means a legacy server.
//  2. The legacy handshake over Streamable HTTP: POST initialize. A 2xx
//     answer means Streamable HTTP; 400, 404 or 405 without a modern body
//     mean "try HTTP+SSE".
//  3. HTTP+SSE: GET the same URL and expect an SSE stream whose first event
//     is `endpoint`, then initialize over it.
//
// 401/403, 5xx, 406/415, refused redirects, timeouts, DNS, TLS and refused
// connections are reported as themselves, never masked by trying another
// rung. A refusal of initialize that only a modern server gives sends the
// ladder to the modern rung instead of HTTP+SSE.
//
// For a transport without HTTP statuses (stdio, or a host's own: Handshake)
// the probe is the same server/discover, bounded by a timeout: a
// DiscoverResult or a modern error means modern; any other error, or
// silence, means legacy, and initialize follows.
//
// Outcomes (era and transport) are cached per URL, or per command line for
// stdio, so that a server known to be legacy costs no modern probe — nor,
// for HTTP+SSE, the POST that fails before the GET — next time. Should the
// cached outcome stop working, the ladder runs in full. Policies (Policy for
// the transports, EraPolicy for the eras, Config.Version to pin a revision)
// narrow what is tried.
package negotiate
