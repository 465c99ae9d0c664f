package sdkcompare_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
)

// The 2026-07-28 revision against the 2025 ones, and anymcp against the
// go-sdk client on 2026 servers. Sub-benchmark names are key=value, so
// benchstat can put them side by side (eras.sh).

// eraServer starts a test server of era ("modern": 2026-07-28 only;
// "legacy": 2025-11-25 and before) over transport; stop ends it.
func eraServer(transport, era string, onRequest func(*http.Request)) (s *server, stop func()) {
	opts := testservers.Options{}
	if era == "modern" {
		opts.Eras = testservers.StatelessOnly
	}
	switch transport {
	case "http-json", "http-sse":
		hs := testservers.StartStreamable(testservers.HTTPOptions{Options: opts, JSONResponse: transport == "http-json", OnRequest: onRequest})
		return &server{transport: transport, url: hs.URL}, hs.Close
	case "stdio":
		path, args, _ := testservers.StdioCommand()
		return &server{transport: transport, path: path, args: args, env: testservers.StdioEnv(opts)}, func() {}
	}
	panic("unknown transport " + transport)
}

// BenchmarkEraCall measures one tools/call of echo by anymcp on a modern
// server and on a legacy one, over each transport: what the revision costs
// per call (the stateless request carries _meta and more headers, its answer
// resultType and _meta).
func BenchmarkEraCall(b *testing.B) {
	for _, tr := range transports {
		for _, era := range []string{"legacy", "modern"} {
			b.Run("transport="+tr+"/era="+era, func(b *testing.B) {
				s, stop := eraServer(tr, era, nil)
				defer stop()
				cn := connect(b, s, contender{name: "anymcp", dial: dialAnymcp})
				defer cn.close()
				if got := cn.(*anymcpConn).c.Info().Era; string(got) != era {
					b.Fatalf("negotiated the %s era, want %s", got, era)
				}
				callLoop(b, cn, "anymcp")
			})
		}
	}
}

// callLoop times sequential echo calls on cn.
func callLoop(b *testing.B, cn conn, name string) {
	ctx := context.Background()
	check := func(text string, err error) {
		if err != nil {
			b.Fatalf("%s: tools/call: %v", name, err)
		}
		if text != echoText {
			b.Fatalf("%s: echo answered %q", name, text)
		}
	}
	check(cn.callTool(ctx, "echo", echoArgs)) // warm up, outside the timing
	b.ReportAllocs()
	for b.Loop() {
		check(cn.callTool(ctx, "echo", echoArgs))
	}
}

// startGoSDKModern starts go-sdk's own 2026-07-28-only stateless server
// (the server of issue 9's report) with an echo tool like the test
// servers'.
func startGoSDKModern() (*server, func()) {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "gosdk-modern", Version: "v0"},
		&gosdk.ServerOptions{SupportedProtocolVersions: []string{"2026-07-28"}})
	type echoIn struct {
		Text string `json:"text"`
	}
	gosdk.AddTool(s, &gosdk.Tool{Name: "echo", Description: "answers its text"},
		func(ctx context.Context, req *gosdk.CallToolRequest, in echoIn) (*gosdk.CallToolResult, any, error) {
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: in.Text}}}, nil, nil
		})
	h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(h)
	return &server{transport: "http-sse", url: hs.URL}, hs.Close
}

// statelessServers are the 2026-07-28 servers both clients are measured on.
var statelessServers = []struct {
	name  string
	start func() (*server, func())
}{
	{"gosdk-stateless", startGoSDKModern},
	{"testservers-modern", func() (*server, func()) { return eraServer("http-sse", "modern", nil) }},
}

