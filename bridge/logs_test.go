package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// A stateless client that asks for log records (_meta logLevel) gets those
// the upstream sent in the course of its own call, on its call's stream;
// another client's call, in progress at the same time and asking for
// records too, gets none of them, nor the first one's progress. Both
// upstream eras: the records come on the upstream call's own stream.
func TestStatelessLogsReachTheirCaller(t *testing.T) {
	for _, u := range traceUpstreams {
		t.Run(u.name, func(t *testing.T) {
			up := u.start()
			defer up.Close()
			_, url := startBridge(t, up.URL, Options{})

			// B: a call in progress, asking for every record.
			bctx, cancelB := context.WithCancel(testCtx(t))
			bDone := make(chan exchange, 1)
			go func() {
				bDone <- statelessPost(bctx, url, 1, "tools/call", map[string]any{
					"name": "slow", "arguments": map[string]any{"steps": 1, "delayMs": 60000},
					"_meta": map[string]any{mcp.MetaLogLevel: "debug"},
				})
			}()
			if _, err := up.Server().WaitStats(testCtx(t), func(s testservers.Stats) bool { return s.ToolCalls["slow"] >= 1 }); err != nil {
				t.Fatal(err)
			}

			// A: a call that logs.
			ex := statelessCall(t, url, 2, "tools/call", map[string]any{
				"name": "log", "arguments": map[string]any{"level": "warning", "message": "for A"},
				"_meta": map[string]any{mcp.MetaLogLevel: "info"},
			}, nil)
			if got := textOf(t, resultOf(t, ex)); got != "logged" {
				t.Fatalf("the log tool answered %q", got)
			}
			if logs := logsOf(t, ex.notes); len(logs) != 1 || !strings.Contains(string(logs[0].Data), "for A") || logs[0].Level != mcp.LevelWarning {
				t.Fatalf("A got log records %+v, want its one", logs)
			}

			// A again: its progress reaches it, under its own token.
			ex = statelessCall(t, url, 4, "tools/call", map[string]any{
				"name": "slow", "arguments": map[string]any{"steps": 2, "delayMs": 1},
				"_meta": map[string]any{"progressToken": "a-token"},
			}, nil)
			resultOf(t, ex)
			if n := progressFor(ex.notes, "a-token"); n != 2 {
				t.Fatalf("A got %d progress notifications with its token, want 2: %v", n, ex.notes)
			}

			cancelB()
			bNotes := (<-bDone).notes
			if logs := logsOf(t, bNotes); len(logs) != 0 {
				t.Fatalf("B got another call's log records: %+v", logs)
			}
			if len(bNotes) != 0 {
				t.Fatalf("B got another call's notifications: %v", bNotes)
			}

			// A client that asks for no records, or for more severe ones
			// only, gets none.
			for _, level := range []string{"", "error"} {
				meta := map[string]any{}
				if level != "" {
					meta[mcp.MetaLogLevel] = level
				}
				ex := statelessCall(t, url, 3, "tools/call", map[string]any{
					"name": "log", "arguments": map[string]any{"level": "warning", "message": "quiet"}, "_meta": meta,
				}, nil)
				resultOf(t, ex)
				if logs := logsOf(t, ex.notes); len(logs) != 0 {
					t.Fatalf("level %q: got %+v", level, logs)
				}
			}
		})
	}
}

// progressFor counts the notifications/progress among notes with token.
func progressFor(notes []*jsonrpc.Message, token string) int {
	n := 0
	for _, m := range notes {
		var p struct {
			Token string `json:"progressToken"`
		}
		if m.Method == "notifications/progress" && json.Unmarshal(m.Params, &p) == nil && p.Token == token {
			n++
		}
	}
	return n
}

// logsOf returns the notifications/message among notes.
func logsOf(t *testing.T, notes []*jsonrpc.Message) []mcp.LoggingMessageParams {
	t.Helper()
	var out []mcp.LoggingMessageParams
	for _, n := range notes {
		if n.Method != "notifications/message" {
			continue
		}
		var p mcp.LoggingMessageParams
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// statelessPost is statelessCall under ctx, from any goroutine: what came
// back before ctx ended.
func statelessPost(ctx context.Context, url string, id any, method string, params map[string]any) exchange {
	meta, _ := params["_meta"].(map[string]any)
	meta[mcp.MetaProtocolVersion] = mcp.LatestStatelessVersion
	meta[mcp.MetaClientCapabilities] = map[string]any{}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return exchange{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.LatestStatelessVersion)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return exchange{}
	}
	defer res.Body.Close()
	ex := exchange{status: res.StatusCode}
	for _, m := range readEventsLoose(res.Body) {
		if !m.IsResponse() {
			ex.notes = append(ex.notes, m)
		}
	}
	return ex
}

// readEventsLoose is readEvents for a goroutine: the messages read until
// the body ends or fails.
func readEventsLoose(r io.Reader) []*jsonrpc.Message {
	var out []*jsonrpc.Message
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
			if m, err := jsonrpc.DecodeMessage([]byte(data)); err == nil {
				out = append(out, m)
			}
		}
	}
	return out
}
