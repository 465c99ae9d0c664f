package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
)

// shutdownBound is the context Shutdown gets in these tests; shutdownSlack
// is what the tests allow on top, generous for a loaded machine and still
// well below the 2 s grace periods that Close waits out.
const (
	shutdownBound = 150 * time.Millisecond
	shutdownSlack = time.Second
)

// TestShutdownAfterCancelledCall: a call is cancelled, and the server
// keeps running its tool — over Streamable HTTP, where the session's
// DELETE blocks until the tool ends, and over stdio, where the server
// ignores stdin EOF and SIGTERM. Shutdown returns within its context, and
// (over HTTP, where the server can tell) notifications/cancelled reached
// the server first.
func TestShutdownAfterCancelledCall(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		h := testservers.NewStreamableHandler(testservers.HTTPOptions{})
		deletes := make(chan struct{}, 1)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete { // a server that ends the session after its tools
				deletes <- struct{}{}
				<-r.Context().Done()
				return
			}
			h.ServeHTTP(w, r)
		}))
		defer ts.Close()
		defer h.Close()
		conn, err := client.Dial(context.Background(), client.URL(ts.URL))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			h.Server().WaitStats(ctx, func(s testservers.Stats) bool { return s.ToolCalls["slow"] > 0 }) //nolint:errcheck
			cancel()
		}()
		_, err = conn.CallTool(ctx, "slow", map[string]int{"steps": 1, "delayMs": 60_000})
		if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Fatalf("the cancelled call: %v, want outcome unknown", err)
		}
		took := shutdownWithin(t, conn)
		wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer wcancel()
		if _, err := h.Server().WaitStats(wctx, func(s testservers.Stats) bool { return s.Cancelled == 1 }); err != nil {
			t.Errorf("the server saw no notifications/cancelled (Shutdown took %v)", took)
		}
		select {
		case <-deletes:
		default:
			t.Error("no DELETE was sent")
		}
	})
	t.Run("stdio", func(t *testing.T) {
		path, args, _ := testservers.StdioCommand()
		env := testservers.StdioEnv(testservers.Options{Stdio: testservers.StdioFaults{IgnoreStdinEOF: true, IgnoreSIGTERM: true}})
		conn, err := client.Dial(context.Background(), client.Command(path, args...).WithEnv(append(env, "GORACE=atexit_sleep_ms=0")...))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if _, err := conn.CallTool(ctx, "slow", map[string]int{"steps": 1, "delayMs": 60_000}); !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Fatalf("the cancelled call: %v, want outcome unknown", err)
		}
		shutdownWithin(t, conn)
	})
}

// shutdownWithin shuts conn down with shutdownBound and fails unless it
// returned within shutdownBound + shutdownSlack.
func shutdownWithin(t *testing.T, conn *client.Conn) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), shutdownBound)
	defer cancel()
	start := time.Now()
	conn.Shutdown(ctx) //nolint:errcheck // a hurried shutdown may report the abandoned DELETE or the killed process
	took := time.Since(start)
	if took > shutdownBound+shutdownSlack {
		t.Errorf("Shutdown took %v, want at most %v", took, shutdownBound+shutdownSlack)
	}
	select {
	case <-conn.Done():
	default:
		t.Error("the Conn is not done after Shutdown")
	}
	return took
}
