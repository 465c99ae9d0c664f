// Package modern is the client side of the Streamable HTTP transport of MCP,
// protocol revisions 2025-03-26 to 2026-07-28.
//
// One transport serves both protocol eras. In the legacy era (2025-03-26 to
// 2025-11-25) it keeps the session described below. In the modern era
// (2026-07-28) no initialize goes out, so there is no session, no GET stream
// and no DELETE: every request is a POST whose request metadata headers
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*: see
// metadata.go) the protocol layer passes in with WithHeaders, and a call is
// cancelled by closing its response stream.
//
// Every message the client sends is an HTTP POST to one endpoint. The server
// answers a request with either one JSON body (a message or a batch) or an
// SSE stream that carries the response, possibly preceded by server requests
// and notifications; notifications and responses are answered with 202.
// After the client sends notifications/initialized, the transport opens the
// optional standalone GET stream (with Options.StreamOnDemand, only once
// OpenStream asks for it) on which the server may send requests and
// notifications at any time; that Send returns once the server has answered
// the GET (stream open or refused, waiting 2 s at most), so whatever the
// server sends after the handshake has a way to the client.
//
// The transport keeps the session: the Mcp-Session-Id header of the HTTP
// response to initialize, and the protocolVersion of the initialize result,
// are sent as Mcp-Session-Id and MCP-Protocol-Version on every later request
// and on the DELETE that ends the session at Close. A session id must be
// visible ASCII (0x21–0x7E) of at most MaxSessionIDLen (1024) bytes; any
// other fails initialize with ErrInvalidSessionID and is never sent back.
//
// Every request goes through the library's redirect policy (see
// Options.HTTPClient): nothing is ever sent to another origin than the
// endpoint's, and a refused redirect is a *jsonrpc.RedirectError.
//
// Recovery that only this transport can do is done here, timed by
// Options.Reconnect (a reconnect.Policy):
//
//   - A request's event stream that breaks, or that the server ends,
//     before the response is resumed when the server gave its events ids:
//     a GET with Last-Event-ID set to the last id seen picks the stream
//     up, again and again, until the policy gives up. A stream that the
//     server ends cleanly after a new event id, having sent a retry:
//     field (on it or before), is a poll the server asked for, as the
//     specification lets it do with a long-running request: the next GET
//     waits the retry: (100 ms at least), costs none of the policy's
//     attempts and starts its run over, for as long as the server goes on
//     so and the caller waits. After the answer stream breaks, or ends
//     otherwise, the first GET waits the server's retry: delay (exactly)
//     or, without one, not at all. A resumed stream that breaks is
//     resumed after the server's retry: (exactly), else at once the first
//     time since progress and after the policy's backoff from then on;
//     one the server ends cleanly and is no poll (no new id, or no retry:
//     ever), after the server's retry: (100 ms at least: retry: 0 is no
//     hot loop) or the policy's backoff, from InitialDelay, never at once.
//     A message delivered (a notification, a server request) is progress
//     and starts the policy's run over too: a stream that brings a new
//     event id and nothing else, without a retry:, is not. The response
//     reaches Recv once. A stream without ids, a server that cannot resume (405), or a
//     policy that gives up make Send fail with an error matching
//     jsonrpc.ErrOutcomeUnknown: the request is never sent a second time.
//     A stream the server ends cleanly after a response to another id is
//     not resumed: the server has answered, wrongly, and Send fails at once
//     with ErrNoResponse (and jsonrpc.ErrOutcomeUnknown).
//   - The standalone GET stream is reopened whenever it ends or fails, for
//     the life of the transport (or of its session), with Last-Event-ID of
//     the last event seen on it, after the server's retry: (exactly after
//     a failure, 100 ms at least after a clean end) or the backoff (with
//     the policy's jitter). A stream the server ends cleanly after a new
//     event id, having sent a retry: (on it or before), is a poll it asked
//     for, as for a request's stream: reopened after the retry: (100 ms at
//     least), every time, at no cost to the policy. A stream that
//     delivered a message, or stayed open for the policy's InitialDelay,
//     is progress and starts the backoff over: one that the server or an
//     idle proxy ends after a quiet while is reopened after InitialDelay.
//     A stream ended at once with nothing in it and no poll (a new event
//     id alone is nothing), a refusal and a failed connection are not:
//     once the policy's attempts or budget are used up without progress,
//     it warns and goes on trying every MaxDelay. A stream that opens
//     again without Last-Event-ID, its events having had no ids, cannot
//     replay what the server sent while none was open: once it is open,
//     Recv returns a *jsonrpc.GapError (one at a time: while one waits
//     for Recv, no other is added).
//   - A 429 or 503 with Retry-After to any GET (reopening the standalone
//     stream, resuming a request's) is waited out before the next GET:
//     the Retry-After (100 ms at least) within the policy's MaxRetryAfter,
//     the cap over it. Each is a failed attempt, as it is for a POST: the
//     policy's MaxAttempts and Budget bound how long a server may keep a
//     GET waiting, so that a resumption the server throttles for ever
//     fails the call as outcome unknown, and the standalone stream falls
//     back to MaxDelay. The standalone stream's failures never fail Send.
//     A refusal of its first GET (405, or the 404 and 400 some servers
//     send) means the server offers no such stream: it is not asked for
//     again.
//   - A POST answered 429, or 503 with Retry-After, was not run: it is
//     sent again after the Retry-After the server asked for (within the
//     policy's cap) or the backoff, and so is a POST whose connection was
//     refused. A 503 without Retry-After may be a gateway's after the
//     server ran the request: only a request whose context is marked
//     reconnect.WithResendable is sent again after it; any other fails
//     with the 503, matching jsonrpc.ErrOutcomeUnknown; a wait over
//     the cap or the policy's attempts, or past the caller's deadline, is
//     a *reconnect.RetryAfterError (reconnect.Policy.Retrying does this).
//     Sent again, it carries the session current then, never one that
//     expired during the wait: a request moves to the session that
//     replaced its own once that one is initialized; otherwise the message
//     is refused unsent, as below.
//
// Conditions the protocol layer must act on are reported as the wrapped
// sentinel errors of package jsonrpc: a 404 on a request that carried a
// session id is jsonrpc.ErrSessionExpired, and the transport forgets the
// session; from then on it refuses to send anything but an initialize
// request (with an error matching jsonrpc.ErrSessionExpired and
// jsonrpc.ErrNotSent: nothing sent) until an initialize succeeds and starts
// a new session. A 404 that ends
// the session where no Send can report it (reopening the GET stream,
// resuming a stream) is a *jsonrpc.SessionLostError from Recv, which goes
// on. A stream that ended before the response and could not be resumed is
// jsonrpc.ErrOutcomeUnknown, and so is a POST that failed in any way after
// its request went out in full. Every other status the transport cannot
// use is a *jsonrpc.HTTPError; for a request that went out, a 5xx other
// than 501 and a 503 with Retry-After, its body holding no JSON-RPC error,
// also matches jsonrpc.ErrOutcomeUnknown (a gateway answers so after the
// server ran it, too).
//
// Messages from the server are queued for Recv in the order they arrived on
// each stream. The queue is bounded (wire.MaxQueued messages,
// wire.MaxQueuedBytes bytes; one bigger message passes alone): when it is
// full, the stream readers stop reading and TCP flow control pushes back on
// the server, and Send, which returns once its response is queued, waits
// too. Nothing is dropped. The host is expected to call Recv in a dedicated
// loop that never waits for a Send.
//
// Every retry, resumption and reconnect is logged at Info level with its
// reason and wait; giving up is logged at Warn level.
package modern
