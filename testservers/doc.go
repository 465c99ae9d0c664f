// Package testservers holds small, real MCP servers that run in-process, for
// tests, benchmarks and `mcpcall demo`. They speak the wire formats of
// revision 2025-11-25 and of 2024-11-05 (and accept the older revisions in
// initialize) and, when Options.Eras asks, the stateless revision
// 2026-07-28; they are not mocks.
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
//     iss, DPoP-bound tokens) with knobs for the ways real ones differ or
//     misbehave, and a headless user (Approve) that authorizes at once;
//     StartProtected (protected.go) puts the Streamable HTTP and HTTP+SSE
//     front-ends behind its bearer tokens (or DPoP-bound ones and their
//     proofs, RFC 9449, verified in dpop.go), with protected resource
//     metadata where chosen and 401/403 challenges (scope step-up).
//   - StartStreamableTLS and StartLegacyTLS serve the HTTP front-ends over
//     HTTPS with HTTP/2 (their Client trusts the test certificate), and
//     StartH2Faults is a bare HTTP/2 server that resets a stream or sends
//     a GOAWAY, before or after it read the request whole: the frame-level
//     faults a client's "did it go out" must read right.
//   - ServeStdio, RunFromEnv and StdioCommand (stdio.go) serve it over
//     newline-delimited JSON, in-process or as a child process that is the
//     test binary itself.
//
// Eras (era.go). Options.Eras makes a server ModernOnly (2026-07-28
// only) or DualEra (2026-07-28 for requests that carry modern _meta, the
// legacy revisions — initialize, sessions, GET stream, server→client
// requests — for the rest, on the same endpoint or process). The era is a
// value of each request, not a second server: the core's method table
// (methods.go) says in which eras a method exists (initialize, ping,
// logging/setLevel and resources/subscribe are legacy; server/discover and
// subscriptions/listen modern), and each rule that differs consults the
// request's era — where client capabilities and the log level come from
// (the session, or the request's _meta), how a tool gets input from the
// client (a server→client request, or an input_required result and the
// retry's inputResponses: call.ask in mrtr.go, one code for both), where
// list changes go (the session, or subscriptions/listen streams), the
// error of an unknown resource (-32002 or -32602), and what a result
// carries (modern: resultType, _meta serverInfo, ttlMs and cacheScope on
// discover, lists and reads). StartModern and StartDualEra are
// StartStreamable with the era set; ServeStdio and RunFromEnv
// (EnvEras=modern|dual) serve it over stdio.
//
// The modern HTTP front-end (modern_http.go) checks every request as
// 2026-07-28 says: MCP-Protocol-Version, Mcp-Method, Mcp-Name (Base64
// sentinel decoded) and the Mcp-Param-* headers of x-mcp-header
// parameters against the body (-32020, 400), the version (-32022 with
// data {supported, requested}, 400), the _meta (-32602, 400), the method
// (404 and -32601); GET and DELETE get 405 on a modern-only server;
// Mcp-Session-Id and Last-Event-ID are ignored. Each request is answered
// on its own JSON body or SSE stream (no event ids); closing that stream
// cancels it. A modern-only server refuses initialize naming its versions
// (Options.ModernInitialize; InitializeLikeGoSDK mimics go-sdk v1.8, which
// answers it and then refuses everything with 400 text/plain).
//
// Modern requests see more tools (tools_modern.go): elicit_url, inputs
// (every input kind the client declared, never one it did not),
// multi_round, state_only, signed (an HMAC-protected, single-use
// requestState), headers (x-mcp-header), a non-ASCII grüße; the prompt
// ask_name and the resource SecretResourceURI need input too; the tools
// of InvalidHeaderToolNames are listed on demand. A missing client
// capability is -32021. subscriptions/listen (listen.go) acknowledges
// the filter it accepts, tags every notification with the subscription
// id, and ends with its result when the server shuts down
// (EndSubscriptions; Close does it first); NotifyToolsChanged and its
// siblings, and NotifyResourceUpdated, reach both eras' clients.
//
// Tasks (tasks.go). With Options.Tasks a server runs tool calls as
// tasks, in both designs, and lists the tools of TaskToolNames
// (task_sleep, task_optional, task_ask, task_error, task_iserror,
// task_once: tasks_tools.go); without it nothing of tasks exists. In
// 2025-11-25 (tasks_legacy.go) initialize declares the tasks capability,
// a tools/call with params.task answers {"task": Task} at once (a tool
// that forbids tasks, or a required one called without, is -32601), and
// tasks/get, tasks/result (which waits for the end and returns the call's
// own answer, tied to the task by related-task _meta), tasks/cancel and
// tasks/list (paginated) serve them (the creating answer always goes out
// before anything of the task); a task that needs input is
// input_required and sends its request, with related-task _meta, on the
// stream of the newest pending tasks/result (sent again on a newer one).
// In 2026-07-28 (tasks_modern.go) server/discover names the extension
// io.modelcontextprotocol/tasks; a request that declares it gets a task
// (resultType "task") for a task tool, one that does not gets -32021 for
// a required one; tasks/get carries the result, the error or the keyed
// inputRequests, tasks/update their answers, tasks/cancel acknowledges,
// and over HTTP Mcp-Name must be the taskId. tasks/get is never answered
// on a stream. A task belongs to the server and runs on a goroutine of
// its own until it ends; its knobs are the poll interval, the ttl (after
// which it is forgotten), ForgetAfterPolls (a server that loses tasks),
// MaxTasks, status notifications (notifications/tasks/status, or
// notifications/tasks on subscriptions/listen streams that asked for
// taskIds) and InputWithoutResult, also set for a stdio child through
// EnvTasks and the EnvTask* variables. Closing a front-end ends the tasks
// first (EndTasks: a pending tasks/result gets -32603); Stats counts
// what tests assert on (TasksCreated, TaskPolls, TaskResults,
// TaskExecutions, TaskStatus, ...).
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
// Server.Stats tells tests what the server saw, faults included;
// Server.WaitStats waits for it to see something, without sleeping. On a
// modern server 429, 503 and cut answer streams (FaultDropStream after N
// events: there is no resumption in 2026-07-28) apply; session faults do
// not.
package testservers
