package testservers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

func TestStatelessProgressOnItsStream(t *testing.T) {
	_, w := startStatelessHTTP(t, HTTPOptions{})
	w.metaMore = map[string]any{"progressToken": "p1"}
	m, others := w.ok(t, 1, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "delayMs": 0}})
	checkStatelessResult(t, m, "complete", -1)
	if len(others) != 3 {
		t.Fatalf("%d messages before the result, want 3 progress", len(others))
	}
	for _, o := range others {
		if o.Method != "notifications/progress" || !strings.Contains(string(o.Params), `"progressToken":"p1"`) {
			t.Errorf("got %s %s", o.Method, o.Params)
		}
	}
}

// TestStatelessLogLevel: notifications/message only for a request that
// carried a log level, at or above it, on its own stream.
func TestStatelessLogLevel(t *testing.T) {
	for _, tt := range []struct {
		name     string
		level    string // _meta logLevel; none when ""
		logAt    string
		wantText string
		wantMsgs int
	}{
		{"no level", "", "emergency", "filtered", 0},
		{"below", "warning", "info", "filtered", 0},
		{"at", "warning", "warning", "logged", 1},
		{"above", "debug", "error", "logged", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, w := startStatelessHTTP(t, HTTPOptions{})
			if tt.level != "" {
				w.metaMore = map[string]any{mcp.MetaLogLevel: tt.level}
			}
			m, others := w.ok(t, 1, "tools/call", map[string]any{"name": "log", "arguments": map[string]any{"level": tt.logAt, "message": "m"}})
			if text, _ := toolText(t, m); text != tt.wantText {
				t.Errorf("text %q, want %q", text, tt.wantText)
			}
			if len(others) != tt.wantMsgs {
				t.Fatalf("messages %v", others)
			}
			if tt.wantMsgs == 1 && (others[0].Method != "notifications/message" || !strings.Contains(string(others[0].Params), `"level":"`+tt.logAt+`"`)) {
				t.Errorf("log %s %s", others[0].Method, others[0].Params)
			}
		})
	}
}

