//go:build linux

package stdio_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/stdio"
)

// Tests of the process's life: its end, reported by Recv, Send and Close,
// and the shutdown that Close runs.

func TestServerExitReportsStatusAndStderr(t *testing.T) {
	tr := start(t, fakeCommand(t, modeCrash, "STDIO_TEST_N=2"))
	pid := tr.Pid()
	send(t, tr, request(1, "echo", `{}`))
	send(t, tr, request(2, "echo", `{}`))
	for _, id := range []string{"1", "2"} {
		if m := mustRecv(t, tr); m.ID.Raw() != id {
			t.Fatalf("got id %s, want %s", m.ID, id)
		}
	}
	_, err := recv(t, tr)
	var ee *stdio.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Recv: %v, want *ExitError", err)
	}
	if ee.ExitCode != 3 || ee.Signal != "" || ee.Pid != pid {
		t.Errorf("ExitError %+v, want status 3", ee)
	}
	if !strings.Contains(ee.Stderr, "the last words of the server") {
		t.Errorf("stderr tail %q lacks the last words", ee.Stderr)
	}
	msg := ee.Error()
	if !strings.HasPrefix(msg, "server process exited with status 3") || !strings.Contains(msg, "the last words") {
		t.Errorf("Error() = %q", msg)
	}
	// The process is gone; Recv keeps saying so, Send says the same.
	if _, err2 := recv(t, tr); err2 != err {
		t.Errorf("second Recv: %v, want the same error", err2)
	}
	if err := tr.Send(context.Background(), request(3, "echo", `{}`)); !errors.As(err, &ee) {
		t.Errorf("Send after exit: %v, want *ExitError", err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("Close after the server exited: %v, want nil", err)
	}
	if _, err := tr.Recv(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Recv after Close: %v, want ErrClosed", err)
	}
	assertReaped(t, pid)
}

func TestSendToDeadServer(t *testing.T) {
	// Sending into a pipe whose reader died must return the exit error:
	// no hang and no SIGPIPE for the client.
	tr := start(t, fakeCommand(t, modeCrash, "STDIO_TEST_N=1"))
	send(t, tr, request(1, "echo", `{}`))
	deadline := time.Now().Add(patience)
	for i := int64(2); ; i++ {
		err := tr.Send(context.Background(), request(i, "echo", `"`+strings.Repeat("d", 8<<10)+`"`))
		if err != nil {
			var ee *stdio.ExitError
			if !errors.As(err, &ee) || ee.ExitCode != 3 {
				t.Fatalf("Send to a dead server: %v, want *ExitError with status 3", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Send kept succeeding after the server died")
		}
	}
}

func TestServerClosesStdout(t *testing.T) {
	cmd := fakeCommand(t, modeStdoutClose)
	tr := start(t, cmd)
	send(t, tr, request(1, "echo", `{}`))
	mustRecv(t, tr)
	_, err := recv(t, tr)
	var ee *stdio.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 0 || ee.Signal != "" {
		t.Fatalf("Recv after stdout closed: %v, want *ExitError with status 0 (stdin closed, server exited)", err)
	}
}

func TestAllMessagesBeforeExit(t *testing.T) {
	// More messages than the queue holds, and a reader that comes late:
	// none may be lost when the server exits.
	tr := start(t, fakeCommand(t, modeFloodExit))
	select {
	case <-stdio.Exited(tr):
	case <-time.After(patience):
		t.Fatal("the flooding server never exited")
	}
	// The server is gone while its messages wait for Recv: Send reports
	// the exit at once, without waiting for them to be received.
	var ee *stdio.ExitError
	if err := tr.Send(context.Background(), request(1, "echo", `{}`)); !errors.As(err, &ee) {
		t.Fatalf("Send: %v, want *ExitError", err)
	}
	for i := range floodCount {
		m := mustRecv(t, tr)
		if want := fmt.Sprintf(`{"n":%d}`, i); string(m.Params) != want {
			t.Fatalf("message %d has params %s, want %s", i, m.Params, want)
		}
	}
	_, err := recv(t, tr)
	if !errors.As(err, &ee) || ee.ExitCode != 0 {
		t.Fatalf("Recv after the last message: %v, want *ExitError status 0", err)
	}
}

func TestCloseEscalation(t *testing.T) {
	tests := []struct {
		mode           string
		stdinWait      time.Duration
		termWait       time.Duration
		minTook        time.Duration
		maxTook        time.Duration
		wantSignal     string // of the *ExitError Close returns; "" = nil
		wantExitStatus int    // likewise, when no signal
	}{
		{mode: modeEcho, stdinWait: 5 * time.Second, termWait: 5 * time.Second, maxTook: 2 * time.Second},
		{mode: modeIgnoreStdinClose, stdinWait: 300 * time.Millisecond, termWait: 5 * time.Second,
			minTook: 300 * time.Millisecond, maxTook: 3 * time.Second},
		{mode: modeIgnoreSigterm, stdinWait: 200 * time.Millisecond, termWait: 300 * time.Millisecond,
			minTook: 500 * time.Millisecond, maxTook: 3 * time.Second, wantSignal: "SIGKILL"},
		{mode: modeFailOnEOF, stdinWait: 5 * time.Second, termWait: 5 * time.Second,
			maxTook: 2 * time.Second, wantExitStatus: 7},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			cmd := fakeCommand(t, tt.mode)
			cmd.StdinCloseWait, cmd.TermWait = tt.stdinWait, tt.termWait
			tr := start(t, cmd)
			pid := tr.Pid()
			send(t, tr, request(1, "echo", `{}`)) // the server is up and past signal setup
			mustRecv(t, tr)

			err, took := closeWithin(t, tr, tt.maxTook)
			if took < tt.minTook {
				t.Errorf("Close took %v, want at least %v", took, tt.minTook)
			}
			var ee *stdio.ExitError
			switch {
			case tt.wantSignal == "" && tt.wantExitStatus == 0:
				if err != nil {
					t.Errorf("Close: %v, want nil", err)
				}
			case !errors.As(err, &ee):
				t.Errorf("Close: %v, want *ExitError", err)
			case ee.Signal != tt.wantSignal || (tt.wantSignal == "" && ee.ExitCode != tt.wantExitStatus):
				t.Errorf("Close: %+v, want signal %q status %d", ee, tt.wantSignal, tt.wantExitStatus)
			}
			assertReaped(t, pid)

			// Closed is closed, for everyone and every time.
			if err2 := tr.Close(); err2 != err {
				t.Errorf("second Close: %v, want %v", err2, err)
			}
			if _, err := tr.Recv(); !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Recv after Close: %v, want ErrClosed", err)
			}
			if err := tr.Send(context.Background(), request(2, "echo", `{}`)); !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Send after Close: %v, want ErrClosed", err)
			}
		})
	}
}

