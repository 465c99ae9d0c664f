package gateway

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/gateway"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) {
	testservers.RunFromEnv() // the stdio server both sides start is this binary
	code := m.Run()
	// Every stdio server, mcporter and its daemon must be gone by now.
	if left := children(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "bench/gateway: processes left running: %v\n", left)
		code = 1
	}
	os.Exit(code)
}

// clients is how many clients call at once.
const clients = 64

// stdioServer is the stdio server of the fleet: this test binary.
func stdioServer() (path string, env []string) {
	p, _, e := testservers.StdioCommand()
	return p, e
}

func stdioTarget() client.Target {
	p, env := stdioServer()
	return client.Command(p).WithEnv(env...)
}

// endpoint is where a side's clients call echo, under the name it has there.
type endpoint struct {
	dial func(ctx context.Context) (*client.Conn, error)
	tool string
}

// BenchmarkCall: b.N calls of echo from 64 clients at once, direct to the
// stdio server (one Conn, shared), through the gateway (in process, on
// httptest) and through mcporter serve --http. ns/op is wall time over
// b.N; p50 and p99 are each call's own latency.
func BenchmarkCall(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		ctx := context.Background()
		conn, err := client.Dial(ctx, stdioTarget())
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		runCalls(b, endpoint{dial: func(context.Context) (*client.Conn, error) { return conn, nil }, tool: "echo"}, false)
	})
	b.Run("gateway", func(b *testing.B) {
		ctx := context.Background()
		g, err := gateway.New(ctx, []fleet.Server{{Name: "everything", Target: stdioTarget()}}, gateway.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		srv := httptest.NewServer(g.Handler())
		defer srv.Close()
		runCalls(b, endpoint{dial: func(ctx context.Context) (*client.Conn, error) {
			return client.Dial(ctx, client.URL(srv.URL+"/mcp"))
		}, tool: "everything__echo"}, true)
	})
	b.Run("mcporter", func(b *testing.B) {
		p, env := stdioServer()
		m := startMcporter(b, map[string]any{"everything": map[string]any{"command": p, "env": envMap(env), "lifecycle": "keep-alive"}})
		runCalls(b, endpoint{dial: func(ctx context.Context) (*client.Conn, error) {
			return client.Dial(ctx, client.URL(m.url))
		}, tool: ""}, true)
	})
}

