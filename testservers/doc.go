// Package testservers holds small, real MCP servers that run in-process, for
// tests, benchmarks and `mcpcall demo`. They speak the wire formats of
// revision 2025-11-25 and of 2024-11-05 (and accept the older revisions in
// initialize); they are not mocks.
//
// The package is one wire-independent core plus front-ends:
//
//   - Server and Session (core.go) implement the protocol: lifecycle, tools,
//     resources, prompts, completion, logging, cancellation, progress, and
//     requests from the server to the client (sampling, elicitation, roots).
//     A Session handles decoded jsonrpc.Messages from one client and sends
//     its own messages through a Peer, which a front-end implements.
//   - StartStreamable and NewStreamableHandler (streamable.go) serve the
//     core over Streamable HTTP, with or without sessions, SSE or JSON
//     answers, and an optional standalone GET stream.
//   - StartLegacy (legacy.go) serves it over HTTP+SSE, the transport of
//     2024-11-05: a GET stream per session whose first event names the
//     message endpoint (relative, absolute or, for security tests, on
//     another origin; at once or late), and messages POSTed there.
//   - StartHybrid (hybrid.go) hosts both HTTP transports on one listener,
//     at different paths or on the same one, as servers do while they
//     migrate.
//   - StartStatus (status.go) is a URL whose POST always fails with a
//     chosen status, body and delay, and whose GET fails too or serves
//     HTTP+SSE: the edges of a client's transport ladder, including a
//     newer-revision server (MethodNotFoundBody, UnsupportedVersionBody).
//   - StartAuthServer (authserver.go) is an OAuth 2.1 authorization server
//     (RFC 8414 or OpenID metadata, dynamic registration, PKCE, refresh
//     tokens, client credentials with secrets or private_key_jwt, RFC 9207
//     iss) with knobs for the ways real ones differ or misbehave, and a
//     headless user (Approve) that authorizes at once; StartProtected
//     (protected.go) puts the Streamable HTTP and HTTP+SSE front-ends behind
//     its bearer tokens, with protected resource metadata where chosen and
//     401/403 challenges (scope step-up).
//   - ServeStdio, RunFromEnv and StdioCommand (stdio.go) serve it over
//     newline-delimited JSON, in-process or as a child process that is the
//     test binary itself.
//
// Faults (faults.go) are the failures the HTTP servers inject for the
// tests of a client's resilience: SSE streams cut after N events, with
// ids (resumable with Last-Event-ID, see HTTPOptions.Priming) or without,
// optionally after a retry: field; sessions expired; 429 and 503 with
// Retry-After; restarts; all armed as FaultRules (after N requests, N
// times, per session, or at random from a seed, as RandomFaults does for
// a soak test) or fired on demand (ExpireSession, ExpireAll, Restart,
// DropStreams, KillStreams). StdioFaults are those of a stdio server: a
// crash, a stdin EOF or SIGTERM ignored, a grandchild process.
//
// What the servers offer (tools, resources, prompts) is listed on Server;
// the once tool counts duplicate executions of a non-idempotent call.
// Server.Stats tells tests what the server saw, faults included.
package testservers
