package client_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/redirecttest"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// syncBuffer is a bytes.Buffer for a slog handler written from many
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogsHoldNoCredentials: the library logs every retry, resumption,
// re-initialization and refused redirect, at debug level and up, and none
// of those lines, nor any error a call returns, holds the credentials the
// host set as headers.
func TestLogsHoldNoCredentials(t *testing.T) {
	const token, apiKey = "s3cr3t-bearer-token-value", "key-abc-123-xyz"
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := []client.Option{
		client.WithHeader("Authorization", "Bearer "+token),
		client.WithHeader("X-Api-Key", apiKey),
		client.WithLogger(logger),
		client.WithRequestTimeout(10 * time.Second),
		client.WithReconnectPolicy(reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond, MaxAttempts: 20}),
	}
	var errs []string

	// A server that fails a fifth of everything: 429, 503, expired
	// sessions, cut streams.
	srv := testservers.StartStreamable(testservers.HTTPOptions{Priming: true, Faults: testservers.RandomFaults(7, 0.2)})
	t.Cleanup(srv.Close)
	c := dial(t, server{name: "faulty", target: client.URL(srv.URL)}, opts...)
	for range 40 {
		if _, err := c.CallTool(ctxT(t), "echo", map[string]string{"text": "x"}); err != nil {
			errs = append(errs, err.Error())
		}
	}

	// A server that redirects its initialize to another origin.
	for _, rc := range redirecttest.Cases()[:2] {
		var h *redirecttest.Server
		h = redirecttest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Redirect(w, rc, "/mcp") }))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, err := client.Dial(ctx, client.URL(h.URL+"/mcp"), opts...)
		cancel()
		if err == nil {
			conn.Close()
			t.Fatal("Dial through a cross-origin redirect succeeded")
		}
		errs = append(errs, err.Error())
		h.Untouched(t)
	}

	text := logs.String()
	if faults := srv.Server().Stats().Faults; len(faults) == 0 || !strings.Contains(text, "level=INFO") {
		t.Fatalf("nothing to check: faults %v, %d bytes of logs", faults, len(text))
	}
	for _, secret := range []string{token, apiKey} {
		if strings.Contains(text, secret) {
			t.Errorf("the logs hold %q", secret)
		}
		for _, e := range errs {
			if strings.Contains(e, secret) {
				t.Errorf("an error holds %q: %s", secret, e)
			}
		}
	}
}
