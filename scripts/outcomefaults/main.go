// Command outcomefaults measures what a client of `mcpcall bridge` learns
// of its failed calls when the hop behind the bridge is faulty: an
// upstream of the initialize era (testservers, Streamable HTTP) injects
// cut answer streams (no event ids: not resumable), 429 and 503 with
// Retry-After, and expired sessions, each with probability -p per request;
// a bridge (in this process, on loopback) serves it; an anymcp client
// calls the non-idempotent tool "once" with a new key per call. Per run it
// prints the calls that succeeded, the failures an errors.Is of
// jsonrpc.ErrOutcomeUnknown recognises (typed), the ones that are a plain
// *jsonrpc.Error (untyped as to the outcome) and others, and the
// upstream's executions and duplicates (a key run twice). -face session
// connects as a 2025-11-25 client, -face direct to the upstream itself;
// -face gateway and gateway-session serve the upstream through a gateway
// (one fleet member "up", the same reconnect policy) instead of a bridge,
// and call "up__once".
//
//	go run ./scripts/outcomefaults -runs 3 -calls 2000 -p 0.05
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/gateway"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// face is how the client connects (-face).
var face string

func main() {
	runs := flag.Int("runs", 3, "runs")
	calls := flag.Int("calls", 2000, "calls per run")
	p := flag.Float64("p", 0.05, "probability of each fault per request")
	workers := flag.Int("c", 8, "concurrent callers")
	flag.StringVar(&face, "face", "stateless", `how the client connects: "stateless" (the bridge's 2026-07-28 face), "session" (its 2025-11-25 sessions), "direct" (to the upstream, no bridge), "gateway" and "gateway-session" (those two faces of a gateway instead of the bridge)`)
	flag.Parse()
	total := tally{}
	for r := range *runs {
		t, err := run(uint64(r+1), *calls, *p, *workers)
		if err != nil {
			fmt.Fprintln(os.Stderr, "outcomefaults:", err)
			os.Exit(1)
		}
		fmt.Printf("run %d: %s\n", r+1, t)
		total.add(t)
	}
	fmt.Printf("total: %s\n", total)
}

// tally counts what became of the calls of a run.
type tally struct {
	ok, typed, plain, other, executions, duplicates int
	example                                         string // one plain failure's text
}

func (t *tally) add(u tally) {
	t.ok += u.ok
	t.typed += u.typed
	t.plain += u.plain
	t.other += u.other
	t.executions += u.executions
	t.duplicates += u.duplicates
}

func (t tally) String() string {
	s := fmt.Sprintf("ok %d, failed %d: may have run (ErrOutcomeUnknown) %d, plain *jsonrpc.Error %d, other %d; upstream executions %d, duplicates %d",
		t.ok, t.typed+t.plain+t.other, t.typed, t.plain, t.other, t.executions, t.duplicates)
	if t.example != "" {
		s += "\n  e.g. " + t.example
	}
	return s
}

func run(seed uint64, calls int, p float64, workers int) (tally, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	up := testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.InitializeOnly},
		Faults: testservers.Faults{Seed: seed, Rules: []testservers.FaultRule{
			{Fault: testservers.FaultDropStreamNoIDs, Probability: p},
			{Fault: testservers.FaultTooManyRequests, Probability: p, RetryAfter: "0"},
			{Fault: testservers.FaultUnavailable, Probability: p, RetryAfter: "0"},
			{Fault: testservers.FaultExpireSession, Probability: p},
		}}})
	defer up.Close()
	fast := reconnect.Policy{InitialDelay: 2 * time.Millisecond, MaxDelay: 50 * time.Millisecond, MaxAttempts: 20}
	var (
		handler http.Handler
		tool    = "once"
	)
	switch face {
	case "gateway", "gateway-session":
		g, err := gateway.New(ctx, []fleet.Server{{Name: "up", Target: client.URL(up.URL),
			Options: []client.Option{client.WithReconnectPolicy(fast)}}}, gateway.Config{})
		if err != nil {
			return tally{}, err
		}
		defer g.Close()
		handler, tool = g.Handler(), "up__once"
	default:
		b, err := bridge.New(ctx, bridge.DialTarget(client.URL(up.URL), client.WithReconnectPolicy(fast)), bridge.Options{})
		if err != nil {
			return tally{}, err
		}
		defer b.Close()
		handler = b.Handler()
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	target, opts := client.URL(srv.URL+"/mcp"), []client.Option(nil)
	switch face {
	case "session", "gateway-session":
		opts = append(opts, client.WithEra(negotiate.InitializeOnly))
	case "direct":
		target = client.URL(up.URL)
	}
	conn, err := client.Dial(ctx, target, opts...)
	if err != nil {
		return tally{}, err
	}
	defer conn.Close()

	var (
		next atomic.Int64
		mu   sync.Mutex
		t    tally
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(calls) {
					return
				}
				_, err := conn.CallTool(ctx, tool, map[string]any{"key": fmt.Sprintf("%d-%d", seed, i)})
				var rpcErr *jsonrpc.Error
				mu.Lock()
				switch {
				case err == nil:
					t.ok++
				case errors.Is(err, jsonrpc.ErrOutcomeUnknown):
					t.typed++
				case errors.As(err, &rpcErr):
					t.plain++
					if t.example == "" {
						t.example = err.Error()
					}
				default:
					t.other++
					if t.example == "" {
						t.example = err.Error()
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	st := up.Server().Stats()
	t.executions, t.duplicates = st.Executions, st.Duplicates
	return t, nil
}
