// Package sdkcompare compares anymcp's client with the two other Go MCP
// clients, the official github.com/modelcontextprotocol/go-sdk and
// github.com/mark3labs/mcp-go; it holds only tests.
//
// Every client talks to the same servers from package testservers:
// Streamable HTTP on an httptest server answering with application/json
// ("http-json") or with an SSE stream ("http-sse"), HTTP+SSE of revision
// 2024-11-05 ("legacy-sse"), Streamable HTTP of 2026-07-28 only
// ("modern"), and the stdio test server, which is this test binary started
// again as a child process ("stdio"). Each client is used with its
// defaults, as a user who follows its documentation would, except that
// every HTTP connection gets its own http.Client with a fresh
// http.Transport (net/http's default settings, which go-sdk and mcp-go use
// by default) so that no client reuses another's (or an earlier
// iteration's) TCP connections.
//
// Next to the clients runs a floor: the least work that still does the
// same exchange. Over Streamable HTTP it is a raw net/http POST of the same
// request bytes, its answer read to the end into a reused buffer; over
// HTTP+SSE the same POST to the endpoint the GET stream named, the answer
// read off that stream; over stdio a raw write of the request line to the
// child and a read of the answer line. A client's own overhead is its cost
// minus the floor's.
//
// The benchmarks:
//
//   - BenchmarkCallTool/{transport}/{client}: one tools/call of echo on a
//     connected client, over http-json, http-sse, stdio and legacy-sse.
//   - BenchmarkBigResult/{transport}/{client}: one tools/call of big with
//     a 16 MiB text result, and peak-B: how far the heap rose above its
//     level before one more call (sampled every millisecond, peak_test.go).
//     Every server runs in a process of its own here (HTTP ones too,
//     serverproc_test.go), so B/op and peak-B are the client's alone. A
//     client that refuses the result is skipped with the error it
//     returned, marked REFUSED (go-sdk's CommandTransport caps a stdio
//     line at 16 MiB); the "gosdk-nocap" row runs go-sdk over stdio with
//     that cap lifted through the knob it offers (an IOTransport with
//     MaxLineLength -1 over a child started by hand).
//   - BenchmarkConnect/{transport}/{client}: connect, handshake, first
//     tools/list and close, cold every time.
//   - BenchmarkConcurrentCalls/http-json/{client}: 64 goroutines calling
//     echo at once on one connected client (calls/s), with the TCP
//     connections the server saw opened. Here anymcp uses the HTTP client
//     it makes by default (a pool sized for busy Conns); "floor-pooled" is
//     the floor with as many idle connections per host as callers.
//   - BenchmarkIdleHeap/{transport}/{client}: the memory an idle client
//     holds after connect and one call, per client over 50 connected at
//     once (live heap, heap in use, stacks, goroutines, TCP connections),
//     over http-json, legacy-sse and modern, the server in a process of
//     its own, and over http-listen: http-json with every client holding
//     the standalone GET stream open, as for a host that listens for
//     notifications (go-sdk opens it by default; anymcp is given a
//     notification handler, mcp-go continuous listening, the floor a GET
//     of its own). Run it with -benchtime 1x: one op is one measurement.
//
// The era benchmarks (eras_test.go; eras.sh runs them and prints the
// ratio tables of RESULTS.md):
//
//   - BenchmarkEraCall/transport=T/era=E: one tools/call of echo by anymcp
//     on a 2026-07-28 test server and on a 2025-11-25 one.
//   - BenchmarkStatelessCall/server=S/client=C: anymcp and the go-sdk client
//     on the same 2026-07-28 server: go-sdk's own stateless server, and
//     testservers.StartStateless.
//   - BenchmarkColdDial/server=S: client.Dial of each era and transport,
//     cold, with the HTTP requests the server saw and the messages sent.
//
// TestEcho checks that every contender gets the right answers over every
// transport (and that anymcp negotiated the one meant); TestConcurrentCalls,
// TestIdleHeap and TestPeakSampler check the other scenarios the same way,
// cheaply, so that a broken scenario fails CI; TestConnectRequests logs the
// HTTP requests each client makes to connect (run it with -v).
//
// Where the HTTP server runs in this process (CallTool, Connect,
// ConcurrentCalls, the era benchmarks), B/op and allocs/op include the
// server's share too; it is the same for every client and the floor, and
// cancels out of the overhead figures. run.sh runs everything in
// interleaved rounds and prints the tables of RESULTS.md.
package sdkcompare
