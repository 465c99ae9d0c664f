// Package negotiate owns the transport ladder for HTTP servers: given a URL
// it finds out whether the server speaks Streamable HTTP (2025-03-26 and
// later) or the older HTTP+SSE transport (2024-11-05), runs initialize over
// the one that works, and reports every attempt and why it moved on.
//
// The rules follow the specification's backward-compatibility section:
// POST initialize to the URL; a 2xx with an initialize result means
// Streamable HTTP; 400, 404 or 405 mean "try HTTP+SSE": GET the same URL
// and expect an SSE stream whose first event is `endpoint`. Any other
// failure (401/403, 5xx, 406/415, timeouts, DNS, TLS, refused connections)
// is reported as itself, never masked by a fallback. A 400/404 whose body
// is a JSON-RPC error from a newer server (-32601 for initialize, or an
// error listing supported revisions) means the server is newer, not older.
//
// Outcomes are cached per URL so a server known to be legacy costs no POST
// probe next time.
package negotiate
