package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/scripts/internal/scaleout"
)

const (
	// onceTool counts its executions per key (testservers' once tool);
	// the gateway serves it as "stateless__once" and "session__once".
	onceTool = "once"
	// callTimeout bounds every call of the run.
	callTimeout = 20 * time.Second
)

// callRecord is one call of once: its key and outcome.
type callRecord struct {
	key       string
	outcome   scaleout.Outcome
	err       error
	text      string
	afterKill bool // it started after the replica was killed
}

// sessionRecord is one client of a 2025 session through HAProxy.
type sessionRecord struct {
	name     string
	calls    []callRecord // its calls of stateless__once
	echoes   int          // its calls of session__echo that succeeded
	outcome  scaleout.Outcome
	err      error    // its first failure, which ended it
	replicas []string // the replicas that answered it, in order
}

// load is a run's concurrent part: stateless callers of once through
// HAProxy, and sessions, with a replica killed after killAfter stateless
// calls have ended.
type load struct {
	url                    string
	runID                  string
	workers, calls         int
	sessions, sessionCalls int
	killAfter              int
	kill                   func()

	done   atomic.Int64
	killed atomic.Bool
	killMu sync.Once
}

func (l *load) run(ctx context.Context) (*report, error) {
	spread := &scaleout.Replicas{Next: http.DefaultTransport.(*http.Transport).Clone()}
	conns := make([]*client.Conn, l.workers)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, err := client.Dial(ctx, client.URL(l.url),
			client.WithEra(negotiate.StatelessOnly),
			client.WithHTTPClient(&http.Client{Transport: spread}),
			client.WithDefaultTimeout(callTimeout))
		if err != nil {
			return nil, fmt.Errorf("dialing the gateways through HAProxy (%s): %w", l.url, err)
		}
		conns[i] = c
	}
	rep := &report{killAfter: l.killAfter, calls: make([]callRecord, l.calls), sessions: make([]sessionRecord, l.sessions)}
	var wg sync.WaitGroup
	for i := range l.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep.sessions[i] = l.session(ctx, fmt.Sprintf("%s-session-%02d", l.runID, i))
		}()
	}
	var next atomic.Int64
	for w := range l.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1) - 1)
				if j >= l.calls || ctx.Err() != nil {
					return
				}
				rep.calls[j] = l.call(ctx, conns[w], "stateless__"+onceTool, fmt.Sprintf("%s-call-%04d", l.runID, j))
				if l.done.Add(1) == int64(l.killAfter) {
					l.killMu.Do(func() { l.kill(); l.killed.Store(true) })
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("the run was cut short: %w", err)
	}
	for _, name := range spread.Names() {
		rep.spread = append(rep.spread, replicaCount{name, spread.Count(name)})
	}
	return rep, nil
}

// call calls tool (the once tool under a fleet name) with key.
func (l *load) call(ctx context.Context, conn *client.Conn, tool, key string) callRecord {
	rec := callRecord{key: key, afterKill: l.killed.Load()}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := conn.CallTool(cctx, tool, map[string]any{"key": key, "delayMs": rand.IntN(30)})
	rec.err, rec.outcome = err, scaleout.Classify(err)
	if err == nil {
		rec.text = resultText(res)
	}
	return rec
}

// session runs one client of a 2025 session: sessionCalls calls, echo on
// the session server and once on the stateless one in turn, until the
// first failure.
func (l *load) session(ctx context.Context, name string) (rec sessionRecord) {
	rec.name = name
	rs := &scaleout.Replicas{Next: http.DefaultTransport.(*http.Transport).Clone()}
	defer func() { rec.replicas = rs.Names() }() // after the Conn's Close, deferred later
	conn, err := client.Dial(ctx, client.URL(l.url),
		client.WithEra(negotiate.InitializeOnly),
		client.WithHTTPClient(&http.Client{Transport: rs}),
		client.WithDefaultTimeout(callTimeout))
	if err != nil {
		rec.err, rec.outcome = fmt.Errorf("dial: %w", err), scaleout.Classify(err)
		return rec
	}
	defer conn.Close()
	for i := range l.sessionCalls {
		if i%2 == 1 {
			c := l.call(ctx, conn, "stateless__"+onceTool, fmt.Sprintf("%s-%03d", name, i))
			rec.calls = append(rec.calls, c)
			if c.err != nil {
				rec.err, rec.outcome = c.err, c.outcome
				return rec
			}
			continue
		}
		text := fmt.Sprintf("%s-%d", name, i)
		res, err := conn.CallTool(ctx, "session__echo", map[string]any{"text": text})
		if err != nil {
			rec.err, rec.outcome = err, scaleout.Classify(err)
			return rec
		}
		if got := resultText(res); got != text {
			rec.err, rec.outcome = fmt.Errorf("echo answered %q, want %q", got, text), scaleout.Untyped
			return rec
		}
		rec.echoes++
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond) // spread the session over the run, not an ordering
	}
	return rec
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}