func TestCloseConcurrentlyUnblocksRecv(t *testing.T) {
	tr := start(t, fakeCommand(t, modeEcho))
	recvErr := make(chan error, 1)
	go func() {
		_, err := tr.Recv()
		recvErr <- err
	}()
	waitRecvWaits(t, tr)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = tr.Close() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Close #%d: %v", i, err)
		}
	}
	select {
	case err := <-recvErr:
		if !errors.Is(err, jsonrpc.ErrClosed) {
			t.Errorf("blocked Recv returned %v, want ErrClosed", err)
		}
	case <-time.After(patience):
		t.Fatal("Recv still blocked after Close")
	}
}

func TestCloseKillsGrandchildren(t *testing.T) {
	cmd := fakeCommand(t, modeGrandchild)
	cmd.TermWait = time.Second
	tr := start(t, cmd)
	pid, gpid := pids(t, tr)
	if pgid, _ := syscall.Getpgid(gpid); pgid != pid {
		t.Fatalf("grandchild in group %d, want %d", pgid, pid)
	}
	if err, _ := closeWithin(t, tr, 3*time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertReaped(t, pid)
	waitDead(t, gpid)
}

func TestGroupStoppedWhenServerExitsAlone(t *testing.T) {
	// The server exits but its child keeps stdout open: the transport must
	// still see the end, and stop the child, without Close.
	cmd := fakeCommand(t, modeOrphan)
	cmd.TermWait = time.Second
	tr := start(t, cmd)
	pid, gpid := pids(t, tr)
	_, err := recv(t, tr)
	var ee *stdio.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 0 {
		t.Fatalf("Recv: %v, want *ExitError status 0", err)
	}
	waitDead(t, gpid)
	if err := tr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertReaped(t, pid)
}

func TestEscapedHolderOfStdoutDoesNotHangClose(t *testing.T) {
	// A child that left the group and session holds stdout and stderr
	// open; the transport cannot kill it and must not wait for it.
	tr := start(t, fakeCommand(t, modeEscaped))
	pid, gpid := pids(t, tr)
	t.Cleanup(func() {
		syscall.Kill(gpid, syscall.SIGKILL)
		waitDead(t, gpid)
	})
	if err, _ := closeWithin(t, tr, 3*time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertReaped(t, pid)
}
