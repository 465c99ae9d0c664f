package testservers

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// listenStream is an open subscriptions/listen stream read by a test.
type listenStream struct {
	resp   *http.Response
	events *sseReader
}

func openListen(t *testing.T, w *statelessWire, id any, filter map[string]any) *listenStream {
	t.Helper()
	resp := w.send(t, id, "subscriptions/listen", map[string]any{"notifications": filter}, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("listen: status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &listenStream{resp: resp, events: newSSEReader(resp.Body)}
}

// next returns the next message on the stream.
func (l *listenStream) next(t *testing.T) *jsonrpc.Message {
	t.Helper()
	ev, err := l.events.next()
	if err != nil {
		t.Fatalf("listen stream: %v", err)
	}
	if ev.hasID {
		t.Errorf("an event id on a 2026-07-28 stream: %q", ev.id)
	}
	return mustDecode(t, ev.data)
}

// subscriptionID returns the subscription id in a message's _meta.
func subscriptionID(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return string(p.Meta[mcp.MetaSubscriptionID])
}

// wantNote reads the next message and checks it is method, tagged id.
func (l *listenStream) wantNote(t *testing.T, method, id string) *jsonrpc.Message {
	t.Helper()
	m := l.next(t)
	if m.Method != method || !m.IsNotification() {
		t.Fatalf("got %s %s %s, want %s", m.Method, m.Params, m.Result, method)
	}
	if got := subscriptionID(t, m.Params); got != id {
		t.Errorf("%s: subscriptionId %s, want %s", method, got, id)
	}
	return m
}

func TestStatelessListen(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{Options: Options{ListenRefuse: []string{"promptsListChanged"}}})
	srv := s.Server()
	l := openListen(t, w, "listen-1", map[string]any{
		"toolsListChanged":      true,
		"promptsListChanged":    true,
		"resourceSubscriptions": []string{StaticTextURI, "test://nope", StaticTextURI, NonASCIIResourceURI},
	})
	ack := l.wantNote(t, "notifications/subscriptions/acknowledged", `"listen-1"`)
	var ap struct {
		Notifications json.RawMessage `json:"notifications"`
	}
	_ = json.Unmarshal(ack.Params, &ap)
	if want := `{"toolsListChanged":true,"resourceSubscriptions":["test://static/text","test://static/naïve"]}`; string(ap.Notifications) != want {
		t.Errorf("acknowledged %s, want %s", ap.Notifications, want)
	}

	if n := srv.NotifyPromptsChanged(); n != 0 {
		t.Errorf("NotifyPromptsChanged reached %d (refused)", n)
	}
	if n := srv.NotifyResourcesChanged(); n != 0 {
		t.Errorf("NotifyResourcesChanged reached %d (not asked)", n)
	}
	if n := srv.NotifyResourceUpdated(StaticBlobURI); n != 0 {
		t.Errorf("NotifyResourceUpdated of another URI reached %d", n)
	}
	if n := srv.NotifyToolsChanged(); n != 1 {
		t.Errorf("NotifyToolsChanged reached %d", n)
	}
	l.wantNote(t, "notifications/tools/list_changed", `"listen-1"`)
	if n := srv.NotifyResourceUpdated(StaticTextURI); n != 1 {
		t.Errorf("NotifyResourceUpdated reached %d", n)
	}
	m := l.wantNote(t, "notifications/resources/updated", `"listen-1"`)
	if !strings.Contains(string(m.Params), `"uri":"test://static/text"`) {
		t.Errorf("updated %s", m.Params)
	}

	// Tools trigger changes too; request-scoped messages (logs) stay on
	// their own request's stream.
	w.metaMore = map[string]any{mcp.MetaLogLevel: "debug"}
	_, others := w.ok(t, 2, "tools/call", map[string]any{"name": "log", "arguments": map[string]any{"level": "info", "message": "hi"}})
	if len(others) != 1 || others[0].Method != "notifications/message" {
		t.Errorf("log on its own stream: %v", others)
	}
	w.metaMore = nil
	res, _ := w.ok(t, 3, "tools/call", map[string]any{"name": "notify_changes"})
	if text, _ := toolText(t, res); text != "sent to 1 subscription(s)" {
		t.Errorf("notify_changes: %q", text)
	}
	l.wantNote(t, "notifications/tools/list_changed", `"listen-1"`)
	res, _ = w.ok(t, 4, "tools/call", map[string]any{"name": "touch", "arguments": map[string]any{"uri": NonASCIIResourceURI}})
	if text, _ := toolText(t, res); text != "notified 1 subscription(s)" {
		t.Errorf("touch: %q", text)
	}
	l.wantNote(t, "notifications/resources/updated", `"listen-1"`)

	if st := srv.Stats(); st.ListenStreams != 1 || st.ListenActive != 1 {
		t.Errorf("stats %d %d", st.ListenStreams, st.ListenActive)
	}
	// Graceful end: the result, tagged, then the end of the stream.
	if n := srv.EndSubscriptions(); n != 1 {
		t.Errorf("EndSubscriptions ended %d", n)
	}
	end := l.next(t)
	if !end.IsResponse() || end.ID.Raw() != `"listen-1"` {
		t.Fatalf("end: %+v", end)
	}
	checkStatelessResult(t, end, "complete", -1)
	if got := subscriptionID(t, end.Result); got != `"listen-1"` {
		t.Errorf("result subscriptionId %s", got)
	}
	if _, err := l.events.next(); err != io.EOF {
		t.Errorf("after the result: %v, want EOF", err)
	}
	if st := srv.Stats(); st.ListenEnded != 1 || st.ListenActive != 0 {
		t.Errorf("stats ended %d active %d", st.ListenEnded, st.ListenActive)
	}
}

func TestStatelessListenTwoSubscriptions(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{JSONResponse: true}) // listen is SSE all the same
	a := openListen(t, w, 1, map[string]any{"toolsListChanged": true})
	a.wantNote(t, "notifications/subscriptions/acknowledged", "1")
	b := openListen(t, w, 2, map[string]any{"toolsListChanged": true, "resourcesListChanged": true})
	b.wantNote(t, "notifications/subscriptions/acknowledged", "2")
	if n := s.Server().NotifyResourcesChanged(); n != 1 {
		t.Errorf("resources: %d", n)
	}
	if n := s.Server().NotifyToolsChanged(); n != 2 {
		t.Errorf("tools: %d", n)
	}
	b.wantNote(t, "notifications/resources/list_changed", "2")
	b.wantNote(t, "notifications/tools/list_changed", "2")
	a.wantNote(t, "notifications/tools/list_changed", "1")
}

