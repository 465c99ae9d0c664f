package client_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// TestSoak: 16 goroutines make 5,000 mixed calls over one Conn while the
// server injects every HTTP fault at random (cut streams with and without
// event ids, GET stream cuts, 429, 503, expired sessions). Every call must
// end in exactly one result or one typed error; the non-idempotent tool
// must never run twice for one key; no goroutine may be left (goleak in
// TestMain); the heap must come back down. -short runs 500 calls.
func TestSoak(t *testing.T) {
	total, workers := 5000, 16
	budget := 60 * time.Second
	if testing.Short() {
		total, budget = 500, 20*time.Second
	}
	const seed, p = 20261122, 0.03
	srv := testservers.StartStreamable(testservers.HTTPOptions{Priming: true, Faults: testservers.RandomFaults(seed, p)})
	defer srv.Close()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	ctx := context.Background()
	c, err := client.Dial(ctx, client.URL(srv.URL), client.WithReplay(),
		client.WithRequestTimeout(10*time.Second),
		client.WithReconnectPolicy(reconnect.Policy{InitialDelay: 2 * time.Millisecond, MaxDelay: 50 * time.Millisecond, MaxAttempts: 20}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AllTools(ctx); err != nil { // learn which tools are safe to replay
		t.Fatal(err)
	}

	type outcome struct {
		kind    string // "ok", or the error's class
		latency time.Duration
	}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		outcomes []outcome
		problems []string
		onceOK   = map[string]bool{}
	)
	deadline := time.Now().Add(budget)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for {
				i := next.Add(1)
				if i > int64(total) || time.Now().After(deadline) {
					return
				}
				start := time.Now()
				kind, problem, key := soakCall(ctx, c, rng, i)
				mu.Lock()
				outcomes = append(outcomes, outcome{kind, time.Since(start)})
				if problem != "" {
					problems = append(problems, problem)
				}
				if key != "" {
					onceOK[key] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	c.Close()
	srv.Close()

	for _, pr := range problems {
		t.Error(pr)
	}
	st := srv.Server().Stats()
	if st.Duplicates != 0 {
		t.Errorf("the non-idempotent tool ran twice for %d key(s): %v", st.Duplicates, st.DuplicateKeys)
	}
	if len(outcomes) < total && !testing.Short() {
		t.Logf("time budget reached after %d calls", len(outcomes))
	}
	counts := map[string]int{}
	var lat []time.Duration
	for _, o := range outcomes {
		counts[o.kind]++
		lat = append(lat, o.latency)
	}
	slices.Sort(lat)
	q := func(f float64) time.Duration { return lat[int(f*float64(len(lat)-1))] }
	t.Logf("calls %d: %v", len(outcomes), counts)
	t.Logf("faults injected: %v (sessions created %d, expired %d, rejected %d, streams resumed %d)",
		st.Faults, st.SessionsCreated, st.SessionsExpired, st.Rejected, st.Resumed)
	t.Logf("once executions %d, duplicates %d; latency p50 %v p99 %v max %v",
		st.Executions, st.Duplicates, q(0.5), q(0.99), lat[len(lat)-1])
	if counts["ok"] < len(outcomes)*9/10 {
		t.Errorf("only %d of %d calls succeeded: the Conn should survive these faults", counts["ok"], len(outcomes))
	}
	injected := 0
	for _, n := range st.Faults {
		injected += n
	}
	if injected < len(outcomes)/100 {
		t.Errorf("only %d faults were injected: the soak tested little", injected)
	}

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 64<<20 {
		t.Errorf("heap grew by %d MiB over the soak", grew>>20)
	}
}

// soakCall makes one random call and classifies its outcome. problem is
// set when the outcome breaks a promise; key is set for a once call that
// succeeded.
func soakCall(ctx context.Context, c *client.Conn, rng *rand.Rand, i int64) (kind, problem, key string) {
	var err error
	switch n := rng.IntN(10); {
	case n < 4: // the non-idempotent tool
		k := fmt.Sprint("k", i)
		res, cerr := c.CallTool(ctx, "once", map[string]string{"key": k})
		if err = cerr; err == nil {
			if !strings.Contains(res.Content[0].Text, "executed 1 time(s)") {
				return "ok", fmt.Sprintf("call %d: once ran more than once: %s", i, res.Content[0].Text), ""
			}
			key = k
		}
	case n < 6:
		want := fmt.Sprint("echo ", i)
		res, cerr := c.CallTool(ctx, "echo", map[string]string{"text": want})
		if err = cerr; err == nil && res.Content[0].Text != want {
			return "ok", fmt.Sprintf("call %d: echo answered %q, want %q", i, res.Content[0].Text, want), ""
		}
	case n < 7:
		_, err = c.AllTools(ctx)
	case n < 8:
		_, err = c.ReadResource(ctx, "test://static/text")
	case n < 9:
		_, err = c.CallTool(ctx, "add", map[string]int{"a": 1, "b": 2})
	default:
		err = c.Ping(ctx)
	}
	if err == nil {
		return "ok", "", key
	}
	var rpcErr *jsonrpc.Error
	var ra *reconnect.RetryAfterError
	switch {
	case errors.Is(err, jsonrpc.ErrOutcomeUnknown):
		return "outcome-unknown", "", ""
	case errors.As(err, &ra):
		return "throttled", "", ""
	case errors.Is(err, jsonrpc.ErrSessionExpired):
		return "session-expired", "", ""
	case errors.As(err, &rpcErr):
		return "rpc-error", fmt.Sprintf("call %d: unexpected JSON-RPC error: %v", i, err), ""
	}
	return "untyped", fmt.Sprintf("call %d: an error that says nothing of the outcome: %v", i, err), ""
}
