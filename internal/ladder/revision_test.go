package ladder_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
)

// refusingServer is a Streamable HTTP server that speaks only 2025-03-26
// and refuses an initialize of any other revision with refusal (a format
// naming the revision it wants), as go-mcp v0.2 does, where the
// specification asks it to answer with its own. It records the revisions
// initialize asked for.
type refusingServer struct {
	refusal string
	mu      sync.Mutex
	asked   []string
}

func (s *refusingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(body, &m); err != nil || m.Method != "initialize" {
		http.Error(w, "unknown method", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.asked = append(s.asked, m.Params.ProtocolVersion)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if m.Params.ProtocolVersion != mcp.Version20250326 {
		msg, _ := json.Marshal(s.refusal)
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32603,"message":`+string(msg)+`}}`)
		return
	}
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"refusing","version":"0"}}}`)
}

func (s *refusingServer) revisions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// An initialize refused with an error that names a revision we speak is
// sent once more asking for it; one that names none, or names the revision
// refused, is the server's answer as it stands.
func TestInitializeAgainWithNamedRevision(t *testing.T) {
	tests := []struct {
		name    string
		refusal string
		asked   []string // the revisions initialize asked for, in order
		ok      bool     // the last answer is a result
	}{
		{"names one we speak", "protocol version not supported, supported version is 2025-03-26",
			[]string{mcp.LatestInitializeVersion, mcp.Version20250326}, true},
		{"names none", "protocol version not supported", []string{mcp.LatestInitializeVersion}, false},
		{"names one we do not speak", "supported version is 1999-01-01", []string{mcp.LatestInitializeVersion}, false},
		{"names the one refused", "only " + mcp.LatestInitializeVersion + " is refused today", []string{mcp.LatestInitializeVersion}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &refusingServer{refusal: tt.refusal}
			srv := httptest.NewServer(s)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := ladder.Connect(ctx, srv.URL, initializeHello(), ladder.Config{Era: negotiate.InitializeOnly})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer res.Transport.Close()
			if got := s.revisions(); strings.Join(got, ",") != strings.Join(tt.asked, ",") {
				t.Errorf("initialize asked for %v, want %v", got, tt.asked)
			}
			if ok := res.Response.Error == nil; ok != tt.ok {
				t.Fatalf("answer %+v, want a result: %v", res.Response.Error, tt.ok)
			}
			last := res.Report.Attempts[len(res.Report.Attempts)-1]
			if again := strings.Contains(last.Decision, "asked again"); again != (len(tt.asked) == 2) {
				t.Errorf("the report's decision %q, want the second initialize said: %v", last.Decision, len(tt.asked) == 2)
			}
		})
	}
}

// The same holds over a transport without HTTP statuses (stdio, a host's
// own), where Handshake sends initialize.
func TestHandshakeInitializeAgainWithNamedRevision(t *testing.T) {
	tr := newScriptedTransport(func(m *jsonrpc.Message) *jsonrpc.Message {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(m.Params, &p)
		if p.ProtocolVersion != mcp.Version20250326 {
			return &jsonrpc.Message{ID: m.ID, Error: &jsonrpc.Error{Code: -32603, Message: "supported version is 2025-03-26"}}
		}
		return &jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"0"}}`)}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := ladder.Handshake(ctx, tr, "test", initializeHello(), ladder.Config{Era: negotiate.InitializeOnly})
	if err != nil {
		t.Fatalf("Handshake: %v", err)
	}
	defer res.Transport.Close()
	if res.Response.Error != nil {
		t.Fatalf("answer %v, want the result of the second initialize", res.Response.Error)
	}
	if got := tr.sent(); got != 2 {
		t.Errorf("%d initialize requests sent, want 2", got)
	}
}

// scriptedTransport answers each request it is sent with answer(request).
type scriptedTransport struct {
	answer func(*jsonrpc.Message) *jsonrpc.Message
	out    chan *jsonrpc.Message
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	n      int
}

func newScriptedTransport(answer func(*jsonrpc.Message) *jsonrpc.Message) *scriptedTransport {
	return &scriptedTransport{answer: answer, out: make(chan *jsonrpc.Message, 16), done: make(chan struct{})}
}

func (s *scriptedTransport) Send(ctx context.Context, m *jsonrpc.Message) error {
	if !m.IsRequest() {
		return nil
	}
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	select {
	case s.out <- s.answer(m):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *scriptedTransport) Recv() (*jsonrpc.Message, error) {
	select {
	case m := <-s.out:
		return m, nil
	case <-s.done:
		return nil, io.EOF
	}
}

func (s *scriptedTransport) Close() error {
	s.once.Do(func() { close(s.done) })
	return nil
}

func (s *scriptedTransport) sent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
