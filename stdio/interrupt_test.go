//go:build linux

package stdio_test

import (
	"errors"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/stdio"
)

// TestInterruptRecv: InterruptRecv wakes a Recv waiting on a quiet server
// with jsonrpc.ErrInterrupted, once; the transport goes on, and a wake-up
// that finds a message waiting is used up by it. Supervised or not.
func TestInterruptRecv(t *testing.T) {
	for _, supervised := range []bool{false, true} {
		name := "plain"
		if supervised {
			name = "supervised"
		}
		t.Run(name, func(t *testing.T) {
			cmd := fakeCommand(t, modeEcho)
			if supervised {
				cmd.Restart = tinyPolicy()
			}
			tr := start(t, cmd)

			woken := make(chan error, 1)
			go func() { _, err := tr.Recv(); woken <- err }()
			tr.InterruptRecv()
			select {
			case err := <-woken:
				if !errors.Is(err, jsonrpc.ErrInterrupted) {
					t.Fatalf("woken Recv: %v, want ErrInterrupted", err)
				}
			case <-time.After(patience):
				t.Fatal("InterruptRecv did not wake the waiting Recv")
			}

			send(t, tr, request(1, "echo", `{}`))
			if m := mustRecv(t, tr); m.ID.Raw() != "1" {
				t.Fatalf("after the wake-up: id %s, want 1", m.ID)
			}

			// A message already waiting goes first, and uses the wake-up up.
			send(t, tr, request(2, "echo", `{}`))
			waitQueued(t, tr)
			tr.InterruptRecv()
			if m := mustRecv(t, tr); m.ID.Raw() != "2" {
				t.Fatalf("id %s, want 2", m.ID)
			}
			send(t, tr, request(3, "echo", `{}`))
			if m := mustRecv(t, tr); m.ID.Raw() != "3" {
				t.Fatalf("a used-up wake-up woke Recv again: id %s, want 3", m.ID)
			}
		})
	}
}

// waitQueued waits until the transport has read an answer off the
// server's stdout for Recv.
func waitQueued(t *testing.T, tr *stdio.Transport) {
	t.Helper()
	testkit.Eventually(t, patience, "an answer read for Recv", func() bool { return stdio.Queued(tr) > 0 })
}
