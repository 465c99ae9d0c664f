package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// A 2026-07-28 client listens with subscriptions/listen as go-sdk's does,
// on either face and in front of an upstream of either era: after the
// acknowledgement, the upstream's tools list change reaches that stream,
// tagged with the stream's id. The client declares roots, as go-sdk's
// does: an initialize-era upstream then runs its calls on a connection of
// their own, and the change comes on that one.
func TestListenGetsListChanged(t *testing.T) {
	upstreams := []struct {
		name  string
		start func(testservers.HTTPOptions) *testservers.HTTPServer
	}{
		{"stateless upstream", testservers.StartStateless},
		{"initialize-era upstream", testservers.StartStreamable},
	}
	for _, up := range upstreams {
		t.Run(up.name+"/http", func(t *testing.T) {
			s := up.start(testservers.HTTPOptions{})
			defer s.Close()
			_, url := startBridge(t, s.URL, Options{})
			next := openListen(t, url, "sub-1")
			wantNote(t, next(), "notifications/subscriptions/acknowledged", `"sub-1"`)
			resultOf(t, statelessCall(t, url, 2, "tools/call", map[string]any{"name": "notify_changes"}, rootsCaps()))
			wantNote(t, next(), "notifications/tools/list_changed", `"sub-1"`)
		})
		t.Run(up.name+"/stdio", func(t *testing.T) {
			s := up.start(testservers.HTTPOptions{})
			defer s.Close()
			b, _ := startBridge(t, s.URL, Options{})
			tr, _ := serveStdio(t, b)
			ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
			defer cancel()
			send := func(id string, method string, params map[string]any) {
				params["_meta"] = map[string]any{mcp.MetaProtocolVersion: mcp.LatestStatelessVersion, mcp.MetaClientCapabilities: rootsCaps()}
				raw, _ := json.Marshal(params)
				if err := tr.Send(testCtx(t), &jsonrpc.Message{ID: jsonrpc.String(id), Method: method, Params: raw}); err != nil {
					t.Fatal(err)
				}
			}
			msgs := make(chan *jsonrpc.Message, 16)
			go func() { // ends when the pipes close, at the test's end
				defer close(msgs)
				for {
					m, err := tr.Recv()
					if err != nil {
						return
					}
					msgs <- m
				}
			}()
			recv := func() *jsonrpc.Message {
				select {
				case m, ok := <-msgs:
					if !ok {
						t.Fatal("the bridge closed its stdout")
					}
					return m
				case <-ctx.Done():
					t.Fatal("nothing more came within the test's time")
				}
				return nil
			}
			send("sub-1", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
			wantNote(t, recv(), "notifications/subscriptions/acknowledged", `"sub-1"`)
			send("call-2", "tools/call", map[string]any{"name": "notify_changes"})
			var sawChange, sawAnswer bool
			for !sawChange || !sawAnswer {
				m := recv()
				switch {
				case m.IsResponse():
					if m.ID.Raw() != `"call-2"` || m.Error != nil {
						t.Fatalf("unexpected answer %s: %+v", m.ID.Raw(), m.Error)
					}
					sawAnswer = true
				case m.Method == "notifications/tools/list_changed":
					wantNote(t, m, m.Method, `"sub-1"`)
					sawChange = true
				}
			}
			// Cancelled, the stream ends without an answer; the channel
			// goes on serving.
			raw, _ := json.Marshal(map[string]any{"requestId": "sub-1"})
			if err := tr.Send(testCtx(t), &jsonrpc.Message{Method: "notifications/cancelled", Params: raw}); err != nil {
				t.Fatal(err)
			}
			send("ping-3", "ping", map[string]any{})
			if m := recv(); m.ID.Raw() != `"ping-3"` {
				t.Fatalf("after cancelling the listen stream: %s %s", m.Method, m.ID.Raw())
			}
		})
	}
}

func rootsCaps() map[string]any { return map[string]any{"roots": map[string]any{"listChanged": true}} }

// wantNote fails unless m is a notification of method whose subscription
// id is sub.
func wantNote(t *testing.T, m *jsonrpc.Message, method, sub string) {
	t.Helper()
	if m == nil {
		t.Fatalf("the stream ended before %s", method)
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if m.Method != method || string(p.Meta[mcp.MetaSubscriptionID]) != sub {
		t.Fatalf("got %s %s, want %s for subscription %s", m.Method, m.Params, method, sub)
	}
}

// openListen posts subscriptions/listen for tools list changes with id and
// returns a function that reads the stream's next message (nil at its end).
func openListen(t *testing.T, url, id string) func() *jsonrpc.Message {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": map[string]any{
		"notifications": map[string]any{"toolsListChanged": true},
		"_meta":         map[string]any{mcp.MetaProtocolVersion: mcp.LatestStatelessVersion, mcp.MetaClientCapabilities: map[string]any{}},
	}})
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second) // a change that never comes ends the stream
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.LatestStatelessVersion)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	sc := bufio.NewScanner(res.Body)
	return func() *jsonrpc.Message {
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
				m, err := jsonrpc.DecodeMessage([]byte(data))
				if err != nil {
					t.Fatalf("event %q: %v", data, err)
				}
				return m
			}
		}
		return nil
	}
}
