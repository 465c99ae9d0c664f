package sdkcompare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) {
	testservers.RunFromEnv() // this test binary doubles as the stdio test server
	serveHTTPFromEnv()       // and as an HTTP one in a process of its own
	os.Exit(m.Run())
}

// transports are those of every benchmark: Streamable HTTP answering with
// JSON and with SSE, and stdio. callTransports adds HTTP+SSE, the
// 2024-11-05 transport, for the call.
var (
	transports     = []string{"http-json", "http-sse", "stdio"}
	callTransports = append(transports[:len(transports):len(transports)], "legacy-sse")
)

const (
	echoText = "hello, benchmark"
	bigMiB   = 16
)

var (
	echoArgs = map[string]any{"text": echoText}
	bigArgs  = map[string]any{"mib": bigMiB}
)

// startServer starts a fresh test server for transport; stop ends it.
func startServer(transport string) (s *server, stop func()) {
	switch transport {
	case "http-json", "http-sse":
		hs := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: transport == "http-json"})
		return &server{transport: transport, url: hs.URL}, hs.Close
	case "legacy-sse":
		ls := testservers.StartLegacy(testservers.LegacyOptions{})
		return &server{transport: transport, url: ls.URL}, ls.Close
	case "modern":
		hs := testservers.StartStateless(testservers.HTTPOptions{})
		return &server{transport: transport, url: hs.URL}, hs.Close
	case "stdio":
		path, args, env := testservers.StdioCommand()
		return &server{transport: transport, path: path, args: args, env: append(env, noRaceExitSleep)}, func() {}
	}
	panic("unknown transport " + transport)
}

// startOutOfProcess starts a test server for transport in a process of
// its own (stdio's always is; HTTP ones with startServerProcess), or ends
// the benchmark.
func startOutOfProcess(tb testing.TB, transport string) (*server, func()) {
	tb.Helper()
	if transport == "stdio" {
		return startServer(transport)
	}
	s, stop, err := startServerProcess(transport)
	if err != nil {
		tb.Fatal(err)
	}
	return s, func() {
		if err := stop(); err != nil {
			tb.Errorf("%s server process: %v", transport, err)
		}
	}
}

// inProcess starts servers with startServer.
func inProcess(_ testing.TB, transport string) (*server, func()) { return startServer(transport) }

// forEach runs f as the sub-benchmark {transport}/{client} of benchmark
// bench for every transport of trs and contender, each with a server of
// its own, started by start.
func forEach(b *testing.B, bench string, trs []string, start func(testing.TB, string) (*server, func()), f func(b *testing.B, s *server, c contender)) {
	for _, tr := range trs {
		b.Run(tr, func(b *testing.B) {
			for _, c := range contenders {
				if c.variant() && c.only != bench || c.stdioOnly && tr != "stdio" {
					continue
				}
				b.Run(c.name, func(b *testing.B) {
					s, stop := start(b, tr)
					defer stop()
					f(b, s, c)
				})
			}
		})
	}
}

// dialTimeout bounds every connect.
const dialTimeout = 30 * time.Second

// dial dials c to s within dialTimeout (and ctx), as a host would: the
// dial's context ends when the dial returns, and the connection must
// outlive it.
func dial(ctx context.Context, s *server, c contender) (conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	cn, err := c.dial(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %w", c.name, err)
	}
	return cn, nil
}

// connect dials c to s, or ends the benchmark.
func connect(b *testing.B, s *server, c contender) conn {
	b.Helper()
	cn, err := dial(context.Background(), s, c)
	if err != nil {
		b.Fatal(err)
	}
	return cn
}

// BenchmarkCallTool measures one tools/call of echo over a connected
// client.
func BenchmarkCallTool(b *testing.B) {
	forEach(b, "CallTool", callTransports, inProcess, func(b *testing.B, s *server, c contender) {
		cn := connect(b, s, c)
		defer cn.close()
		ctx := context.Background()
		check := func(text string, err error) {
			if err != nil {
				b.Fatalf("%s: tools/call: %v", c.name, err)
			}
			if c.name != "floor" && text != echoText {
				b.Fatalf("%s: echo answered %q", c.name, text)
			}
		}
		check(cn.callTool(ctx, "echo", echoArgs)) // warm up, outside the timing
		b.ReportAllocs()
		for b.Loop() {
			check(cn.callTool(ctx, "echo", echoArgs))
		}
	})
}

// BenchmarkBigResult measures one tools/call of big: a 16 MiB text result.
// A client that refuses the result on the first call is skipped with its
// error. After the timed calls, one more, untimed, measures how far the
// heap rises above what it was before the call (peak-B, see peakOf),
// sampled every millisecond. Every server runs in a process of its own,
// over HTTP too, so that B/op and peak-B are the client's alone.
func BenchmarkBigResult(b *testing.B) {
	forEach(b, "BigResult", transports, startOutOfProcess, func(b *testing.B, s *server, c contender) {
		cn := connect(b, s, c)
		defer cn.close()
		ctx := context.Background()
		if _, err := cn.callTool(ctx, "big", bigArgs); err != nil {
			b.Skipf("REFUSED: %s: a %d MiB tool result: %v", b.Name(), bigMiB, err)
		}
		call := func() error {
			text, err := cn.callTool(ctx, "big", bigArgs)
			if err != nil {
				return fmt.Errorf("%s: tools/call: %w", c.name, err)
			}
			if c.name != "floor" && len(text) != bigMiB<<20 {
				return fmt.Errorf("%s: big answered %d bytes", c.name, len(text))
			}
			return nil
		}
		b.ReportAllocs()
		b.SetBytes(bigMiB << 20)
		for b.Loop() {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
		peak, err := peakOf(call)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(peak), "peak-B")
	})
}

