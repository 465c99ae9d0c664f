package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// TestURLSecretsNotShown: some servers take their credential in the URL
// (a password, or an api key in the query). The URL is the host's to use,
// not to show: no error, log line or negotiation report holds those
// values, on any transport, through faults, failed negotiations and calls.
func TestURLSecretsNotShown(t *testing.T) {
	const password, apiKey = "pa55-w0rd-in-url", "k3y-in-query-789"
	withSecrets := func(raw string) string {
		return strings.Replace(raw, "http://", "http://user:"+password+"@", 1) + "?api_key=" + apiKey
	}
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := []client.Option{
		client.WithLogger(logger),
		client.WithRequestTimeout(10 * time.Second),
		client.WithReconnectPolicy(reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond, MaxAttempts: 20}),
	}
	var shown []string // errors and reports

	faults := testservers.RandomFaults(11, 0.2)
	streamable := testservers.StartStreamable(testservers.HTTPOptions{Priming: true, Faults: faults})
	t.Cleanup(streamable.Close)
	modern := testservers.StartModern(testservers.HTTPOptions{})
	t.Cleanup(modern.Close)
	sse := testservers.StartLegacy(testservers.LegacyOptions{Faults: testservers.RandomFaults(12, 0.1)})
	t.Cleanup(sse.Close)
	for _, s := range []struct{ name, url string }{
		{"streamable", streamable.URL}, {"modern", modern.URL}, {"sse", sse.URL},
	} {
		c := dial(t, server{name: s.name, target: client.URL(withSecrets(s.url))}, opts...)
		report, err := json.Marshal(c.Info().Negotiation)
		if err != nil {
			t.Fatal(err)
		}
		shown = append(shown, string(report), fmt.Sprintf("%+v", *c.Info().Negotiation))
		for range 20 {
			if _, err := c.CallTool(ctxT(t), "echo", map[string]string{"text": "x"}); err != nil {
				shown = append(shown, err.Error())
			}
		}
		if _, err := c.CallTool(ctxT(t), "no-such-tool", nil); err != nil {
			shown = append(shown, err.Error())
		}
	}

	// A URL where nothing answers: every rung of the ladder fails, and the
	// error names each attempt.
	nothing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(nothing.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := client.Dial(ctx, client.URL(withSecrets(nothing.URL+"/mcp")), opts...); err == nil {
		c.Close()
		t.Fatal("Dial to a server that answers 404 to everything succeeded")
	} else {
		shown = append(shown, err.Error())
	}

	text := logs.String()
	if len(streamable.Server().Stats().Faults) == 0 || !strings.Contains(text, "level=DEBUG") || len(shown) < 8 {
		t.Fatalf("nothing to check: %d faults, %d bytes of logs, %d errors and reports",
			len(streamable.Server().Stats().Faults), len(text), len(shown))
	}
	if !strings.Contains(strings.Join(shown, "\n"), "api_key=") {
		t.Errorf("no error or report names the URL's query at all: %q", shown)
	}
	for _, secret := range []string{password, apiKey} {
		if strings.Contains(text, secret) {
			i := strings.Index(text, secret)
			t.Errorf("the logs hold %q: …%s…", secret, text[max(0, i-200):min(len(text), i+50)])
		}
		for _, s := range shown {
			if strings.Contains(s, secret) {
				t.Errorf("an error or report holds %q: %s", secret, s)
			}
		}
	}
}
