package client_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
)

// gateway is a Streamable HTTP test server (JSON answers) behind a
// front that answers the first times POSTs of method with its own status:
// after passing them to the server (ran: the tool executes, its answer
// dropped) or without (the server never sees them). Every other request
// goes through.
type gateway struct {
	h     *testservers.StreamableHandler
	posts atomic.Int32 // POSTs of method that reached the front
}

func startGateway(t *testing.T, method string, times int32, ran bool, status int, header ...string) (*gateway, *httptest.Server) {
	t.Helper()
	g := &gateway{h: testservers.NewStreamableHandler(testservers.HTTPOptions{JSONResponse: true})}
	t.Cleanup(g.h.Close)
	mark := []byte(`"method":"` + method + `"`)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, mark) && g.posts.Add(1) <= times {
				if ran {
					g.h.ServeHTTP(httptest.NewRecorder(), r) // runs to its end; the answer is lost
				}
				for i := 0; i+1 < len(header); i += 2 {
					w.Header().Set(header[i], header[i+1])
				}
				http.Error(w, "upstream connect error or disconnect/reset before headers", status)
				return
			}
		}
		g.h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return g, s
}

// A gateway answers 500, 502, 504 or 503 without Retry-After after the
// server ran a tools/call: the call fails once, with an error that says it
// may have run and holds the gateway's *jsonrpc.HTTPError; the tool ran
// once, even with WithReplay (the tool is not safe to repeat).
func TestCallGatewayErrorAfterRunIsOutcomeUnknown(t *testing.T) {
	for _, status := range []int{500, 502, 503, 504} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			g, s := startGateway(t, "tools/call", 1, true, status)
			c := dial(t, server{target: client.URL(s.URL)}, client.WithReconnectPolicy(fastPolicy), client.WithReplay())
			_, err := c.CallTool(ctxT(t), "once", map[string]any{"key": "pay"})
			if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Errorf("CallTool = %v; want an error matching ErrOutcomeUnknown", err)
			}
			if herr, ok := errors.AsType[*jsonrpc.HTTPError](err); !ok || herr.StatusCode != status {
				t.Errorf("CallTool = %v; want the gateway's *jsonrpc.HTTPError %d", err, status)
			}
			if n := g.h.Server().Executed("pay"); n != 1 {
				t.Errorf("the tool ran %d times; want 1", n)
			}
			if n := g.posts.Load(); n != 1 {
				t.Errorf("the tools/call was POSTed %d times; want 1", n)
			}
		})
	}
}

// A 429 (with or without Retry-After) or a 503 with Retry-After says the
// server did not run the request: the tools/call is sent again and
// succeeds, the tool running once.
func TestCallThrottledIsSentAgain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header []string
	}{
		{"429", 429, nil},
		{"429 Retry-After", 429, []string{"Retry-After", "0"}},
		{"503 Retry-After", 503, []string{"Retry-After", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, s := startGateway(t, "tools/call", 1, false, tc.status, tc.header...)
			c := dial(t, server{target: client.URL(s.URL)}, client.WithReconnectPolicy(fastPolicy))
			if _, err := c.CallTool(ctxT(t), "once", map[string]any{"key": "pay"}); err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if n := g.h.Server().Executed("pay"); n != 1 {
				t.Errorf("the tool ran %d times; want 1", n)
			}
			if n := g.posts.Load(); n != 2 {
				t.Errorf("the tools/call was POSTed %d times; want 2", n)
			}
		})
	}
}