// BenchmarkConnect measures a cold connect: a new connection (a new
// process over stdio, new TCP connections over HTTP), the handshake, the
// first tools/list, and close. anymcp-warm is anymcp with a negotiation
// cache that knows the server already (client.WithCache): new connections
// still, but no era probe.
func BenchmarkConnect(b *testing.B) {
	forEach(b, "Connect", transports, inProcess, func(b *testing.B, s *server, c contender) {
		ctx := context.Background()
		once := func() {
			cn := connect(b, s, c)
			n, err := cn.listTools(ctx)
			if err != nil {
				b.Fatalf("%s: tools/list: %v", c.name, err)
			}
			if c.name != "floor" && n == 0 {
				b.Fatalf("%s: tools/list: no tools", c.name)
			}
			if err := cn.close(); err != nil {
				b.Fatalf("%s: close: %v", c.name, err)
			}
		}
		if c.warm {
			once() // the cold connect that warms the cache, outside the timing
		}
		b.ReportAllocs()
		for b.Loop() {
			once()
		}
	})
}

// wantNegotiated is what anymcp must negotiate with the server of each
// transport of startServer.
var wantNegotiated = map[string]struct{ era, transport string }{
	"http-json":  {string(mcp.EraInitialize), client.TransportStreamableHTTP},
	"http-sse":   {string(mcp.EraInitialize), client.TransportStreamableHTTP},
	"legacy-sse": {string(mcp.EraInitialize), client.TransportSSE},
	"modern":     {string(mcp.EraStateless), client.TransportStreamableHTTP},
	"stdio":      {string(mcp.EraInitialize), client.TransportStdio},
}

// TestEcho checks that every contender gets the right answers from every
// transport, and that anymcp negotiated the transport and era meant: the
// benchmarks compare like with like.
func TestEcho(t *testing.T) {
	for _, tr := range append(callTransports, "modern") {
		for _, c := range contenders {
			if c.stdioOnly && tr != "stdio" {
				continue
			}
			t.Run(tr+"/"+c.name, func(t *testing.T) {
				s, stop := startServer(tr)
				defer stop()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cn, err := dial(ctx, s, c)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := cn.close(); err != nil {
						t.Errorf("close: %v", err)
					}
				}()
				if a, ok := cn.(*anymcpConn); ok {
					want := wantNegotiated[tr]
					if info := a.c.Info(); string(info.Era) != want.era || info.Transport != want.transport {
						t.Errorf("negotiated %s over %s, want %s over %s", info.Era, info.Transport, want.era, want.transport)
					}
				}
				n, err := cn.listTools(ctx)
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				if raw, ok := cn.(rawBody); ok {
					if !bytes.Contains(raw.last(), []byte(`"name":"echo"`)) {
						t.Errorf("tools/list answered %.300s", raw.last())
					}
				} else if n == 0 {
					t.Error("tools/list: no tools")
				}
				text, err := cn.callTool(ctx, "echo", echoArgs)
				if err != nil {
					t.Fatalf("tools/call: %v", err)
				}
				if raw, ok := cn.(rawBody); ok {
					if body := string(raw.last()); !strings.Contains(body, `"text":"`+echoText+`"`) {
						t.Errorf("tools/call echo answered %.300s", body)
					}
				} else if text != echoText {
					t.Errorf("tools/call echo answered %q", text)
				}
			})
		}
	}
}

// TestConnectRequests logs the HTTP requests each client makes to connect,
// list the tools once and close: what BenchmarkConnect pays for. Run it
// with -v to see them.
func TestConnectRequests(t *testing.T) {
	for _, tr := range transports[:2] {
		for _, c := range contenders {
			if c.stdioOnly {
				continue
			}
			t.Run(tr+"/"+c.name, func(t *testing.T) {
				var (
					mu  sync.Mutex
					log []string
				)
				hs := testservers.StartStreamable(testservers.HTTPOptions{
					JSONResponse: tr == "http-json",
					OnRequest: func(r *http.Request) {
						what := r.Method
						if r.Method == http.MethodPost {
							body, _ := io.ReadAll(r.Body)
							r.Body = io.NopCloser(bytes.NewReader(body))
							var m struct{ Method string }
							_ = json.Unmarshal(body, &m)
							if m.Method == "" {
								m.Method = "(response)"
							}
							what += " " + m.Method
						}
						mu.Lock()
						log = append(log, what)
						mu.Unlock()
					},
				})
				defer hs.Close()
				s := &server{transport: tr, url: hs.URL}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				once := func() {
					cn, err := dial(ctx, s, c)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := cn.listTools(ctx); err != nil {
						t.Fatalf("tools/list: %v", err)
					}
					if err := cn.close(); err != nil {
						t.Errorf("close: %v", err)
					}
				}
				if c.warm {
					once() // warms the cache; not logged
					mu.Lock()
					log = nil
					mu.Unlock()
				}
				once()
				mu.Lock()
				defer mu.Unlock()
				t.Logf("%d requests: %s", len(log), strings.Join(log, ", "))
			})
		}
	}
}
