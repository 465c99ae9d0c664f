package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/scripts/internal/scaleout"
)

// sessionRecord is one client of the initialize era through HAProxy: a
// 2025 session on /mcp, or a 2024-11-05 client on /sse.
type sessionRecord struct {
	name     string
	calls    int   // calls that succeeded
	err      error // the first failure
	replicas []string
}

// runSessions runs n clients at once, half with 2025 sessions on /mcp,
// half on /sse, each making calls calls of echo and one elicitation (a
// server request in its session, which the bridge makes of the stateless
// upstream's input_required round).
func runSessions(ctx context.Context, lbURL, runID string, n, calls int) []sessionRecord {
	out := make([]sessionRecord, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = oneSession(ctx, lbURL, fmt.Sprintf("%s-session-%02d", runID, i), i%2 == 1, calls)
		}()
	}
	wg.Wait()
	return out
}

func oneSession(ctx context.Context, lbURL, name string, sse bool, calls int) (rec sessionRecord) {
	rec.name = name + "/mcp"
	rs := &scaleout.Replicas{Next: http.DefaultTransport.(*http.Transport).Clone()}
	defer func() { rec.replicas = rs.Names() }() // after the Conn's Close (deferred later, run first)
	url := lbURL
	opts := []client.Option{
		client.WithEra(negotiate.InitializeOnly),
		client.WithHTTPClient(&http.Client{Transport: rs}),
		client.WithDefaultTimeout(callTimeout),
		client.WithElicitation(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "answer-to-" + p.Message}}, nil
		}),
	}
	if sse {
		rec.name = name + "/sse"
		url = strings.TrimSuffix(lbURL, "/mcp") + "/sse"
		opts = append(opts, client.WithTransportPolicy(negotiate.SSEOnly))
	}
	conn, err := client.Dial(ctx, client.URL(url), opts...)
	if err != nil {
		rec.err = fmt.Errorf("dial: %w", err)
		return rec
	}
	defer conn.Close()
	for i := range calls {
		text := fmt.Sprintf("%s-%d", name, i)
		res, err := conn.CallTool(ctx, "echo", map[string]any{"text": text})
		if err == nil && resultText(res) != text {
			err = fmt.Errorf("echo answered %q, want %q", resultText(res), text)
		}
		if err != nil {
			rec.err = err
			return rec
		}
		rec.calls++
	}
	res, err := conn.CallTool(ctx, roundTool, map[string]any{"message": name})
	if err == nil && !strings.Contains(resultText(res), "answer-to-"+name) {
		err = fmt.Errorf("elicit answered %q", resultText(res))
	}
	if err != nil {
		rec.err = fmt.Errorf("elicit: %w", err)
		return rec
	}
	rec.calls++
	return rec
}