// After a 503 without Retry-After the Conn lets the transport send again
// only a request it would replay itself: one the host marks Repeatable, or,
// with WithReplay, one safe to repeat (ping). Any other is given back
// after one POST, as outcome unknown. The gateway answers 503 five times:
// more than the Conn's own replays (3) would get through, fewer than the
// policy's attempts.
func TestCall503WithoutRetryAfterSendsAgainOnlySafeRequests(t *testing.T) {
	t.Run("tools/call", func(t *testing.T) {
		g, s := startGateway(t, "tools/call", 5, false, 503)
		c := dial(t, server{target: client.URL(s.URL)}, client.WithReconnectPolicy(fastPolicy), client.WithReplay())
		_, err := c.CallTool(ctxT(t), "once", map[string]any{"key": "pay"})
		if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Errorf("CallTool = %v; want an error matching ErrOutcomeUnknown", err)
		}
		if n := g.posts.Load(); n != 1 {
			t.Errorf("the tools/call was POSTed %d times; want 1", n)
		}
	})
	t.Run("tools/call Repeatable", func(t *testing.T) {
		g, s := startGateway(t, "tools/call", 5, false, 503)
		c := dial(t, server{target: client.URL(s.URL)}, client.WithReconnectPolicy(fastPolicy))
		if _, err := c.CallTool(ctxT(t), "once", map[string]any{"key": "pay"}, client.AsReplayable()); err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		if n := g.posts.Load(); n != 6 {
			t.Errorf("the tools/call was POSTed %d times; want 6", n)
		}
	})
	t.Run("ping with WithReplay", func(t *testing.T) {
		g, s := startGateway(t, "ping", 5, false, 503)
		c := dial(t, server{target: client.URL(s.URL)}, client.WithReconnectPolicy(fastPolicy), client.WithReplay())
		if err := c.Call(ctxT(t), "ping", nil, nil); err != nil {
			t.Fatalf("ping: %v", err)
		}
		if n := g.posts.Load(); n != 6 {
			t.Errorf("ping was POSTed %d times; want 6", n)
		}
	})
	t.Run("ping without WithReplay", func(t *testing.T) {
		g, s := startGateway(t, "ping", 5, false, 503)
		c := dial(t, server{target: client.URL(s.URL)}, client.WithReconnectPolicy(fastPolicy))
		if err := c.Call(ctxT(t), "ping", nil, nil); !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Errorf("ping = %v; want an error matching ErrOutcomeUnknown", err)
		}
		if n := g.posts.Load(); n != 1 {
			t.Errorf("ping was POSTed %d times; want 1", n)
		}
	})
}

// The test server ends a session, or shuts down, while a tools/call it
// answers with JSON runs: it may not answer 404 or 503 (which say the
// request did not run, and would have the Conn send it again on a new
// session): it drops the connection. The call fails as outcome unknown and
// the tool ran once.
func TestCallRunningWhenTheServerEndsIsOutcomeUnknown(t *testing.T) {
	for _, end := range []string{"ExpireAll", "Close"} {
		t.Run(end, func(t *testing.T) {
			h := testservers.NewStreamableHandler(testservers.HTTPOptions{JSONResponse: true})
			t.Cleanup(h.Close)
			s := httptest.NewServer(h)
			t.Cleanup(s.Close)
			c := dialT(t, client.URL(s.URL), client.WithReconnectPolicy(fastPolicy)) // its Close may find the server gone
			ctx := ctxT(t)
			done := make(chan error, 1)
			go func() {
				// Cancelled by the session's end, the tool takes a while to
				// stop: the POST meets the session's end while its request
				// still runs, which must not read as "not run".
				_, err := c.CallTool(ctx, "once", map[string]any{"key": "pay", "delayMs": 60000, "lingerMs": 300})
				done <- err
			}()
			if _, err := h.Server().WaitStats(ctx, func(st testservers.Stats) bool { return st.Executions == 1 }); err != nil {
				t.Fatal(err)
			}
			if end == "ExpireAll" {
				if n := h.ExpireAll(); n != 1 {
					t.Fatalf("expired %d sessions; want 1", n)
				}
			} else {
				h.Close()
			}
			err := <-done
			if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Errorf("CallTool = %v; want an error matching ErrOutcomeUnknown", err)
			}
			if n := h.Server().Executed("pay"); n != 1 {
				t.Errorf("the tool ran %d times; want 1", n)
			}
		})
	}
}
