package modern

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
)

// TestSession: the session id of the initialize answer and the negotiated
// protocol version go on every later request, the DELETE at Close included,
// and never on initialize itself.
func TestSession(t *testing.T) {
	tests := []struct {
		name    string
		session string
		sse     bool // initialize is answered with an event stream
	}{
		{"with a session", "sess-0123456789abcdef~!{}", false},
		{"with a session, SSE answer", "sess-sse", true},
		{"stateless server", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if m, _ := jsonrpc.DecodeMessage(body); tt.sse && m != nil && m.Method == "initialize" {
					w.Header().Set("Mcp-Session-Id", tt.session)
					ev := startSSE(w)
					ev("id: p0\ndata:\n\n")
					ev(data(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`))
					ev(data(response("1", initResult)))
					return
				}
				mcp(tt.session)(w, r, body)
			})
			tr, ch := dial(t, s, Options{})
			if tt.sse {
				send(t, tr, initialize())
				if got := describe(next(t, ch)); got != "notification notifications/message" {
					t.Fatalf("got %s", got)
				}
				next(t, ch)
				send(t, tr, notification("notifications/initialized"))
			} else {
				handshake(t, tr, ch)
			}
			if got := tr.SessionID(); got != tt.session {
				t.Errorf("SessionID() = %q, want %q", got, tt.session)
			}
			if got := tr.ProtocolVersion(); got != "2025-06-18" {
				t.Errorf("ProtocolVersion() = %q", got)
			}
			send(t, tr, request(2, "tools/list"))
			next(t, ch)
			send(t, tr, &jsonrpc.Message{ID: jsonrpc.String("srv"), Result: []byte(`{}`)})
			testkit.Eventually(t, wait, "the GET stream", func() bool { return s.Count(http.MethodGet) == 1 })
			if err := tr.Close(); err != nil {
				t.Fatal(err)
			}

			reqs := s.Requests()
			if first := reqs[0]; first.Header.Get("Mcp-Session-Id") != "" || first.Header.Get("Mcp-Protocol-Version") != "" {
				t.Errorf("initialize carried session headers: %v", first.Header)
			}
			count := map[string]int{}
			for _, r := range reqs[1:] {
				count[r.Method]++
				if got := r.Header.Get("Mcp-Session-Id"); got != tt.session {
					t.Errorf("%s: Mcp-Session-Id = %q, want %q", r.Method, got, tt.session)
				}
				if got := r.Header.Get("Mcp-Protocol-Version"); got != "2025-06-18" {
					t.Errorf("%s: MCP-Protocol-Version = %q", r.Method, got)
				}
			}
			// initialized, tools/list, the response; the GET stream; the DELETE.
			want := map[string]int{"POST": 3, "GET": 1}
			if tt.session != "" {
				want["DELETE"] = 1
			}
			if fmt.Sprint(count) != fmt.Sprint(want) {
				t.Errorf("requests after initialize: %v, want %v", count, want)
			}
		})
	}
}

// TestSessionIDInvalid: a session id with bytes outside 0x21–0x7E is
// refused with a clear error, and not sent back.
func TestSessionIDInvalid(t *testing.T) {
	for _, id := range []string{"has space", "tab\there", "naïve", "ok\x80"} {
		t.Run(id, func(t *testing.T) {
			s := newServer(t, mcp(id))
			tr, _ := dial(t, s, Options{})
			err := sendErr(tr, initialize())
			if !errors.Is(err, ErrInvalidSessionID) {
				t.Fatalf("Send = %v, want ErrInvalidSessionID", err)
			}
			if tr.SessionID() != "" || tr.ProtocolVersion() != "" {
				t.Errorf("session kept: %q %q", tr.SessionID(), tr.ProtocolVersion())
			}
		})
	}
}

// TestSessionIDLength: a session id of up to MaxSessionIDLen bytes is kept
// and sent back as it came; a longer one (a 10 KB id among them) fails
// initialize with ErrInvalidSessionID and is never sent back.
func TestSessionIDLength(t *testing.T) {
	for _, tc := range []struct {
		n  int
		ok bool
	}{{MaxSessionIDLen, true}, {MaxSessionIDLen + 1, false}, {10 << 10, false}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			id := strings.Repeat("a", tc.n-1) + "z"
			s := newServer(t, mcp(id))
			tr, ch := dial(t, s, Options{})
			err := sendErr(tr, initialize())
			if !tc.ok {
				if !errors.Is(err, ErrInvalidSessionID) || !strings.Contains(err.Error(), "over the limit of 1024") {
					t.Fatalf("Send = %v, want ErrInvalidSessionID over the limit", err)
				}
				if tr.SessionID() != "" {
					t.Errorf("a %d-byte session id was kept", tc.n)
				}
				tr.Close()
				for _, r := range s.Requests()[1:] {
					t.Errorf("%s sent after the refused id (session header %d bytes)", r.Method, len(r.Header.Get("Mcp-Session-Id")))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			next(t, ch)
			send(t, tr, request(2, "ping"))
			next(t, ch)
			reqs := s.Requests()
			if got := reqs[len(reqs)-1].Header.Get("Mcp-Session-Id"); got != id {
				t.Errorf("sent back %d bytes, want the %d the server gave", len(got), len(id))
			}
		})
	}
}

// TestSessionIDOnlyFromInitialize: a session header on any other answer
// is ignored.
func TestSessionIDOnlyFromInitialize(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Mcp-Session-Id", "sneaky")
		mcp("")(w, r, body)
	})
	tr, ch := dial(t, s, Options{})
	send(t, tr, request(3, "tools/list"))
	next(t, ch)
	if tr.SessionID() != "" {
		t.Fatalf("SessionID() = %q after a non-initialize answer", tr.SessionID())
	}
	send(t, tr, request(4, "tools/list"))
	if got := s.Requests()[1].Header.Get("Mcp-Session-Id"); got != "" {
		t.Errorf("sent Mcp-Session-Id %q", got)
	}
}

// TestSessionExpired: 404 on a request that carried the session is
// ErrSessionExpired and an *HTTPError; the session is forgotten so that the
// next initialize starts afresh and gets a new one.
func TestSessionExpired(t *testing.T) {
	var generation atomic.Int32
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		m, _ := jsonrpc.DecodeMessage(body)
		if r.Method == http.MethodPost && m != nil && m.Method == "initialize" {
			generation.Add(1)
		}
		session := "gen-" + string(rune('0'+generation.Load()))
		if got := r.Header.Get("Mcp-Session-Id"); got != "" && got != session {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		mcp(session)(w, r, body)
	})
	tr, ch := dial(t, s, Options{})
	handshake(t, tr, ch)
	if tr.SessionID() != "gen-1" {
		t.Fatalf("SessionID() = %q", tr.SessionID())
	}
	generation.Add(1) // the server forgets gen-1

	err := sendErr(tr, request(2, "tools/call"))
	var he *jsonrpc.HTTPError
	if !errors.Is(err, jsonrpc.ErrSessionExpired) || !errors.As(err, &he) || he.StatusCode != http.StatusNotFound {
		t.Fatalf("Send = %v, want ErrSessionExpired and *HTTPError 404", err)
	}
	if tr.SessionID() != "" || tr.ProtocolVersion() != "" {
		t.Fatalf("session not forgotten: %q %q", tr.SessionID(), tr.ProtocolVersion())
	}

	handshake(t, tr, ch)
	reqs := s.Requests()
	var reinit seen
	for _, r := range reqs {
		if r.Method == http.MethodPost && r.Body == mustEncode(t, initialize()) {
			reinit = r
		}
	}
	if reinit.Header.Get("Mcp-Session-Id") != "" || reinit.Header.Get("Mcp-Protocol-Version") != "" {
		t.Errorf("re-initialize carried the old session: %v", reinit.Header)
	}
	if tr.SessionID() != "gen-3" {
		t.Errorf("SessionID() = %q after re-initialize, want gen-3", tr.SessionID())
	}
	send(t, tr, request(3, "tools/call"))
	if got := describe(next(t, ch)); got != `response 3 {"ok":true}` {
		t.Errorf("got %s", got)
	}
}

func mustEncode(t *testing.T, m *jsonrpc.Message) string {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInitializeErrorKeepsNoSession: an initialize answered by a JSON-RPC
// error establishes nothing.
func TestInitializeErrorKeepsNoSession(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Mcp-Session-Id", "s1")
		writeJSON(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unsupported version"}}`)
	})
	tr, ch := dial(t, s, Options{})
	send(t, tr, initialize())
	if got := describe(next(t, ch)); got != "error 1 -32602" {
		t.Fatalf("got %s", got)
	}
	if tr.SessionID() != "" || tr.ProtocolVersion() != "" {
		t.Errorf("session set from an error: %q %q", tr.SessionID(), tr.ProtocolVersion())
	}
}

// Between a re-initialization's initialize and its
// notifications/initialized, a request is refused without being sent (not
// sent, and for a session being replaced, so the protocol layer sends it
// again once the session is ready); the notification itself goes out, and
// requests after it do.
func TestRequestWaitsForInitialized(t *testing.T) {
	s := newServer(t, mcp("s1"))
	tr, ch := dial(t, s, Options{})
	handshake(t, tr, ch)
	send(t, tr, initialize()) // the re-initialization
	next(t, ch)
	err := sendErr(tr, request(2, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrNotSent) || !errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Fatalf("a request before notifications/initialized: %v, want it refused as not sent", err)
	}
	send(t, tr, notification("notifications/initialized"))
	send(t, tr, request(3, "tools/call"))
	next(t, ch)
	var calls []string
	for _, r := range s.Requests() {
		if strings.Contains(r.Body, "tools/call") {
			calls = append(calls, r.Body)
		}
	}
	if len(calls) != 1 || !strings.Contains(calls[0], `"id":3`) {
		t.Errorf("the server got the tools/calls %q, want only id 3", calls)
	}
}