// TestStatelessCancelByClosingTheStream: closing the SSE answer cancels the
// request on the server.
func TestStatelessCancelByClosingTheStream(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{})
	w.metaMore = map[string]any{"progressToken": 1}
	resp := w.send(t, 1, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 100000, "delayMs": 5}}, nil)
	ev, err := newSSEReader(resp.Body).next()
	if err != nil || !strings.Contains(ev.data, "notifications/progress") {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	st, err := s.Server().WaitStats(ctx, func(st Stats) bool { return st.RequestsCancelled == 1 })
	if err != nil {
		t.Fatalf("the server did not see the cancellation: %+v", st)
	}
	if st.ToolCalls["slow"] != 1 || st.Cancelled != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestStatelessCancelInJSONMode(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{JSONResponse: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.url, strings.NewReader(
			statelessBody(1, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 100000, "delayMs": 5}}, statelessMeta("2026-07-28", map[string]any{}, nil))))
		for k, v := range w.headersFor("tools/call", map[string]any{"name": "slow"}) {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		resp, err := w.hc.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Errorf("an answer: %d", resp.StatusCode)
		}
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), testTimeout)
	defer wcancel()
	if _, err := s.Server().WaitStats(wctx, func(st Stats) bool { return st.ToolCalls["slow"] == 1 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if st, err := s.Server().WaitStats(wctx, func(st Stats) bool { return st.RequestsCancelled == 1 }); err != nil {
		t.Fatalf("not cancelled: %+v", st)
	}
}

func TestStatelessFaults(t *testing.T) {
	t.Run("429 and 503", func(t *testing.T) {
		s, w := startStatelessHTTP(t, HTTPOptions{Faults: Faults{Rules: []FaultRule{
			{Fault: FaultTooManyRequests, Method: "tools/call", Count: 1, RetryAfter: "2"},
			{Fault: FaultUnavailable, Method: "tools/call", Count: 1, RetryAfter: "0"},
		}}})
		for _, want := range []struct {
			status int
			after  string
		}{{429, "2"}, {503, "0"}} {
			resp := w.send(t, 1, "tools/call", map[string]any{"name": "once", "arguments": map[string]any{"key": "k"}}, nil)
			resp.Body.Close()
			if resp.StatusCode != want.status || resp.Header.Get("Retry-After") != want.after {
				t.Errorf("status %d Retry-After %q, want %d %q", resp.StatusCode, resp.Header.Get("Retry-After"), want.status, want.after)
			}
		}
		m, _ := w.ok(t, 2, "tools/call", map[string]any{"name": "once", "arguments": map[string]any{"key": "k"}})
		if text, _ := toolText(t, m); text != "k executed 1 time(s)" {
			t.Errorf("text %q", text)
		}
		if st := s.Server().Stats(); st.Rejected != 2 || st.Executions != 1 {
			t.Errorf("Rejected %d Executions %d", st.Rejected, st.Executions)
		}
	})
	t.Run("stream cut before the response", func(t *testing.T) {
		s, w := startStatelessHTTP(t, HTTPOptions{Faults: Faults{Rules: []FaultRule{{Fault: FaultDropStream, Method: "tools/call", Count: 1}}}})
		resp := w.send(t, 1, "tools/call", map[string]any{"name": "once", "arguments": map[string]any{"key": "k"}}, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		events := newSSEReader(resp.Body)
		for {
			ev, err := events.next()
			if err != nil {
				break // cut: no response, no id to resume from
			}
			if ev.hasID || ev.data == "" {
				t.Errorf("an id or priming event on a 2026-07-28 stream: %+v", ev)
			}
			if strings.Contains(ev.data, `"result"`) {
				t.Fatalf("the response came through: %s", ev.data)
			}
		}
		resp.Body.Close()
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if st, err := s.Server().WaitStats(ctx, func(st Stats) bool { return st.Executions == 1 && st.Faults["drop-stream"] == 1 }); err != nil {
			t.Fatalf("%v: %+v", err, st)
		}
		// The same again (a client that re-sends) runs it a second time:
		// the server counts the duplicate.
		w.ok(t, 2, "tools/call", map[string]any{"name": "once", "arguments": map[string]any{"key": "k"}})
		if st := s.Server().Stats(); st.Duplicates != 1 {
			t.Errorf("Duplicates %d", st.Duplicates)
		}
	})
	t.Run("stream cut after a progress event", func(t *testing.T) {
		s, w := startStatelessHTTP(t, HTTPOptions{Faults: Faults{Rules: []FaultRule{{Fault: FaultDropStreamNoIDs, AfterEvents: 1}}}})
		w.metaMore = map[string]any{"progressToken": "p"}
		resp := w.send(t, 1, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1000, "delayMs": 1}}, nil)
		defer resp.Body.Close()
		events := newSSEReader(resp.Body)
		if ev, err := events.next(); err != nil || !strings.Contains(ev.data, "notifications/progress") {
			t.Fatalf("first event %+v %v", ev, err)
		}
		if _, err := events.next(); err == nil {
			t.Fatal("the stream went on after the cut")
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		// The cut cancels the request (nobody can get its answer); it is
		// a fault, not the client's cancellation.
		if st, err := s.Server().WaitStats(ctx, func(st Stats) bool {
			return st.Faults["drop-stream-no-ids"] == 1 && len(s.Handler().statelessChannel().openStreams()) == 0
		}); err != nil {
			t.Fatalf("%v: %+v", err, st)
		}
	})
	t.Run("JSON answer lost", func(t *testing.T) {
		s, w := startStatelessHTTP(t, HTTPOptions{JSONResponse: true, Faults: Faults{Rules: []FaultRule{{Fault: FaultDropStream, Count: 1}}}})
		req, _ := http.NewRequest(http.MethodPost, w.url, strings.NewReader(
			statelessBody(1, "tools/call", map[string]any{"name": "once", "arguments": map[string]any{"key": "j"}}, statelessMeta("2026-07-28", map[string]any{}, nil))))
		for k, v := range w.headersFor("tools/call", map[string]any{"name": "once"}) {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		resp, err := w.hc.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want the connection cut", err)
		}
		if st := s.Server().Stats(); st.Executions != 1 || st.Faults["drop-stream"] != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestStatelessErrorStatusOnStream: an error with a status of its own
// (-32021) answers an SSE request as JSON with that status, when nothing
// was streamed yet.
func TestStatelessErrorStatusOnStream(t *testing.T) {
	_, w := startStatelessHTTP(t, HTTPOptions{})
	resp := w.send(t, 1, "tools/call", map[string]any{"name": "roots"}, nil)
	defer resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("status %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	m, _ := readAny(t, resp)
	wantErrorCode(t, m, jsonrpc.CodeMissingClientCapability)
}
