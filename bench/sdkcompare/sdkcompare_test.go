package sdkcompare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) {
	testservers.RunFromEnv() // this test binary doubles as the stdio test server
	os.Exit(m.Run())
}

var transports = []string{"http-json", "http-sse", "stdio"}

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
	case "stdio":
		path, args, env := testservers.StdioCommand()
		return &server{transport: transport, path: path, args: args, env: env}, func() {}
	}
	panic("unknown transport " + transport)
}

// forEach runs f as the sub-benchmark {transport}/{client} for every
// transport and contender, each with a server of its own.
func forEach(b *testing.B, big bool, f func(b *testing.B, s *server, c contender)) {
	for _, tr := range transports {
		b.Run(tr, func(b *testing.B) {
			for _, c := range contenders {
				if c.bigOnly && !big || c.stdioOnly && tr != "stdio" {
					continue
				}
				b.Run(c.name, func(b *testing.B) {
					s, stop := startServer(tr)
					defer stop()
					f(b, s, c)
				})
			}
		})
	}
}

// connect dials c to s, or ends the benchmark.
func connect(b *testing.B, s *server, c contender) conn {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cn, err := c.dial(ctx, s)
	if err != nil {
		b.Fatalf("%s: connect: %v", c.name, err)
	}
	return cn
}

// BenchmarkCallTool measures one tools/call of echo over a connected
// client.
func BenchmarkCallTool(b *testing.B) {
	forEach(b, false, func(b *testing.B, s *server, c contender) {
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
// error.
func BenchmarkBigResult(b *testing.B) {
	forEach(b, true, func(b *testing.B, s *server, c contender) {
		cn := connect(b, s, c)
		defer cn.close()
		ctx := context.Background()
		if _, err := cn.callTool(ctx, "big", bigArgs); err != nil {
			b.Skipf("REFUSED: %s: a %d MiB tool result: %v", b.Name(), bigMiB, err)
		}
		b.ReportAllocs()
		b.SetBytes(bigMiB << 20)
		for b.Loop() {
			text, err := cn.callTool(ctx, "big", bigArgs)
			if err != nil {
				b.Fatalf("%s: tools/call: %v", c.name, err)
			}
			if c.name != "floor" && len(text) != bigMiB<<20 {
				b.Fatalf("%s: big answered %d bytes", c.name, len(text))
			}
		}
	})
}

// BenchmarkConnect measures a cold connect: a new connection (a new
// process over stdio, new TCP connections over HTTP), the handshake, the
// first tools/list, and close.
func BenchmarkConnect(b *testing.B) {
	forEach(b, false, func(b *testing.B, s *server, c contender) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
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
	})
}

// TestEcho checks that every contender gets the right answers from every
// transport: the benchmarks compare like with like.
func TestEcho(t *testing.T) {
	for _, tr := range transports {
		for _, c := range contenders {
			if c.stdioOnly && tr != "stdio" {
				continue
			}
			t.Run(tr+"/"+c.name, func(t *testing.T) {
				s, stop := startServer(tr)
				defer stop()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cn, err := c.dial(ctx, s)
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer func() {
					if err := cn.close(); err != nil {
						t.Errorf("close: %v", err)
					}
				}()
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
				cn, err := c.dial(ctx, s)
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				if _, err := cn.listTools(ctx); err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				if err := cn.close(); err != nil {
					t.Errorf("close: %v", err)
				}
				mu.Lock()
				defer mu.Unlock()
				t.Logf("%d requests: %s", len(log), strings.Join(log, ", "))
			})
		}
	}
}
