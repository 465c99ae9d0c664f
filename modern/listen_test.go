package modern

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
)

// TestGETStreamRefused: 405 (and the 404 or 400 real servers send) means
// no GET stream: one debug line, no warning, no error, never asked again.
func TestGETStreamRefused(t *testing.T) {
	for _, status := range []int{http.StatusMethodNotAllowed, http.StatusNotFound, http.StatusBadRequest} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.Method == http.MethodGet {
					w.WriteHeader(status)
					return
				}
				mcp("s1")(w, r, body)
			})
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l)}})
			handshake(t, tr, ch)
			listening := func() bool {
				tr.mu.Lock()
				defer tr.mu.Unlock()
				return tr.listener != nil
			}
			testkit.Eventually(t, wait, "the refused GET's goroutine to end", func() bool {
				return len(l.Messages(slog.LevelDebug)) > 0 && !listening()
			})
			// A second initialized (as after a re-initialize) does not retry.
			send(t, tr, notification("notifications/initialized"))
			send(t, tr, request(2, "tools/list"))
			next(t, ch)
			if listening() {
				t.Error("a second initialized opened the GET stream again")
			}
			if err := tr.Close(); err != nil { // it waits for every goroutine: no GET can follow
				t.Errorf("Close = %v", err)
			}
			if n := s.Count(http.MethodGet); n != 1 {
				t.Errorf("%d GET requests, want 1", n)
			}
			if d, w := l.Messages(slog.LevelDebug), l.Messages(slog.LevelWarn); len(d) != 1 || len(w) != 0 {
				t.Errorf("logs: debug %q, warn %q; want one debug line", d, w)
			}
		})
	}
}

// TestGETStreamFailure: any other failure is retried as the policy says,
// and one warning when its retries are used up; never an error.
func TestGETStreamFailure(t *testing.T) {
	tests := []struct {
		name string
		get  func(w http.ResponseWriter)
	}{
		{"500", func(w http.ResponseWriter) { http.Error(w, "no", http.StatusInternalServerError) }},
		{"wrong content type", func(w http.ResponseWriter) { writeJSON(w, `{}`) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.Method == http.MethodGet {
					tt.get(w)
					return
				}
				mcp("")(w, r, body)
			})
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tiny()}})
			handshake(t, tr, ch)
			testkit.Eventually(t, wait, "the warning", func() bool { return len(l.Messages(slog.LevelWarn)) > 0 })
			send(t, tr, request(2, "tools/list"))
			next(t, ch)
			if w := l.Messages(slog.LevelWarn); len(w) != 1 {
				t.Errorf("warnings %q, want one", w)
			}
		})
	}
}

// TestGETStream: the GET stream carries the session headers; the server
// requests and notifications on it reach Recv, and the client's answer
// goes back as a POST.
func TestGETStream(t *testing.T) {
	answered := make(chan string, 1)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodGet {
			if r.Header.Get("Accept") != "text/event-stream" {
				http.Error(w, "accept", http.StatusNotAcceptable)
				return
			}
			ev := startSSE(w)
			ev("id: g0\ndata:\n\n")
			ev(data(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
			ev("id: g1\n" + data(`{"jsonrpc":"2.0","id":"ping-1","method":"ping"}`))
			<-r.Context().Done()
			return
		}
		if m, _ := jsonrpc.DecodeMessage(body); m != nil && m.IsResponse() {
			answered <- m.ID.Raw() + " " + string(m.Result)
		}
		mcp("s-42")(w, r, body)
	})
	tr, ch := dial(t, s, Options{})
	handshake(t, tr, ch)
	if got := describe(next(t, ch)); got != "notification notifications/tools/list_changed" {
		t.Fatalf("got %s", got)
	}
	ping := next(t, ch)
	if got := describe(ping); got != `request ping "ping-1"` {
		t.Fatalf("got %s", got)
	}
	send(t, tr, &jsonrpc.Message{ID: ping.ID, Result: []byte(`{}`)})
	select {
	case got := <-answered:
		if got != `"ping-1" {}` {
			t.Errorf("server got answer %s", got)
		}
	case <-time.After(wait):
		t.Fatal("the answer did not reach the server")
	}
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet {
			if r.Header.Get("Mcp-Session-Id") != "s-42" || r.Header.Get("Mcp-Protocol-Version") != "2025-06-18" {
				t.Errorf("GET headers: %v", r.Header)
			}
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
}