// runCalls dials the clients (one Conn for all unless each), finds the
// echo tool when ep.tool is empty, and times b.N calls.
func runCalls(b *testing.B, ep endpoint, each bool) {
	ctx := context.Background()
	conns := make([]*client.Conn, clients)
	for i := range conns {
		if i > 0 && !each {
			conns[i] = conns[0]
			continue
		}
		c, err := ep.dial(ctx)
		if err != nil {
			b.Fatalf("dial: %v", err)
		}
		if each {
			defer c.Close()
		}
		conns[i] = c
	}
	if ep.tool == "" {
		tools, err := conns[0].AllTools(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range tools {
			if t.Name == "echo" || strings.HasSuffix(t.Name, "echo") {
				ep.tool = t.Name
			}
		}
		if ep.tool == "" {
			b.Fatalf("no echo tool among %d", len(tools))
		}
	}
	// One call each first: connections and processes up before timing.
	for _, c := range conns[:min(len(conns), clients)] {
		if _, err := c.CallTool(ctx, ep.tool, map[string]any{"text": "warm"}); err != nil {
			b.Fatalf("warm-up call of %s: %v", ep.tool, err)
		}
	}
	lat := make([][]time.Duration, clients)
	var next sync.WaitGroup
	jobs := make(chan int, b.N)
	for i := range b.N {
		jobs <- i
	}
	close(jobs)
	var failed sync.Once
	var firstErr error
	b.ResetTimer()
	for w := range clients {
		next.Add(1)
		go func() {
			defer next.Done()
			for range jobs {
				t0 := time.Now()
				_, err := conns[w].CallTool(ctx, ep.tool, map[string]any{"text": "hello"})
				lat[w] = append(lat[w], time.Since(t0))
				if err != nil {
					failed.Do(func() { firstErr = err })
				}
			}
		}()
	}
	next.Wait()
	b.StopTimer()
	if firstErr != nil {
		b.Fatalf("a call failed: %v", firstErr)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkSessions: 100 idle 2025 sessions (initialize and one call
// each), held open at once. The gateway: the heap of this process per
// session (clients included); mcporter: the RSS of its processes per
// session. Each session of the gateway has its own upstream connection
// (a stdio process of its own: KiB-rss-upstream/session); mcporter's
// sessions share its one keep-alive server.
func BenchmarkSessions(b *testing.B) {
	const n = 100
	b.Run("gateway", func(b *testing.B) {
		g, err := gateway.New(context.Background(), []fleet.Server{{Name: "everything", Target: stdioTarget()}},
			gateway.Config{Bridge: bridge.Options{MaxSessions: 2 * n}})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		srv := httptest.NewServer(g.Handler())
		defer srv.Close()
		for range b.N {
			before, kids := heap(), rssOf(children())
			conns := openSessions(b, srv.URL+"/mcp", "everything__echo", n)
			b.ReportMetric(float64(heap()-before)/n/1024, "KiB-heap/session")
			b.ReportMetric(float64(rssOf(children())-kids)/n/1024, "KiB-rss-upstream/session")
			for _, c := range conns {
				c.Close()
			}
		}
	})
	b.Run("mcporter", func(b *testing.B) {
		p, env := stdioServer()
		m := startMcporter(b, map[string]any{"everything": map[string]any{"command": p, "env": envMap(env), "lifecycle": "keep-alive"}})
		tool := toolNamed(b, m.url, "echo")
		for range b.N {
			before := m.rss(b)
			conns := openSessions(b, m.url, tool, n)
			b.ReportMetric(float64(m.rss(b)-before)/n/1024, "KiB-rss/session")
			for _, c := range conns {
				c.Close()
			}
		}
	})
}

func openSessions(b *testing.B, url, tool string, n int) []*client.Conn {
	ctx := context.Background()
	var conns []*client.Conn
	for range n {
		c, err := client.Dial(ctx, client.URL(url), client.WithEra(negotiate.InitializeOnly))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.CallTool(ctx, tool, map[string]any{"text": "x"}); err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	return conns
}

func toolNamed(b *testing.B, url, suffix string) string {
	c, err := client.Dial(context.Background(), client.URL(url))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	tools, err := c.AllTools(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range tools {
		if strings.HasSuffix(t.Name, suffix) {
			return t.Name
		}
	}
	b.Fatalf("no tool named *%s among %d", suffix, len(tools))
	return ""
}

// heap is the live heap after a collection.
func heap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkFleet1000: a fleet of 1,000 configured HTTP servers (one
// stateless testservers server answering at 1,000 paths), listed from
// cold through one client: time to the list, tools listed, and for the
// gateway the heap per idle server after it.
func BenchmarkFleet1000(b *testing.B) {
	const n = 1000
	h := testservers.NewStreamableHandler(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.DualEra}})
	up := httptest.NewServer(h) // every path; both eras, as mcporter speaks only 2025
	defer up.Close()
	defer h.Close()
	base := up.URL
	want := n * len(testservers.StatelessToolNames()) // the gateway lists in 2026-07-28
	urlOf := func(i int) string { return fmt.Sprintf("%s/s%04d/mcp", base, i) }
	b.Run("gateway", func(b *testing.B) {
		for range b.N {
			before := heap()
			servers := make([]fleet.Server, n)
			for i := range servers {
				servers[i] = fleet.Server{Name: fmt.Sprintf("s%04d", i), Target: client.URL(urlOf(i))}
			}
			g, err := gateway.New(context.Background(), servers, gateway.Config{})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(g.Handler())
			t0 := time.Now()
			tools, err := listAll(srv.URL + "/mcp")
			if err != nil {
				b.Fatal(err)
			}
			if tools != want {
				b.Fatalf("the gateway listed %d tools, want %d", tools, want)
			}
			b.ReportMetric(time.Since(t0).Seconds(), "s-list")
			b.ReportMetric(float64(tools), "tools")
			b.ReportMetric(float64(heap()-before)/n/1024, "KiB-heap/server")
			srv.Close()
			g.Close()
		}
	})
	b.Run("mcporter", func(b *testing.B) {
		cfg := map[string]any{}
		for i := range n {
			cfg[fmt.Sprintf("s%04d", i)] = map[string]any{"baseUrl": urlOf(i), "lifecycle": "keep-alive"}
		}
		for range b.N {
			m := startMcporter(b, cfg)
			before := m.rss(b)
			t0 := time.Now()
			tools, err := listAll(m.url)
			if err != nil { // as far as it goes: the time to the failure, and no tools
				b.Logf("mcporter: %v", err)
			}
			b.ReportMetric(time.Since(t0).Seconds(), "s-list")
			b.ReportMetric(float64(tools), "tools")
			b.ReportMetric(float64(m.rss(b)-before)/n/1024, "KiB-rss/server")
			m.stop()
		}
	})
}

// listAll lists every tool at url from cold, within 5 minutes.
func listAll(url string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, client.URL(url), client.WithDefaultTimeout(5*time.Minute))
	if err != nil {
		return 0, err
	}
	defer c.Close()
	tools, err := c.AllTools(ctx)
	if err != nil {
		return 0, fmt.Errorf("listing from cold: %w", err)
	}
	return len(tools), nil
}
