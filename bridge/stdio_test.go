package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// serveStdio runs ServeStdio over pipes and returns the client's transport;
// it ends with the test.
func serveStdio(t *testing.T, b *Bridge) (*testkit.Pipe, <-chan error) {
	t.Helper()
	return testkit.ServeOverPipes(t, b.ServeStdio)
}

// Over stdio, a client of either era reaches the upstream: an
// initialize-era client (with the upstream's elicitation forwarded to it)
// and a stateless one (server/discover, then calls).
func TestStdioBothEras(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	b, _ := startBridge(t, up.URL, Options{})
	for _, era := range []negotiate.EraPolicy{negotiate.InitializeOnly, negotiate.StatelessOnly} {
		tr, _ := serveStdio(t, b)
		conn, err := client.Open(testCtx(t), tr, client.WithEra(era),
			client.WithElicitation(func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Kay"}}, nil
			}))
		if err != nil {
			t.Fatalf("%v: %v", era, err)
		}
		res, err := conn.CallTool(testCtx(t), "elicit", map[string]any{"message": "who?"})
		if err != nil || !strings.Contains(res.Content[0].Text, "Kay") {
			t.Fatalf("%v: %+v, %v", era, res, err)
		}
		wantEra := mcp.EraInitialize
		if era == negotiate.StatelessOnly {
			wantEra = mcp.EraStateless
		}
		if got := conn.Info().Era; got != wantEra {
			t.Errorf("era %s, want %s", got, wantEra)
		}
		_ = conn.Close()
	}
}

// A stdio client that does not read what the bridge sends is cut off
// once QueueLen messages wait for it, not buffered for.
func TestStdioSlowClientCutOff(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	b, _ := startBridge(t, up.URL, Options{QueueLen: 4})
	tr, done := serveStdio(t, b)
	// Many pings, never reading an answer.
	go func() {
		for i := range 1024 {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "ping"})
			if _, err := tr.In.Write(append(body, '\n')); err != nil {
				return
			}
		}
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrSlowClient) {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-testCtx(t).Done():
		t.Fatal("still served after 1024 unread answers")
	}
	tr.Close()
}