// BenchmarkStatelessCall measures one tools/call of echo by anymcp and by the
// go-sdk client on the same 2026-07-28 server. The server runs in this
// process: its bytes and allocations are in every row, the same for both
// clients.
func BenchmarkStatelessCall(b *testing.B) {
	for _, srv := range statelessServers {
		for _, c := range []contender{{name: "anymcp", dial: dialAnymcp}, {name: "gosdk", dial: dialGoSDK}} {
			b.Run("server="+srv.name+"/client="+c.name, func(b *testing.B) {
				s, stop := srv.start()
				defer stop()
				cn := connect(b, s, c)
				defer cn.close()
				callLoop(b, cn, c.name)
			})
		}
	}
}

// coldServers are one server of each era and transport, for a cold Dial.
var coldServers = []struct {
	name       string
	transport  string // for eraServer, or "sse" for an HTTP+SSE server
	era        string
	wantEra    string
	wantTransp string
}{
	{"modern-http", "http-sse", "modern", "stateless", client.TransportStreamableHTTP},
	{"legacy-http", "http-sse", "legacy", "initialize", client.TransportStreamableHTTP},
	{"legacy-sse", "sse", "legacy", "initialize", client.TransportSSE},
	{"modern-stdio", "stdio", "modern", "stateless", client.TransportStdio},
	{"legacy-stdio", "stdio", "legacy", "initialize", client.TransportStdio},
}

// BenchmarkColdDial measures anymcp's client.Dial against a server of
// each era and transport, cold every time (a new http.Client, no
// negotiation cache; a new process over stdio), with the default era
// policy; Close is outside the timing. It reports the HTTP requests the
// server saw while Dial ran (http-reqs/dial) and in the whole life of the
// connection, Close included (http-reqs/conn: the GET or listen stream, the
// DELETE), and the messages the client sent while Dial ran (msgs/dial).
func BenchmarkColdDial(b *testing.B) {
	for _, cs := range coldServers {
		b.Run("server="+cs.name, func(b *testing.B) {
			var reqs atomic.Int64
			count := func(*http.Request) { reqs.Add(1) }
			var s *server
			stop := func() {}
			if cs.transport == "sse" {
				ls := testservers.StartLegacy(testservers.LegacyOptions{Options: testservers.Options{Versions: []string{"2025-11-25", "2024-11-05"}}, OnRequest: count})
				s, stop = &server{transport: "sse", url: ls.URL}, ls.Close
			} else {
				s, stop = eraServer(cs.transport, cs.era, count)
			}
			defer stop()
			var msgs atomic.Int64
			hook := client.WithMessageHook(func(sent bool, _ *jsonrpc.Message) {
				if sent {
					msgs.Add(1)
				}
			})
			ctx := context.Background()
			var dialReqs, dialMsgs int64
			b.ReportAllocs()
			for b.Loop() {
				before, beforeMsgs := reqs.Load(), msgs.Load()
				var (
					c   *client.Conn
					hc  *http.Client
					err error
				)
				dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				if s.isHTTP() {
					hc = newHTTPClient()
					c, err = client.Dial(dctx, client.URL(s.url), client.WithHTTPClient(hc), hook)
				} else {
					c, err = client.Dial(dctx, client.Command(s.path, s.args...).WithEnv(s.env...), hook)
				}
				cancel()
				if err != nil {
					b.Fatalf("dial: %v", err)
				}
				dialReqs += reqs.Load() - before
				dialMsgs += msgs.Load() - beforeMsgs
				b.StopTimer()
				if info := c.Info(); string(info.Era) != cs.wantEra || info.Transport != cs.wantTransp {
					b.Fatalf("negotiated %s over %s, want %s over %s", info.Era, info.Transport, cs.wantEra, cs.wantTransp)
				}
				if err := c.Close(); err != nil {
					b.Fatalf("close: %v", err)
				}
				if hc != nil {
					hc.CloseIdleConnections()
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(dialReqs)/float64(b.N), "http-reqs/dial")
			b.ReportMetric(float64(reqs.Load())/float64(b.N), "http-reqs/conn")
			b.ReportMetric(float64(dialMsgs)/float64(b.N), "msgs/dial")
		})
	}
}
