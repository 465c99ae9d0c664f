// Command bridgescale is the driver of scripts/bridge-scaleout.sh: it runs
// 3 `mcpcall bridge` processes that share one state key behind HAProxy
// (round-robin, each HTTP request balanced on its own) in front of one
// stateless upstream (testservers, in this process), sends concurrent
// calls of a tool that counts its executions per key and input_required
// rounds, kills one bridge mid-run, and checks that
//
//   - every call succeeds or fails with a typed error;
//   - no call runs twice (the upstream's count per key), and a call that
//     failed as "did not run" did not run;
//   - input_required rounds whose legs land on different bridges
//     complete, through HAProxy and pinned to two bridges;
//   - clients of the initialize era (2025 sessions on /mcp, 2024-11-05 on
//     /sse) stick to one bridge through HAProxy, and their calls and
//     server requests complete.
//
// It exits 1 on any violation, 2 when the run could not be set up.
// Everything binds 127.0.0.1 on ports the kernel picks. Every process it
// starts runs in its own process group, is recorded in -dir/pids, and is
// ended before it exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/scripts/internal/scaleout"
	"github.com/anymcp/anymcp/testservers"
)

type config struct {
	mcpcall, haproxy, dir  string
	replicas               int
	workers, calls         int
	rounds, pinnedRounds   int
	sessions, sessionCalls int
	timeout                time.Duration
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "bridge" {
		os.Exit(standIn(os.Args[2:]))
	}
	var cfg config
	flag.StringVar(&cfg.mcpcall, "mcpcall", "mcpcall", "the mcpcall binary")
	flag.StringVar(&cfg.haproxy, "haproxy", "haproxy", "the haproxy binary")
	flag.StringVar(&cfg.dir, "dir", "", "the run's directory: logs, configuration, key, pids (required)")
	flag.IntVar(&cfg.replicas, "replicas", 3, "bridge processes behind HAProxy")
	flag.IntVar(&cfg.workers, "workers", 8, "concurrent callers, one Conn each")
	flag.IntVar(&cfg.calls, "calls", 300, "calls of the once tool")
	flag.IntVar(&cfg.rounds, "rounds", 60, "input_required rounds through HAProxy")
	flag.IntVar(&cfg.pinnedRounds, "pinned-rounds", 10, "rounds whose legs are sent to two chosen bridges")
	flag.IntVar(&cfg.sessions, "sessions", 6, "clients of the initialize era through HAProxy, half on /mcp, half on /sse")
	flag.IntVar(&cfg.sessionCalls, "session-calls", 20, "calls of echo each session makes")
	flag.DurationVar(&cfg.timeout, "timeout", 3*time.Minute, "bound on the whole run")
	flag.Parse()
	if cfg.dir == "" || cfg.replicas < 2 || cfg.workers < 1 || cfg.calls < 3 {
		fmt.Fprintln(os.Stderr, "bridgescale: -dir is required; -replicas >= 2, -workers >= 1, -calls >= 3")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	os.Exit(run(ctx, cfg))
}

// run sets up, loads and checks; it returns the exit status.
func run(ctx context.Context, cfg config) int {
	env, err := setUp(ctx, cfg)
	if env != nil {
		defer env.tearDown()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bridge-scaleout: setting up: %v\n", err)
		return 2
	}
	rep, err := env.exercise(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bridge-scaleout: %v\n", err)
		return 2
	}
	rep.print(os.Stdout)
	if len(rep.violations) > 0 {
		return 1
	}
	return 0
}

// env is what a run starts.
type env struct {
	upstream *testservers.HTTPServer
	bridges  []*scaleout.Proc
	urls     []string // each bridge's base URL
	haproxy  *scaleout.Proc
	lbURL    string // HAProxy's MCP endpoint
}

func setUp(ctx context.Context, cfg config) (*env, error) {
	e := &env{}
	e.upstream = testservers.StartStateless(testservers.HTTPOptions{})
	keyFile := filepath.Join(cfg.dir, "state.key")
	if err := scaleout.WriteKey(keyFile); err != nil {
		return e, err
	}
	pidFile := filepath.Join(cfg.dir, "pids")
	for i := range cfg.replicas {
		p, err := scaleout.Start(scaleout.ReplicaName(i), cfg.dir, pidFile, cfg.mcpcall, "bridge",
			"--listen", "127.0.0.1:0", "--state-key-file", keyFile, e.upstream.URL)
		if err != nil {
			return e, err
		}
		e.bridges = append(e.bridges, p)
	}
	for _, p := range e.bridges {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		u, err := p.WaitListening(wctx)
		cancel()
		if err != nil {
			return e, fmt.Errorf("mcpcall bridge: %w", err)
		}
		e.urls = append(e.urls, u)
	}
	p, lbURL, err := scaleout.StartHAProxy(ctx, cfg.haproxy, cfg.dir, pidFile, e.urls)
	if err != nil {
		return e, err
	}
	e.haproxy, e.lbURL = p, lbURL
	return e, nil
}

func (e *env) tearDown() {
	if e.haproxy != nil {
		e.haproxy.Stop(2 * time.Second)
	}
	for _, p := range e.bridges {
		p.Stop(3 * time.Second)
	}
	if e.upstream != nil {
		e.upstream.Close()
	}
}

// exercise runs the load with a replica killed, then the pinned rounds,
// and checks what happened.
func (e *env) exercise(ctx context.Context, cfg config) (*report, error) {
	victim := len(e.bridges) / 2 // b1 of 3
	var killErr error
	l := &load{
		url: e.lbURL, runID: scaleout.RunID(), workers: cfg.workers, calls: cfg.calls, rounds: cfg.rounds,
		killAfter: cfg.calls / 3,
		kill: func() {
			kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			killErr = e.bridges[victim].Kill(kctx)
		},
	}
	calls, rounds, err := l.run(ctx)
	if err != nil {
		return nil, err
	}
	if killErr != nil {
		return nil, killErr
	}
	rep := &report{replicas: len(e.bridges), victim: scaleout.ReplicaName(victim), killAfter: l.killAfter, calls: calls, rounds: rounds}
	if !l.killed.Load() {
		rep.violate("replica %s was never killed (fewer than %d calls ended)", rep.victim, l.killAfter)
	}

	// Rounds pinned to two live bridges: the first leg to one, the retry
	// to the other, by their own addresses.
	a, b := 0, len(e.bridges)-1
	pinnedFirst, _ := url.Parse(e.urls[a] + "/mcp")
	pinnedRetry, _ := url.Parse(e.urls[b] + "/mcp")
	prt := newRecorder(http.DefaultTransport.(*http.Transport).Clone(),
		&pinned{first: pinnedFirst, retry: pinnedRetry, firstName: scaleout.ReplicaName(a), retryName: scaleout.ReplicaName(b)})
	conn, err := dial(ctx, pinnedFirst.String(), prt)
	if err != nil {
		return nil, fmt.Errorf("dialing bridge %s directly: %w", scaleout.ReplicaName(a), err)
	}
	for i := range cfg.pinnedRounds {
		rep.pinned = append(rep.pinned, runRound(ctx, conn, prt, fmt.Sprintf("%s-pinned-%02d", l.runID, i)))
	}
	conn.Close()

	// Clients of the initialize era, sticky through HAProxy, after the kill.
	rep.sessions = runSessions(ctx, e.lbURL, l.runID, cfg.sessions, cfg.sessionCalls)

	rep.stats = e.upstream.Server().Stats()
	if err := rep.verifyDidNotRun(ctx, e.upstream.URL); err != nil {
		return nil, err
	}
	rep.check()
	return rep, nil
}

// verifyDidNotRun calls the once tool on the upstream itself, for each
// call that failed as "did not run": the key must run now for the first
// time.
func (r *report) verifyDidNotRun(ctx context.Context, upstream string) error {
	var keys []string
	for _, c := range r.calls {
		if c.outcome == scaleout.DidNotRun {
			keys = append(keys, c.key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	conn, err := client.Dial(ctx, client.URL(upstream))
	if err != nil {
		return fmt.Errorf("dialing the upstream to verify the calls that did not run: %w", err)
	}
	defer conn.Close()
	for _, k := range keys {
		res, err := conn.CallTool(ctx, callTool, map[string]any{"key": k})
		if err != nil {
			return fmt.Errorf("verifying %s on the upstream: %w", k, err)
		}
		if got := resultText(res); got != k+" executed 1 time(s)" {
			r.violate("call %s failed as \"did not run\" but had run: the upstream now says %q", k, got)
		}
	}
	return nil
}
