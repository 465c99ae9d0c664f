package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/internal/redirecttest"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// TestLogsHoldNoCredentials: the library logs every retry, resumption,
// re-initialization and refused redirect, at debug level and up, and none
// of those lines, nor any error a call returns, holds the credentials the
// host set as headers.
func TestLogsHoldNoCredentials(t *testing.T) {
	const token, apiKey = "s3cr3t-bearer-token-value", "key-abc-123-xyz"
	var logs logtest.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := []client.Option{
		client.WithHeader("Authorization", "Bearer "+token),
		client.WithHeader("X-Api-Key", apiKey),
		client.WithLogger(logger),
		client.WithDefaultTimeout(10 * time.Second),
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

// TestEchoedCredentialsHidden: a server whose errors echo the request it
// got (its headers, as a debugging proxy or a framework's error page
// does) does not put the host's credentials into the errors Dial and calls
// return, nor into the log: over Streamable HTTP (a plain body and a
// JSON-RPC error body) and HTTP+SSE.
func TestEchoedCredentialsHidden(t *testing.T) {
	const token, apiKey = "s3cr3t-bearer-token-value", "key-abc-123-xyz"
	echo := func(r *http.Request) string {
		var b strings.Builder
		for name, vs := range r.Header {
			b.WriteString(name + ": " + strings.Join(vs, ",") + "; ")
		}
		return b.String()
	}
	servers := map[string]http.HandlerFunc{
		"streamable-http, plain body": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "rejected: "+echo(r), http.StatusInternalServerError)
		},
		"streamable-http, JSON-RPC error": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			msg, _ := json.Marshal("rejected: " + echo(r))
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":%s}}`, msg)
		},
		"http+sse": func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				http.Error(w, "rejected: "+echo(r), http.StatusForbidden)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /message?sessionId=s1\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
	}
	for name, h := range servers {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			var logs logtest.Buffer
			policy := negotiate.StreamableOnly
			if strings.HasPrefix(name, "http+sse") {
				policy = negotiate.SSEOnly
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := client.Dial(ctx, client.URL(srv.URL+"/mcp"),
				client.WithHeader("Authorization", "Bearer "+token),
				client.WithHeader("X-Api-Key", apiKey),
				client.WithTransportPolicy(policy),
				client.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			if err == nil {
				conn.Close()
				t.Fatal("Dial succeeded")
			}
			if !strings.Contains(err.Error(), "rejected") {
				t.Fatalf("the error does not carry the server's answer: %v", err)
			}
			for _, secret := range []string{token, apiKey} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows %s: %v", secret, err)
				}
				if strings.Contains(logs.String(), secret) {
					t.Errorf("the log shows %s", secret)
				}
			}
		})
	}
}
