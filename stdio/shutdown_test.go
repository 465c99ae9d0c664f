//go:build linux

package stdio_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/stdio"
)

// TestShutdownBoundedByContext: Shutdown does what Close does, but once
// its context is done it waits no more, whatever the grace periods: a
// server that ignores stdin EOF, or SIGTERM too, is killed then. A server
// that exits by itself within the context is shut down cleanly.
func TestShutdownBoundedByContext(t *testing.T) {
	const bound = 150 * time.Millisecond
	tests := []struct {
		mode     string
		hurried  bool // the server outlives the context
		mayKill  bool // Shutdown may return an *ExitError for SIGKILL
		wantKill bool // Shutdown returns one; nil when neither
	}{
		{mode: modeEcho},
		// SIGTERM would end it, but SIGKILL follows at once and may
		// come first
		{mode: modeIgnoreStdinClose, hurried: true, mayKill: true},
		{mode: modeIgnoreSigterm, hurried: true, wantKill: true}, // only SIGKILL ends it
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			cmd := fakeCommand(t, tt.mode)
			cmd.StdinCloseWait, cmd.TermWait = patience, patience // Close alone would take 10 s or more
			tr := start(t, cmd)
			pid := tr.Pid()
			send(t, tr, request(1, "echo", `{}`)) // the server is up and past signal setup
			mustRecv(t, tr)

			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			begin := time.Now()
			err := tr.Shutdown(ctx)
			took := time.Since(begin)
			if limit := bound + 2*time.Second; took > limit { // generous: far below the grace periods
				t.Errorf("Shutdown took %v, want at most %v", took, limit)
			}
			if tt.hurried && took < bound {
				t.Errorf("Shutdown took %v: it gave up on the grace period before its context ended (%v)", took, bound)
			}
			var ee *stdio.ExitError
			killed := errors.As(err, &ee) && ee.Signal == "SIGKILL"
			switch {
			case tt.wantKill && !killed:
				t.Errorf("Shutdown: %v, want an *ExitError for SIGKILL", err)
			case !tt.wantKill && err != nil && !(tt.mayKill && killed):
				t.Errorf("Shutdown: %v, want nil", err)
			}
			assertReaped(t, pid)
			if err2 := tr.Close(); err2 != err {
				t.Errorf("Close after Shutdown: %v, want %v", err2, err)
			}
			if _, err := tr.Recv(); !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Recv after Shutdown: %v, want ErrClosed", err)
			}
		})
	}
}

// TestShutdownDoneContext: with a context already done, Shutdown still
// closes stdin first (the server sees what was written, and EOF) and then
// stops the server at once.
func TestShutdownDoneContext(t *testing.T) {
	cmd := fakeCommand(t, modeIgnoreSigterm)
	cmd.StdinCloseWait, cmd.TermWait = patience, patience
	tr := start(t, cmd)
	pid := tr.Pid()
	send(t, tr, request(1, "echo", `{}`))
	mustRecv(t, tr)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	begin := time.Now()
	err := tr.Shutdown(ctx)
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("Shutdown with a done context took %v", took)
	}
	var ee *stdio.ExitError
	if !errors.As(err, &ee) || ee.Signal != "SIGKILL" {
		t.Errorf("Shutdown: %v, want an *ExitError for SIGKILL", err)
	}
	assertReaped(t, pid)
}

// TestShutdownSupervised: under supervision, Shutdown bounds the shutdown
// of the current process the same way.
func TestShutdownSupervised(t *testing.T) {
	cmd := fakeCommand(t, modeIgnoreSigterm)
	cmd.StdinCloseWait, cmd.TermWait = patience, patience
	cmd.Restart = tinyPolicy()
	tr := start(t, cmd)
	pid := tr.Pid()
	send(t, tr, request(1, "echo", `{}`))
	mustRecv(t, tr)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	tr.Shutdown(ctx)
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("Shutdown took %v", took)
	}
	assertReaped(t, pid)
}
