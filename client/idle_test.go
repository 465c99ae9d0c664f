package client_test

import (
	"context"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/testkit"
)

// ownGoroutines returns, for every goroutine the library started (not the
// test servers', not the tests'), the function it started with, sorted.
func ownGoroutines() []string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	var own []string
	for g := range strings.SplitSeq(b.String(), "\n\n") {
		if strings.Contains(g, "testing.") || strings.Contains(g, "/testservers.") {
			continue
		}
		first := ""
		for line := range strings.Lines(g) {
			fn, _, _ := strings.Cut(strings.TrimSpace(line), "(0x")
			if strings.HasPrefix(fn, "github.com/anymcp/anymcp/") {
				first = strings.TrimPrefix(fn, "github.com/anymcp/anymcp/")
			}
		}
		if first != "" {
			own = append(own, first)
		}
	}
	slices.Sort(own)
	return own
}

// TestIdleConnGoroutines: a connected Conn that has made a call and waits
// keeps one goroutine of its own, its read loop, over Streamable HTTP (no
// GET stream: nothing listens) in both eras, and over HTTP+SSE besides the
// stream's reader. The negotiation's reader and the handler queue's
// goroutine are gone.
func TestIdleConnGoroutines(t *testing.T) {
	// What the library runs besides: the HTTP+SSE stream's reader.
	besides := map[string][]string{"legacy": {"legacy.(*Transport).run"}}
	for _, tc := range idleServers {
		t.Run(tc.name, func(t *testing.T) {
			url, stop := tc.start()
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := client.Dial(ctx, client.URL(url), client.OnStateChange(func(from, to client.State) {}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
				t.Fatal(err)
			}
			want := append([]string{"client.(*Conn).readLoop"}, besides[tc.name]...)
			slices.Sort(want)
			// The call's goroutines end a moment after it returns.
			testkit.Eventually(t, 5*time.Second, "an idle Conn to run only "+strings.Join(want, ", "), func() bool {
				return slices.Equal(ownGoroutines(), want)
			})
		})
	}
}
