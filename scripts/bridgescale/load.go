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
	// callTool counts its executions per key (testservers' once tool).
	callTool = "once"
	// roundTool asks the client for input (elicitation) before it
	// answers: in the stateless era, an input_required round.
	roundTool = "elicit"
	// callTimeout bounds every call of the run.
	callTimeout = 20 * time.Second
)

// callRecord is one once call: its key and outcome.
type callRecord struct {
	key     string
	outcome scaleout.Outcome
	err     error
	text    string
	// afterKill: the call started after the replica was killed.
	afterKill bool
}

// roundRecord is one input_required round.
type roundRecord struct {
	id      string
	outcome scaleout.Outcome
	err     error
	ok      bool // the tool answered with what the client gave it
	legs    legs
}

// dial opens a stateless Conn to url whose HTTP requests go through rt,
// answering elicitation with the round id the tool asked with.
func dial(ctx context.Context, url string, rt http.RoundTripper) (*client.Conn, error) {
	return client.Dial(ctx, client.URL(url),
		client.WithEra(negotiate.StatelessOnly),
		client.WithHTTPClient(&http.Client{Transport: rt}),
		client.WithDefaultTimeout(callTimeout),
		client.WithElicitation(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "answer-to-" + p.Message}}, nil
		}))
}

// load is the concurrent part of a run: callers of the once tool and of
// the round tool through HAProxy, with a replica killed after killAfter
// calls have ended.
type load struct {
	url       string // HAProxy's MCP endpoint
	runID     string
	workers   int
	calls     int
	rounds    int
	killAfter int
	kill      func() // kills a replica; called once

	done   atomic.Int64
	killed atomic.Bool
	killMu sync.Once
}

func (l *load) run(ctx context.Context) ([]callRecord, []roundRecord, error) {
	rt := newRecorder(http.DefaultTransport.(*http.Transport).Clone(), nil)
	conns := make([]*client.Conn, l.workers)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, err := dial(ctx, l.url, rt)
		if err != nil {
			return nil, nil, fmt.Errorf("dialing the bridges through HAProxy (%s): %w", l.url, err)
		}
		conns[i] = c
	}

	calls := make([]callRecord, l.calls)
	rounds := make([]roundRecord, l.rounds)
	var next atomic.Int64 // the next job: calls first-interleaved with rounds
	total := int64(l.calls + l.rounds)
	var wg sync.WaitGroup
	for w := range l.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := conns[w]
			for {
				j := next.Add(1) - 1
				if j >= total || ctx.Err() != nil {
					return
				}
				// Spread the rounds among the calls: every (calls/rounds)-th job is a round.
				if r, isRound := l.roundAt(j); isRound {
					rounds[r] = l.round(ctx, conn, rt, r)
					continue
				}
				c := l.callIndex(j)
				calls[c] = l.call(ctx, conn, c)
				if l.done.Add(1) == int64(l.killAfter) {
					l.killMu.Do(func() { l.kill(); l.killed.Store(true) })
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("the run was cut short: %w", err)
	}
	return calls, rounds, nil
}

// roundAt says whether job j is a round, and which. Jobs interleave one
// round after every stride calls.
func (l *load) roundAt(j int64) (int, bool) {
	if l.rounds == 0 {
		return 0, false
	}
	stride := int64(l.calls/l.rounds) + 1
	if j%stride == stride-1 && j/stride < int64(l.rounds) {
		return int(j / stride), true
	}
	return 0, false
}

// callIndex is the index among the calls of job j, which is no round.
func (l *load) callIndex(j int64) int {
	if l.rounds == 0 {
		return int(j)
	}
	stride := int64(l.calls/l.rounds) + 1
	roundsBefore := min(j/stride, int64(l.rounds))
	return int(j - roundsBefore)
}

func (l *load) call(ctx context.Context, conn *client.Conn, i int) callRecord {
	rec := callRecord{key: fmt.Sprintf("%s-call-%04d", l.runID, i), afterKill: l.killed.Load()}
	args := map[string]any{"key": rec.key, "delayMs": rand.IntN(40)}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := conn.CallTool(cctx, callTool, args)
	rec.err = err
	rec.outcome = scaleout.Classify(err)
	if err == nil {
		rec.text = resultText(res)
	}
	return rec
}

func (l *load) round(ctx context.Context, conn *client.Conn, rt *recorder, i int) roundRecord {
	return runRound(ctx, conn, rt, fmt.Sprintf("%s-round-%03d", l.runID, i))
}

// runRound calls the round tool with id as its message; the elicitation
// handler answers with a name made of id, which the tool echoes.
func runRound(ctx context.Context, conn *client.Conn, rt *recorder, id string) roundRecord {
	rec := roundRecord{id: id}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := conn.CallTool(cctx, roundTool, map[string]any{"message": id})
	rec.err = err
	rec.outcome = scaleout.Classify(err)
	if err == nil {
		rec.ok = !res.IsError && strings.Contains(resultText(res), "answer-to-"+id)
		if !rec.ok {
			rec.err = fmt.Errorf("the tool answered %q", resultText(res))
		}
	}
	rec.legs = rt.legsOf(id)
	return rec
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}
