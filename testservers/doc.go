// Package testservers holds small, real MCP servers that run in-process,
// for tests, benchmarks and `mcpcall demo`. They are not mocks: they speak
// revisions 2025-11-25 and 2024-11-05 (and accept the older ones in
// initialize) and, when Options.Eras asks, the stateless 2026-07-28.
//
// One wire-independent core (Server, Session) is served by front-ends:
//
//   - StartStreamable, StartStateless, StartDualEra: Streamable HTTP;
//   - StartLegacy: HTTP+SSE (2024-11-05); StartHybrid: both on one listener;
//   - StartStatus: a URL that always fails with a chosen status;
//   - NewHybridHandler: both HTTP transports as one http.Handler, for a
//     server that mounts a check in front of them (package oauthserver's
//     protected server, behind OAuth tokens, does);
//   - StartStreamableTLS, StartLegacyTLS, StartH2Faults: HTTPS with HTTP/2;
//   - ServeStdio, ServeProcess, RunFromEnv, StdioCommand: stdio, in-process or as a child
//     process that is the test binary itself.
//
// A test starts one and dials it:
//
//	srv := testservers.StartStreamable(testservers.HTTPOptions{})
//	defer srv.Close()
//	conn, err := client.Dial(ctx, client.URL(srv.URL))
//
// The era is a value of each request, not a second server (era.go,
// methods.go). With Options.Tasks a server runs tool calls as tasks, in
// both designs (tasks.go). FaultRules and the methods named after faults
// (ExpireSession, Restart, DropStreams, ...) inject the failures a client's
// resilience is tested against (faults.go); StdioFaults those of a stdio
// server. Server.Stats tells a test what the server saw, and
// Server.WaitStats waits for it without sleeping.
//
// The front-ends, the eras' rules, the stateless checks, the tasks and the
// faults are described in docs/testservers.md in the repository.
package testservers
