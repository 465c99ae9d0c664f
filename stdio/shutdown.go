package stdio

import (
	"log/slog"
	"time"
)

// drainTick is how often the shutdown checks on the stdout and stderr
// readers. A Read that stays blocked for a whole tick after the server and
// its group are gone waits on a pipe that some escaped process holds open;
// the shutdown then stops waiting for its EOF.
const drainTick = 250 * time.Millisecond

// supervise is the goroutine that owns the end of the transport. It waits
// for the first sign of the end (Close, stdout closed or unusable, stdin
// broken, the process exited), stops the process and its group, waits for
// the readers, and publishes the errors that Send, Recv and Close return.
func (t *Transport) supervise() {
	byOwner, byStdout := false, false
	select {
	case <-t.closeCh:
		byOwner = true
	case <-t.stdoutDone:
		byStdout = true
	case <-t.brokeCh:
	case <-t.exited:
	}
	if byOwner {
		// A server that was already dead when Close came did not fail
		// to shut down; Recv has its exit to report.
		select {
		case <-t.exited:
			byOwner = false
		default:
		}
	}
	t.stopping.Store(true)
	if byStdout {
		// Nobody reads stdout any more (it ended, or its reader gave up
		// on an oversize line): let the server's writes fail, not block.
		t.stdout.Close()
	}

	forced, termSent := t.stopProcess()
	t.stopGroup()

	t.awaitReaders()
	t.stdout.Close()
	t.stderr.Close()

	// Writers fail fast once stdin is closed; holding the write lock for
	// good makes sure none is left, the background one included.
	t.wlock <- struct{}{}

	t.recvErr = t.cause
	if t.readErr != nil {
		t.recvErr = t.readErr
	}
	if byOwner {
		code, _ := exitStatus(t.state)
		if forced || (!termSent && code != 0) {
			t.closeErr = t.exitError()
		}
	}
	close(t.msgs)
	close(t.done)
}

// stopProcess ends the server if it is still running: close stdin, wait,
// SIGTERM the group, wait, SIGKILL the group (once Shutdown's context is
// done, the waits end at once). It returns once the server is reaped,
// telling whether SIGKILL ended it and whether SIGTERM was sent.
func (t *Transport) stopProcess() (forced, termSent bool) {
	t.stdin.Close()
	if t.waitExit(t.stdinCloseWait) {
		return false, false
	}
	t.log.Debug("stdio: server still running after stdin closed; sending SIGTERM", slog.Int("pid", t.pid))
	terminateGroup(t.cmd.Process)
	if t.waitExit(t.termWait) {
		return false, true
	}
	if t.hurried() {
		t.log.Debug("stdio: shutdown out of time; sending SIGKILL", slog.Int("pid", t.pid))
	} else {
		t.log.Warn("stdio: server still running after SIGTERM; sending SIGKILL", slog.Int("pid", t.pid))
	}
	killGroup(t.cmd.Process)
	<-t.exited
	_, sig := exitStatus(t.state)
	return sig == "SIGKILL", true // a server hurried along may have ended on SIGTERM after all
}

// waitExit waits up to d for the server to be reaped, or less when
// Shutdown's context ends first.
func (t *Transport) waitExit(d time.Duration) bool {
	select {
	case <-t.exited:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.exited:
		return true
	case <-timer.C:
		return false
	case <-t.hurry:
		return false
	}
}

// hurried reports whether Shutdown's context has ended.
func (t *Transport) hurried() bool {
	select {
	case <-t.hurry:
		return true
	default:
		return false
	}
}

// stopGroup ends what the server left behind in its process group once it
// has exited itself: SIGTERM, up to TermWait for the group to go, SIGKILL.
func (t *Transport) stopGroup() {
	if !groupAlive(t.pid) {
		return
	}
	t.log.Debug("stdio: server exited but left processes in its group; sending SIGTERM", slog.Int("pgid", t.pid))
	terminateGroup(t.cmd.Process)
	deadline := time.Now().Add(t.termWait)
	for pause := time.Millisecond; groupAlive(t.pid); pause = min(2*pause, 50*time.Millisecond) {
		if time.Now().After(deadline) || t.hurried() {
			t.log.Warn("stdio: processes left by the server survived SIGTERM; sending SIGKILL", slog.Int("pgid", t.pid))
			killGroup(t.cmd.Process)
			return
		}
		time.Sleep(pause)
	}
}

// awaitReaders waits for stdout and stderr to end. Once stderr is drained,
// the exit error is complete and t.stopped is closed. A reader blocked in
// one Read for a whole drainTick is cut short with a read deadline. The
// stdout reader may also be waiting for Recv to take a message; that wait
// is not cut: the messages are delivered, or dropped by Close.
//
// The cause (for Send) is the exit error, or the stdout failure (an
// oversize line) when there is one, since that is what ends the process.
func (t *Transport) awaitReaders() {
	ticker := time.NewTicker(drainTick)
	defer ticker.Stop()
	outDone, errDone := t.stdoutDone, t.stderrDone
	var outSeen, errSeen uint64 // the Read seen in progress at the last tick
	for outDone != nil || errDone != nil {
		select {
		case <-outDone:
			outDone = nil
		case <-errDone:
			errDone = nil
			t.cause = t.exitError()
			select {
			case <-t.stdoutDone:
				if t.readErr != nil {
					t.cause = t.readErr
				}
			default:
			}
			close(t.stopped)
		case <-ticker.C:
			if outDone != nil && stuck(t.outSeq.Load(), &outSeen) {
				t.escaped("stdout")
				_ = t.stdout.SetReadDeadline(time.Unix(1, 0))
			}
			if errDone != nil && stuck(t.errSeq.Load(), &errSeen) {
				t.escaped("stderr")
				_ = t.stderr.SetReadDeadline(time.Unix(1, 0))
			}
		}
	}
}

// escaped logs that a process outside the server's process group (one
// that left it with setsid, or was handed the pipe) still holds the
// server's pipe open after the server and its group are gone: the
// transport cannot signal it, and stops waiting for the pipe's end.
func (t *Transport) escaped(pipe string) {
	t.log.Warn("stdio: a process outside the server's group still holds its "+pipe+" open; not waiting for it (it may outlive the transport)",
		slog.Int("pid", t.pid))
}

// stuck reports whether the same Read (an odd sequence number) is in
// progress now as at the previous tick.
func stuck(seq uint64, seen *uint64) bool {
	if seq%2 == 1 && seq == *seen {
		return true
	}
	*seen = seq
	return false
}

// exitError describes how the process ended, with the stderr tail.
func (t *Transport) exitError() *ExitError {
	code, sig := exitStatus(t.state)
	return &ExitError{Pid: t.pid, ExitCode: code, Signal: sig, Stderr: t.tail.String()}
}
