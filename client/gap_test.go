package client

import (
	"slices"
	"testing"
	"time"

	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// TestGETStreamGapMakesListsStale: the GET stream of a 2025 session whose
// events carry no ids breaks and opens again. It cannot be resumed, so
// what the server announced meanwhile is lost: the Conn takes every list
// the server announces changes of, and every resource subscribed to, as
// changed — the handlers are called, and no tool is safe to repeat on the
// word of the listing from before.
func TestGETStreamGapMakesListsStale(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{}) // no Priming: no event ids
	t.Cleanup(srv.Close)
	got := make(chan string, 16)
	c := dialExpiry(t, srv,
		WithReconnectPolicy(reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}),
		OnToolsChanged(func() { got <- "tools" }),
		OnPromptsChanged(func() { got <- "prompts" }),
		OnResourcesChanged(func() { got <- "resources" }),
		OnResourceUpdated(func(uri string) { got <- "updated " + uri }))
	ctx := testCtx(t)
	if err := c.Subscribe(ctx, testservers.StaticTextURI); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AllTools(ctx); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	safe := c.tools.safe("echo") // readOnlyHint
	c.mu.Unlock()
	if !safe {
		t.Fatal("echo is read-only, and not taken as safe to repeat")
	}

	for srv.DropStreams(0) == 0 { // until the GET stream is open; then it breaks
		select {
		case <-ctx.Done():
			t.Fatal("the GET stream never opened")
		case <-time.After(time.Millisecond):
		}
	}
	want := []string{"prompts", "resources", "tools", "updated " + testservers.StaticTextURI}
	var seen []string
	for len(seen) < len(want) {
		select {
		case k := <-got:
			seen = append(seen, k)
		case <-ctx.Done():
			t.Fatalf("after the GET stream opened again, only %v of %v", seen, want)
		}
	}
	slices.Sort(seen)
	if !slices.Equal(seen, want) {
		t.Errorf("handlers called for %v, want %v", seen, want)
	}
	c.mu.Lock()
	safe = c.tools.safe("echo")
	c.mu.Unlock()
	if safe {
		t.Error("echo is still safe to repeat on the word of the listing from before the gap")
	}
}