// TestStatelessListenClientCloses: closing the stream ends the subscription.
func TestStatelessListenClientCloses(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{})
	l := openListen(t, w, 1, map[string]any{"toolsListChanged": true})
	l.wantNote(t, "notifications/subscriptions/acknowledged", "1")
	l.resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	st, err := s.Server().WaitStats(ctx, func(st Stats) bool { return st.ListenActive == 0 && st.RequestsCancelled == 1 })
	if err != nil {
		t.Fatalf("%v: active %d, cancelled %d", err, st.ListenActive, st.RequestsCancelled)
	}
	if st.ListenEnded != 0 {
		t.Errorf("ListenEnded %d", st.ListenEnded)
	}
}

// TestStatelessListenServerClose: closing the server ends subscriptions
// with their result before the streams close.
func TestStatelessListenServerClose(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{})
	l := openListen(t, w, 5, map[string]any{"toolsListChanged": true})
	l.wantNote(t, "notifications/subscriptions/acknowledged", "5")
	s.Close()
	end := l.next(t)
	if !end.IsResponse() || end.ID.Raw() != "5" || end.Error != nil {
		t.Fatalf("end %+v", end)
	}
	if s.Server().Stats().ListenEnded != 1 {
		t.Error("ListenEnded not counted")
	}
}

func TestStatelessListenKeepAlive(t *testing.T) {
	_, w := startStatelessHTTP(t, HTTPOptions{KeepAlive: time.Millisecond})
	resp := w.send(t, 1, "subscriptions/listen", map[string]any{"notifications": map[string]any{}}, nil)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	sawAck := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no keep-alive comment: %v", err)
		}
		if strings.Contains(line, "notifications/subscriptions/acknowledged") {
			sawAck = true
		}
		if line == ":\n" {
			break
		}
	}
	if !sawAck {
		t.Error("a comment before the acknowledgement")
	}
}

func TestStatelessListenNeedsFilter(t *testing.T) {
	_, w := startStatelessHTTP(t, HTTPOptions{})
	m, _, code := w.call(t, 1, "subscriptions/listen", map[string]any{}, nil)
	if code != 200 {
		t.Errorf("status %d", code)
	}
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
}

// TestStatelessListenCutAndRestart: a stream cut (DropStreams) or a restart
// ends a subscription without a result; the client must listen again.
func TestStatelessListenCutAndRestart(t *testing.T) {
	for _, tt := range []struct {
		name string
		cut  func(s *HTTPServer) int
	}{
		{"DropStreams", func(s *HTTPServer) int { return s.DropStreams(0) }},
		{"Restart", func(s *HTTPServer) int { s.Restart(); return 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, w := startStatelessHTTP(t, HTTPOptions{})
			l := openListen(t, w, 1, map[string]any{"toolsListChanged": true})
			l.wantNote(t, "notifications/subscriptions/acknowledged", "1")
			if n := tt.cut(s); n != 1 {
				t.Errorf("cut %d streams", n)
			}
			if ev, err := l.events.next(); err == nil {
				t.Fatalf("an event after the cut: %+v", ev)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if st, err := s.Server().WaitStats(ctx, func(st Stats) bool { return st.ListenActive == 0 }); err != nil || st.ListenEnded != 0 {
				t.Fatalf("%v: %+v", err, st)
			}
			// Listening again works.
			l = openListen(t, w, 2, map[string]any{"toolsListChanged": true})
			l.wantNote(t, "notifications/subscriptions/acknowledged", "2")
		})
	}
}
