package ladder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
)

func note(params string) *jsonrpc.Message {
	return &jsonrpc.Message{Method: "notifications/message", Params: []byte(params)}
}

func ping(id int64) *jsonrpc.Message { return &jsonrpc.Message{ID: jsonrpc.Int(id), Method: "ping"} }

// TestEarlyBounds: what came before the initialize answer is kept within
// a count and a byte bound; past them notifications are dropped (the
// oldest kept one to make room for a request), requests never.
func TestEarlyBounds(t *testing.T) {
	big := `"` + strings.Repeat("x", maxEarlyBytes) + `"`
	tests := []struct {
		name        string
		msgs        func() []*jsonrpc.Message
		wantKept    int
		wantDropped int
		wantErr     bool
		wantFirst   string // method of the first kept message
	}{
		{name: "few", msgs: func() []*jsonrpc.Message { return []*jsonrpc.Message{note("{}"), ping(2), note("{}")} },
			wantKept: 3, wantFirst: "notifications/message"},
		{name: "notifications past the count", msgs: func() []*jsonrpc.Message { return repeat(note("{}"), maxEarly+10) },
			wantKept: maxEarly, wantDropped: 10, wantFirst: "notifications/message"},
		{name: "requests evict notifications", msgs: func() []*jsonrpc.Message {
			return append(repeat(note("{}"), maxEarly), ping(2), ping(3))
		}, wantKept: maxEarly, wantDropped: 2, wantFirst: "notifications/message"},
		{name: "one oversize first", msgs: func() []*jsonrpc.Message { return []*jsonrpc.Message{note(big), note("{}")} },
			wantKept: 1, wantDropped: 1, wantFirst: "notifications/message"},
		{name: "oversize request evicts", msgs: func() []*jsonrpc.Message {
			return []*jsonrpc.Message{note("{}"), {ID: jsonrpc.Int(2), Method: "ping", Params: []byte(big)}}
		}, wantKept: 1, wantDropped: 1, wantFirst: "ping"},
		{name: "requests past the count", msgs: func() []*jsonrpc.Message {
			var ms []*jsonrpc.Message
			for i := range maxEarly + 1 {
				ms = append(ms, ping(int64(i+2)))
			}
			return ms
		}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &early{log: slog.New(slog.DiscardHandler)}
			var err error
			for _, m := range tt.msgs() {
				if err = e.add(m); err != nil {
					break
				}
			}
			if tt.wantErr {
				if !errors.Is(err, negotiate.ErrTooManyEarlyRequests) {
					t.Fatalf("got %v, want ErrTooManyEarlyRequests", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(e.msgs) != tt.wantKept || e.dropped != tt.wantDropped {
				t.Errorf("kept %d, dropped %d; want %d, %d", len(e.msgs), e.dropped, tt.wantKept, tt.wantDropped)
			}
			if e.msgs[0].Method != tt.wantFirst {
				t.Errorf("first kept %s, want %s", e.msgs[0].Method, tt.wantFirst)
			}
			for _, m := range tt.msgs() {
				if m.IsRequest() && !kept(e.msgs, m) {
					t.Errorf("request %s dropped", m.ID)
				}
			}
		})
	}
}

func repeat(m *jsonrpc.Message, n int) []*jsonrpc.Message {
	ms := make([]*jsonrpc.Message, n)
	for i := range ms {
		ms[i] = m
	}
	return ms
}

func kept(msgs []*jsonrpc.Message, m *jsonrpc.Message) bool {
	for _, k := range msgs {
		if k.ID == m.ID && k.Method == m.Method {
			return true
		}
	}
	return false
}

// earlyFlood writes n notifications and then the answer to initialize id,
// as SSE events.
func earlyFlood(w io.Writer, n int, id string) {
	for i := range n {
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%d}}\n\n", i)
	}
	fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}\n\n", id)
}

// initializeEarlyFlood is an HTTP+SSE server that sends n notifications on its
// stream before the answer to initialize.
func initializeEarlyFlood(n int) http.HandlerFunc {
	answer := make(chan string, 1)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.NewDecoder(r.Body).Decode(&m)
			w.WriteHeader(http.StatusAccepted)
			if len(m.ID) > 0 {
				answer <- string(m.ID)
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: endpoint\ndata: /message\n\n")
		_ = http.NewResponseController(w).Flush()
		select {
		case id := <-answer:
			earlyFlood(w, n, id)
		case <-r.Context().Done():
			return
		}
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}
}

// statelessEarlyFlood is a Streamable HTTP server that answers initialize
// with an event stream of n notifications before the response.
func statelessEarlyFlood(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || m.Method != "initialize" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		earlyFlood(w, n, string(m.ID))
	}
}

// TestEarlyFloodBounded: a server that sends a thousand notifications
// before answering initialize is negotiated with, over either transport;
// what is kept for Recv is bounded, in order, and the rest is counted in
// the Result.
func TestEarlyFloodBounded(t *testing.T) {
	const flood = 1000
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		policy  negotiate.TransportPolicy
	}{
		{"initialize", initializeEarlyFlood(flood), negotiate.SSEOnly},
		{"stateless", statelessEarlyFlood(flood), negotiate.StreamableOnly},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			init := &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "initialize", Params: []byte(`{}`)}
			res, err := Connect(ctx, srv.URL, Hello{Initialize: init}, Config{Policy: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Transport.Close()
			if res.DroppedNotifications != flood-maxEarly {
				t.Errorf("dropped %d, want %d", res.DroppedNotifications, flood-maxEarly)
			}
			for i := range maxEarly {
				m, err := res.Transport.Recv()
				if err != nil {
					t.Fatal(err)
				}
				if string(m.Params) != fmt.Sprintf(`{"level":"info","data":%d}`, i) {
					t.Fatalf("message %d: %s", i, m.Params)
				}
			}
		})
	}
}
