// Command gatewayscale is the driver of scripts/gateway-scaleout.sh: it
// re-executes itself as 3 replicas, each the gateway (package gateway)
// over a fleet of two upstreams served by this process (a stateless
// 2026-07-28 server and a 2025-11-25 session server, both testservers),
// puts HAProxy in front of them (round-robin; a session sticks to its
// replica by Mcp-Session-Id), sends concurrent stateless calls of a tool
// that counts its executions per key while clients of 2025 sessions call
// both upstreams, kills one replica (SIGKILL) mid-run, and checks that
//
//   - stateless calls spread over every replica;
//   - every call succeeds or fails typed ("may have run" or "did not
//     run"), none runs twice (the upstream's count per key), and a call
//     that failed as "did not run" did not run;
//   - a session sticks to one replica, and completes unless its replica
//     was the one killed.
//
// It exits 1 on a violation, 2 when the run could not be set up.
// Everything binds 127.0.0.1 on ports the kernel picks. Every process it
// starts runs in its own process group, is recorded in -dir/pids, and is
// ended before it exits.
package main

import (
	"context"
	"flag"
	"fmt"
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
	haproxy, dir           string
	replicas               int
	workers, calls         int
	sessions, sessionCalls int
	timeout                time.Duration
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "replica" {
		os.Exit(replica(os.Args[2:]))
	}
	var cfg config
	flag.StringVar(&cfg.haproxy, "haproxy", "haproxy", "the haproxy binary")
	flag.StringVar(&cfg.dir, "dir", "", "the run's directory: logs, configuration, key, pids (required)")
	flag.IntVar(&cfg.replicas, "replicas", 3, "gateway processes behind HAProxy")
	flag.IntVar(&cfg.workers, "workers", 8, "concurrent stateless callers, one Conn each")
	flag.IntVar(&cfg.calls, "calls", 300, "stateless calls of the once tool")
	flag.IntVar(&cfg.sessions, "sessions", 6, "clients of 2025 sessions through HAProxy, run during the stateless calls")
	flag.IntVar(&cfg.sessionCalls, "session-calls", 20, "calls each session makes (echo on the session server, once on the stateless one, in turn)")
	flag.DurationVar(&cfg.timeout, "timeout", 3*time.Minute, "bound on the whole run")
	flag.Parse()
	if cfg.dir == "" || cfg.replicas < 2 || cfg.workers < 1 || cfg.calls < 3 {
		fmt.Fprintln(os.Stderr, "gatewayscale: -dir is required; -replicas >= 2, -workers >= 1, -calls >= 3")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	os.Exit(run(ctx, cfg))
}

func run(ctx context.Context, cfg config) int {
	e, err := setUp(ctx, cfg)
	if e != nil {
		defer e.tearDown()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway-scaleout: setting up: %v\n", err)
		return 2
	}
	rep, err := e.exercise(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway-scaleout: %v\n", err)
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
	stateless, session *testservers.HTTPServer
	replicas           []*scaleout.Proc
	haproxy            *scaleout.Proc
	lbURL              string
}

func setUp(ctx context.Context, cfg config) (*env, error) {
	e := &env{
		stateless: testservers.StartStateless(testservers.HTTPOptions{}),
		session:   testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{Versions: []string{"2025-11-25"}}}),
	}
	self, err := os.Executable()
	if err != nil {
		return e, err
	}
	keyFile := filepath.Join(cfg.dir, "state.key")
	if err := scaleout.WriteKey(keyFile); err != nil {
		return e, err
	}
	pidFile := filepath.Join(cfg.dir, "pids")
	for i := range cfg.replicas {
		name := scaleout.ReplicaName(i)
		p, err := scaleout.Start(name, cfg.dir, pidFile, self, "replica", "--listen", "127.0.0.1:0",
			"--state-key-file", keyFile, "--id", name,
			"stateless="+e.stateless.URL, "session="+e.session.URL)
		if err != nil {
			return e, err
		}
		e.replicas = append(e.replicas, p)
	}
	var urls []string
	for _, p := range e.replicas {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		u, err := p.WaitListening(wctx)
		cancel()
		if err != nil {
			return e, fmt.Errorf("gateway replica: %w", err)
		}
		urls = append(urls, u)
	}
	e.haproxy, e.lbURL, err = scaleout.StartHAProxy(ctx, cfg.haproxy, cfg.dir, pidFile, urls)
	return e, err
}

func (e *env) tearDown() {
	if e.haproxy != nil {
		e.haproxy.Stop(2 * time.Second)
	}
	for _, p := range e.replicas {
		p.Stop(3 * time.Second)
	}
	e.stateless.Close()
	e.session.Close()
}

// exercise runs the load with a replica killed and checks what happened.
func (e *env) exercise(ctx context.Context, cfg config) (*report, error) {
	victim := len(e.replicas) / 2
	var killErr error
	l := &load{
		url: e.lbURL, runID: scaleout.RunID(), workers: cfg.workers, calls: cfg.calls,
		sessions: cfg.sessions, sessionCalls: cfg.sessionCalls, killAfter: cfg.calls / 3,
		kill: func() {
			kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			killErr = e.replicas[victim].Kill(kctx)
		},
	}
	rep, err := l.run(ctx)
	if err != nil {
		return nil, err
	}
	if killErr != nil {
		return nil, killErr
	}
	rep.replicas = len(e.replicas)
	rep.victim = scaleout.ReplicaName(victim)
	rep.killed = l.killed.Load()
	rep.stats = e.stateless.Server().Stats()
	rep.sessionStats = e.session.Server().Stats()
	if err := rep.verifyDidNotRun(ctx, e.stateless.URL); err != nil {
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
	for _, c := range r.allCalls() {
		if c.outcome == scaleout.DidNotRun && c.key != "" {
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
		res, err := conn.CallTool(ctx, onceTool, map[string]any{"key": k})
		if err != nil {
			return fmt.Errorf("verifying %s on the upstream: %w", k, err)
		}
		if got := resultText(res); got != k+" executed 1 time(s)" {
			r.violate("call %s failed as \"did not run\" but had run: the upstream now says %q", k, got)
		}
	}
	return nil
}
