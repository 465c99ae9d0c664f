// Package sdkcompare compares anymcp's client with the two other Go MCP
// clients: github.com/modelcontextprotocol/go-sdk and
// github.com/mark3labs/mcp-go. It holds only tests.
//
// Every client talks to the same servers from package testservers:
// Streamable HTTP answering with application/json ("http-json") or SSE
// ("http-sse"); HTTP+SSE of 2024-11-05 ("legacy-sse"); Streamable HTTP of
// 2026-07-28 only ("modern"); the stdio test server, which is this test
// binary started again ("stdio"). Each client runs with its defaults, as its
// documentation says. Only the HTTP connections differ: each gets its own
// http.Client with a fresh http.Transport (net/http's defaults, which
// go-sdk and mcp-go use), so no client reuses another's TCP connections.
//
// Next to the clients runs a floor: the least work that does the same
// exchange. Over Streamable HTTP it is a raw POST of the same bytes, its
// answer read into a reused buffer. Over HTTP+SSE it POSTs to the endpoint
// the GET stream named and reads the answer off that stream. Over stdio it
// writes the request line and reads the answer line. A client's overhead is
// its cost minus the floor's.
//
// The benchmarks:
//
//   - BenchmarkCallTool/{transport}/{client}: one tools/call of echo.
//   - BenchmarkBigResult/{transport}/{client}: one call with a 16 MiB text
//     result, and peak-B, the heap's rise during one call (peak_test.go).
//     Every server runs in a process of its own (serverproc_test.go), so
//     B/op and peak-B are the client's alone. A client that refuses the
//     result is marked REFUSED (go-sdk caps a stdio line at 16 MiB);
//     "gosdk-nocap" lifts that cap through go-sdk's IOTransport.
//   - BenchmarkConnect/{transport}/{client}: connect, handshake, first
//     tools/list and close, cold every time.
//   - BenchmarkConcurrentCalls/http-json/{client}: 64 goroutines call echo
//     on one client (calls/s, and the TCP connections the server saw).
//     anymcp uses its default HTTP client; "floor-pooled" keeps as many
//     idle connections per host as callers.
//   - BenchmarkIdleHeap/{transport}/{client}: the memory one idle client
//     holds, over 50 connected at once, after connect and one call. Over
//     http-listen every client also holds the standalone GET stream open.
//     Run it with -benchtime 1x: one op is one measurement.
//
// The era benchmarks (eras_test.go; eras.sh prints their tables):
//
//   - BenchmarkEraCall/transport=T/era=E: one call by anymcp on a
//     2026-07-28 server and on a 2025-11-25 one.
//   - BenchmarkStatelessCall/server=S/client=C: anymcp and go-sdk on
//     go-sdk's stateless server and on testservers.StartStateless.
//   - BenchmarkColdDial/server=S: a cold client.Dial of each era and
//     transport, with the requests the server saw.
//
// TestEcho checks every client's answers over every transport.
// TestConcurrentCalls, TestIdleHeap and TestPeakSampler check the other
// scenarios cheaply, so a broken scenario fails CI. TestConnectRequests
// logs the HTTP requests each client makes to connect (run it with -v).
//
// Where the HTTP server runs in this process, B/op and allocs/op include
// its share. That share is the same for every client and the floor, so it
// cancels out of the overhead. run.sh runs everything in interleaved rounds
// and prints the tables of RESULTS.md.
package sdkcompare
