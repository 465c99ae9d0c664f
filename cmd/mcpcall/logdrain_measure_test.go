package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

// The measurement behind logDrainQuiet (docs/mcpcall.md): run with
//
//	go test -run TestMeasureStandaloneLogLag -logdrain.runs=2000 ./cmd/mcpcall/
//
// (under load: with busy processes beside it, e.g. `yes >/dev/null`),
// or against a running server, e.g. the TypeScript SDK's
// simpleStreamableHttp example:
//
//	-logdrain.url=http://127.0.0.1:3000/mcp -logdrain.tool=multi-greet -logdrain.args='{"name":"Bob"}'
var (
	drainRuns = flag.Int("logdrain.runs", 0, "TestMeasureStandaloneLogLag: calls to measure (0: the test does not run)")
	drainLogs = flag.Int("logdrain.logs", 2, "TestMeasureStandaloneLogLag: logs the server sends on its GET stream per call")
	drainURL  = flag.String("logdrain.url", "", "TestMeasureStandaloneLogLag: a server to measure instead of the test server")
	drainTool = flag.String("logdrain.tool", "echo", "TestMeasureStandaloneLogLag: the tool to call")
	drainArgs = flag.String("logdrain.args", `{"text":"hi"}`, "TestMeasureStandaloneLogLag: its arguments")
)

// TestMeasureStandaloneLogLag measures, over many calls on loopback, when
// the last of the logs a server sends on its GET stream right before it
// answers on the POST stream arrives, after the answer (negative: before).
// It prints percentiles; it asserts nothing, and runs only when asked.
func TestMeasureStandaloneLogLag(t *testing.T) {
	if *drainRuns == 0 {
		t.Skip("a measurement: run with -logdrain.runs=N")
	}
	url := *drainURL
	if url == "" {
		url = standaloneLogServer(t, *drainLogs, -1)
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	var lags []time.Duration
	lost := 0
	for range *drainRuns {
		var mu sync.Mutex
		var last time.Time
		var n atomic.Int32
		got := make(chan struct{}, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, err := client.Dial(ctx, client.URL(url), client.WithHTTPClient(hc), client.OnLog(func(mcp.LoggingMessageParams) {
			mu.Lock()
			last = time.Now()
			mu.Unlock()
			if int(n.Add(1)) == *drainLogs {
				got <- struct{}{}
			}
		}))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if _, err := conn.CallTool(ctx, *drainTool, json.RawMessage(*drainArgs)); err != nil {
			t.Fatal(err)
		}
		answered := time.Now()
		select {
		case <-got:
			mu.Lock()
			lags = append(lags, last.Sub(answered))
			mu.Unlock()
		case <-time.After(2 * time.Second):
			lost++
		}
		conn.Close()
		cancel()
	}
	hc.CloseIdleConnections() // kept alive for the server's next call
	slices.Sort(lags)
	q := func(p float64) time.Duration { return lags[min(len(lags)-1, int(p*float64(len(lags))))] }
	after := 0
	for _, l := range lags {
		if l > 0 {
			after++
		}
	}
	fmt.Printf("runs %d (GOMAXPROCS %d), %d logs a call: last log after the answer in %d; lag min %v p50 %v p90 %v p99 %v p99.9 %v max %v; not within 2 s: %d\n",
		len(lags)+lost, runtime.GOMAXPROCS(0), *drainLogs, after, lags[0], q(0.5), q(0.9), q(0.99), q(0.999), lags[len(lags)-1], lost)
}
