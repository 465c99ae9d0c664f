//go:build linux

package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/stdio"
)

// Tests of supervision (Command.Restart).

// tinyPolicy restarts fast and without jitter, so waits are exact.
func tinyPolicy() *reconnect.Policy {
	return &reconnect.Policy{InitialDelay: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond, Jitter: -1}
}

// jsonLog returns a logger that writes JSON records to buf.
func jsonLog(buf *logtest.Buffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// logRecords returns the records of buf whose message is msg.
func logRecords(t *testing.T, buf *logtest.Buffer, msg string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for line := range strings.Lines(buf.String()) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r["msg"] == msg {
			recs = append(recs, r)
		}
	}
	return recs
}

// startsFile returns a file name for STDIO_TEST_STARTS and a function that
// reads the pids recorded in it.
func startsFile(t *testing.T) (env string, read func() []int) {
	name := filepath.Join(t.TempDir(), "starts")
	return "STDIO_TEST_STARTS=" + name, func() []int {
		t.Helper()
		f, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var pids []int
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			pid, err := strconv.Atoi(sc.Text())
			if err != nil {
				t.Fatalf("starts file line %q", sc.Text())
			}
			pids = append(pids, pid)
		}
		return pids
	}
}

// initialize sends an initialize request and returns the fake server's
// answer: its pid and how many messages it had seen before.
func initialize(t *testing.T, tr *stdio.Transport, id int64) (pid, seen int) {
	t.Helper()
	send(t, tr, request(id, "initialize", `{}`))
	m := mustRecv(t, tr)
	if m.ID.Raw() != strconv.FormatInt(id, 10) {
		t.Fatalf("answer to initialize has id %s, want %d", m.ID, id)
	}
	var r struct{ Pid, Seen int }
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("initialize result %s: %v", m.Result, err)
	}
	return r.Pid, r.Seen
}

// sessionLost checks that err is a *jsonrpc.SessionLostError caused by the
// exit of a server with status code, and returns that *ExitError.
func sessionLost(t *testing.T, err error, code int) *stdio.ExitError {
	t.Helper()
	var sl *jsonrpc.SessionLostError
	if !errors.As(err, &sl) || !errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Fatalf("Recv: %v, want *jsonrpc.SessionLostError", err)
	}
	ee, ok := sl.Cause.(*stdio.ExitError)
	if !ok {
		t.Fatalf("SessionLostError cause %T (%v), want *stdio.ExitError", sl.Cause, sl.Cause)
	}
	if ee.ExitCode != code || ee.Signal != "" {
		t.Fatalf("exit %+v, want status %d", ee, code)
	}
	return ee
}

func TestSupervisedRestartAfterCrash(t *testing.T) {
	var logs logtest.Buffer
	cmd := fakeCommand(t, modeCrash, "STDIO_TEST_N=2")
	cmd.Restart = tinyPolicy()
	cmd.Logger = jsonLog(&logs)
	tr := start(t, cmd)
	pid1 := tr.Pid()

	send(t, tr, request(1, "echo", `{}`))
	send(t, tr, request(2, "echo", `{}`))
	for _, id := range []string{"1", "2"} {
		if m := mustRecv(t, tr); m.ID.Raw() != id {
			t.Fatalf("got id %s, want %s", m.ID, id)
		}
	}
	_, err := recv(t, tr)
	ee := sessionLost(t, err, 3)
	if ee.Pid != pid1 || !strings.Contains(ee.Stderr, "the last words of the server") {
		t.Errorf("exit %+v, want pid %d and the last words in the stderr tail", ee, pid1)
	}

	// Until initialize, nothing else goes through, requests or not.
	for _, m := range []*jsonrpc.Message{
		request(3, "tools/list", ""),
		{Method: "notifications/initialized"},
		{ID: jsonrpc.Int(7), Result: json.RawMessage(`{}`)},
	} {
		err := tr.Send(context.Background(), m)
		var sent *stdio.ExitError
		if !errors.Is(err, jsonrpc.ErrSessionExpired) || !errors.Is(err, jsonrpc.ErrNotSent) || !errors.As(err, &sent) || sent.ExitCode != 3 {
			t.Errorf("Send(%q) after the crash: %v, want ErrSessionExpired wrapping the exit", m.Method, err)
		}
	}

	pid2, seen := initialize(t, tr, 4)
	if pid2 == pid1 || pid2 != tr.Pid() {
		t.Errorf("initialize answered by pid %d; first pid %d, Pid() %d", pid2, pid1, tr.Pid())
	}
	if seen != 0 {
		t.Errorf("the new server saw %d messages before initialize, want 0", seen)
	}
	if n := tr.Restarts(); n != 1 {
		t.Errorf("Restarts() = %d, want 1", n)
	}
	// The session is back: everything goes through again.
	send(t, tr, &jsonrpc.Message{Method: "notifications/initialized"})

	recs := logRecords(t, &logs, "stdio: server process died; restarting it")
	if len(recs) != 1 {
		t.Fatalf("%d restart records, want 1; log:\n%s", len(recs), logs.String())
	}
	r := recs[0]
	if r["level"] != "WARN" || r["status"] != "exited with status 3" || r["attempt"] != 1.0 ||
		r["wait"] != float64(10*time.Millisecond) || r["pid"] != float64(pid1) {
		t.Errorf("restart record %v", r)
	}

	if err, _ := closeWithin(t, tr, 3*time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertReaped(t, pid1)
	assertReaped(t, pid2)
	if _, err := tr.Recv(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Recv after Close: %v, want ErrClosed", err)
	}
	if err := tr.Send(context.Background(), request(5, "initialize", `{}`)); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Send after Close: %v, want ErrClosed", err)
	}
}

func TestSupervisedCrashLoopFollowsBackoff(t *testing.T) {
	var logs logtest.Buffer
	env, starts := startsFile(t)
	cmd := fakeCommand(t, modeCrashAtStart, env)
	cmd.Restart = &reconnect.Policy{InitialDelay: 20 * time.Millisecond, Multiplier: 2, MaxDelay: time.Second, Jitter: -1, MaxAttempts: 3}
	cmd.Logger = jsonLog(&logs)
	begin := time.Now()
	tr := start(t, cmd)

	var deaths []int
	var err error
	for {
		_, err = recv(t, tr)
		var sl *jsonrpc.SessionLostError
		if !errors.As(err, &sl) {
			break
		}
		ee := sessionLost(t, err, 3)
		if want := fmt.Sprintf("crashed at start, pid %d", ee.Pid); !strings.Contains(ee.Stderr, want) {
			t.Errorf("stderr tail %q, want %q", ee.Stderr, want)
		}
		deaths = append(deaths, ee.Pid)
		if len(deaths) > 10 {
			t.Fatal("the restarts do not stop")
		}
	}
	took := time.Since(begin)

	var re *stdio.RestartsExhaustedError
	if !errors.As(err, &re) {
		t.Fatalf("Recv: %v, want *RestartsExhaustedError", err)
	}
	var ee *stdio.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 3 || ee.Pid != tr.Pid() ||
		!strings.Contains(ee.Stderr, fmt.Sprintf("pid %d", tr.Pid())) {
		t.Errorf("terminal error's exit %+v, want the last process's (pid %d)", ee, tr.Pid())
	}
	if re.Attempts != 3 || re.Restarts != 3 || re.StartErr != nil {
		t.Errorf("RestartsExhaustedError %+v, want 3 attempts, 3 restarts", re)
	}
	if msg := err.Error(); !strings.Contains(msg, "restarts exhausted") || !strings.Contains(msg, "after 3 restart attempts") ||
		!strings.Contains(msg, "status 3") {
		t.Errorf("Error() = %q", msg)
	}
	if len(deaths) != 3 {
		t.Errorf("%d SessionLostErrors before the end, want 3", len(deaths))
	}
	if n := tr.Restarts(); n != 3 {
		t.Errorf("Restarts() = %d, want 3", n)
	}
	// Waits of 20, 40 and 80ms between the four processes.
	if min := 140 * time.Millisecond; took < min {
		t.Errorf("four starts took %v, want at least %v of backoff", took, min)
	}
	recs := logRecords(t, &logs, "stdio: server process died; restarting it")
	if len(recs) != 3 {
		t.Fatalf("%d restart records, want 3; log:\n%s", len(recs), logs.String())
	}
	for i, r := range recs {
		wantWait := float64((20 << i) * time.Millisecond)
		if r["attempt"] != float64(i+1) || r["wait"] != wantWait || r["status"] != "exited with status 3" {
			t.Errorf("restart record %d: %v, want attempt %d, wait %v", i, r, i+1, time.Duration(wantWait))
		}
	}
	if recs := logRecords(t, &logs, "stdio: server process died; giving up restarting it"); len(recs) != 1 {
		t.Errorf("%d give-up records, want 1", len(recs))
	}

	// Over for good: the same error, for Recv and Send, initialize too.
	if _, err2 := recv(t, tr); err2 != err {
		t.Errorf("Recv again: %v, want the same error", err2)
	}
	for _, method := range []string{"initialize", "tools/list"} {
		if err2 := tr.Send(context.Background(), request(1, method, `{}`)); err2 != err {
			t.Errorf("Send(%s): %v, want the terminal error", method, err2)
		}
	}
	supervisorDone(t, tr)
	pids := starts()
	if len(pids) != 4 {
		t.Errorf("%d processes started, want 4", len(pids))
	}
	for _, pid := range pids {
		assertReaped(t, pid)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSupervisedProgressStartsTheRunOver(t *testing.T) {
	// Each process writes its messages and exits 0. Having sent messages,
	// it made progress: one attempt allowed without progress is enough
	// for restart after restart. Each death comes after its messages.
	cmd := fakeCommand(t, modeFloodExit)
	cmd.Restart = &reconnect.Policy{InitialDelay: 5 * time.Millisecond, Jitter: -1, MaxAttempts: 1}
	tr := start(t, cmd)
	for round := range 3 {
		for i := range floodCount {
			m := mustRecv(t, tr)
			if want := fmt.Sprintf(`{"n":%d}`, i); string(m.Params) != want {
				t.Fatalf("round %d: message %d has params %s, want %s", round, i, m.Params, want)
			}
		}
		_, err := recv(t, tr)
		sessionLost(t, err, 0)
	}
	// Without the progress, the second death would have been the end.
	if n := tr.Restarts(); n < 2 {
		t.Errorf("Restarts() = %d, want at least 2", n)
	}
	if err, _ := closeWithin(t, tr, 3*time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSupervisedHandshakeAloneIsNoProgress(t *testing.T) {
	// Each process answers its initialize and dies. Having answered
	// nothing else, it got nowhere: the policy's two attempts run out, where
	// the answer once counted as progress and the restarts never ended.
	cmd := fakeCommand(t, modeCrash, "STDIO_TEST_N=1")
	cmd.Restart = &reconnect.Policy{InitialDelay: time.Millisecond, Jitter: -1, MaxAttempts: 2}
	tr := start(t, cmd)
	deaths := 0
	var err error
	for id := int64(1); ; id++ {
		if deaths > 5 {
			t.Fatal("the restarts do not stop")
		}
		initialize(t, tr, id)
		_, err = recv(t, tr)
		var sl *jsonrpc.SessionLostError
		if !errors.As(err, &sl) {
			break
		}
		sessionLost(t, err, 3)
		deaths++
	}
	var re *stdio.RestartsExhaustedError
	if !errors.As(err, &re) || re.Restarts != 2 {
		t.Fatalf("Recv: %v, want *RestartsExhaustedError after 2 restarts", err)
	}
	if deaths != 2 {
		t.Errorf("%d SessionLostErrors before the end, want 2", deaths)
	}
	if err, _ := closeWithin(t, tr, 3*time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSupervisedAnsweredCallIsProgress(t *testing.T) {
	// Each process answers its initialize and one call, then dies: it got
	// somewhere, so one attempt without progress is enough for restart
	// after restart.
	cmd := fakeCommand(t, modeCrash, "STDIO_TEST_N=2")
	cmd.Restart = &reconnect.Policy{InitialDelay: time.Millisecond, Jitter: -1, MaxAttempts: 1}
	tr := start(t, cmd)
	for round := range 3 {
		id := int64(2*round + 1)
		initialize(t, tr, id)
		send(t, tr, request(id+1, "echo", `{}`))
		if m := mustRecv(t, tr); m.ID.Raw() != strconv.FormatInt(id+1, 10) {
			t.Fatalf("round %d: got id %s, want %d", round, m.ID, id+1)
		}
		_, err := recv(t, tr)
		sessionLost(t, err, 3)
	}
	initialize(t, tr, 7) // the third restart's process
	if n := tr.Restarts(); n != 3 {
		t.Errorf("Restarts() = %d, want 3", n)
	}
	if err, _ := closeWithin(t, tr, 3*time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSupervisedInitializeWaitsForTheNewProcess(t *testing.T) {
	cmd := fakeCommand(t, modeCrash, "STDIO_TEST_N=1")
	cmd.Restart = &reconnect.Policy{InitialDelay: 400 * time.Millisecond, Jitter: -1}
	tr := start(t, cmd)
	pid1 := tr.Pid()
	send(t, tr, request(1, "echo", `{}`))
	mustRecv(t, tr)
	_, err := recv(t, tr)
	sessionLost(t, err, 3)

	// Too short a context: the initialize is given up, and not written.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err = tr.Send(ctx, request(2, "initialize", `{}`))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send(initialize) with a short context: %v, want DeadlineExceeded", err)
	}
	if tr.Pid() != pid1 || tr.Restarts() != 0 {
		t.Fatalf("Pid %d, Restarts %d during the wait: want %d, 0", tr.Pid(), tr.Restarts(), pid1)
	}
	begin := time.Now()
	pid2, seen := initialize(t, tr, 3)
	if took := time.Since(begin); took < 200*time.Millisecond {
		t.Errorf("initialize was answered after %v; it should have waited for the restart", took)
	}
	if pid2 == pid1 || seen != 0 {
		t.Errorf("initialize answered by pid %d (first %d) having seen %d messages, want a new pid and 0", pid2, pid1, seen)
	}
}

func TestSupervisedCloseDuringBackoff(t *testing.T) {
	env, starts := startsFile(t)
	cmd := fakeCommand(t, modeCrashAtStart, env)
	cmd.Restart = &reconnect.Policy{InitialDelay: 5 * time.Second, Jitter: -1}
	tr := start(t, cmd)
	_, err := recv(t, tr)
	sessionLost(t, err, 3)

	// An initialize waiting for the restart, and a Recv waiting for the
	// next process: Close ends both.
	sendErr, recvErr := make(chan error, 1), make(chan error, 1)
	go func() { sendErr <- tr.Send(context.Background(), request(1, "initialize", `{}`)) }()
	go func() {
		_, err := tr.Recv()
		recvErr <- err
	}()
	testkit.BlockedIn(t, patience, "stdio.(*supervisor).send", "stdio.(*supervisor).recv")
	if err, _ := closeWithin(t, tr, time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
	for name, ch := range map[string]chan error{"Send(initialize)": sendErr, "Recv": recvErr} {
		select {
		case err := <-ch:
			if !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("%s: %v, want ErrClosed", name, err)
			}
		case <-time.After(patience):
			t.Fatalf("%s still blocked after Close", name)
		}
	}
	if pids := starts(); len(pids) != 1 {
		t.Errorf("%d processes started, want 1", len(pids))
	}
	if n := tr.Restarts(); n != 0 {
		t.Errorf("Restarts() = %d, want 0", n)
	}
}

func TestSupervisedCloseLeavesNoProcess(t *testing.T) {
	env, starts := startsFile(t)
	cmd := fakeCommand(t, modeGrandchild, env)
	cmd.Restart = tinyPolicy()
	cmd.TermWait = time.Second
	tr := start(t, cmd)
	pid, gpid := pids(t, tr)
	if pid != tr.Pid() {
		t.Fatalf("server pid %d, Pid() %d", pid, tr.Pid())
	}
	if err, _ := closeWithin(t, tr, 3*time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertReaped(t, pid)
	waitDead(t, gpid)
	supervisorDone(t, tr)
	n := 0
	for _, p := range starts() {
		if p != gpid { // the grandchild, a re-exec too, may record itself
			n++
		}
	}
	if n != 1 || tr.Restarts() != 0 {
		t.Errorf("%d processes started and %d restarts, want 1 and 0: Close must not count as a death", n, tr.Restarts())
	}
}

func TestSupervisedRestartFailsToStart(t *testing.T) {
	// The program disappears while the server runs: restarting it fails,
	// and the policy gives up with both the start error and the last exit.
	bin := filepath.Join(t.TempDir(), "server")
	copyFile(t, selfPath(t), bin)
	cmd := fakeCommand(t, modeCrash, "STDIO_TEST_N=1")
	cmd.Path = bin
	cmd.Restart = &reconnect.Policy{InitialDelay: 5 * time.Millisecond, Jitter: -1, MaxAttempts: 2}
	tr := start(t, cmd)
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	send(t, tr, request(1, "echo", `{}`))
	mustRecv(t, tr)
	_, err := recv(t, tr)
	sessionLost(t, err, 3)
	_, err = recv(t, tr)
	var re *stdio.RestartsExhaustedError
	var ee *stdio.ExitError
	if !errors.As(err, &re) || !errors.As(err, &ee) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Recv: %v, want *RestartsExhaustedError with the exit and the start error", err)
	}
	if re.Attempts != 2 || re.Restarts != 0 || ee.ExitCode != 3 {
		t.Errorf("RestartsExhaustedError %+v, exit %+v: want 2 attempts, 0 restarts, status 3", re, ee)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSupervisedOversizeLineIsNotRestarted(t *testing.T) {
	cmd := fakeCommand(t, modeOversize, "STDIO_TEST_N=4096")
	cmd.MaxLineSize = 1024
	cmd.Restart = tinyPolicy()
	tr := start(t, cmd)
	send(t, tr, request(1, "huge", ""))
	_, err := recv(t, tr)
	var tooLong *stdio.LineTooLongError
	if !errors.As(err, &tooLong) || errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Fatalf("Recv: %v, want *LineTooLongError, not a lost session", err)
	}
	if err := tr.Send(context.Background(), request(2, "initialize", `{}`)); !errors.As(err, &tooLong) {
		t.Errorf("Send: %v, want the *LineTooLongError", err)
	}
	if n := tr.Restarts(); n != 0 {
		t.Errorf("Restarts() = %d, want 0", n)
	}
}

func TestUnsupervisedRestartsIsZero(t *testing.T) {
	tr := start(t, fakeCommand(t, modeCrash, "STDIO_TEST_N=1"))
	send(t, tr, request(1, "echo", `{}`))
	mustRecv(t, tr)
	_, err := recv(t, tr)
	var ee *stdio.ExitError
	if !errors.As(err, &ee) || errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Fatalf("Recv: %v, want a plain *ExitError", err)
	}
	if n := tr.Restarts(); n != 0 {
		t.Errorf("Restarts() = %d, want 0", n)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSupervisedCloseAtAnyMomentLeavesNoProcess(t *testing.T) {
	// Processes that live 5ms and restart after 1ms: Close lands on a live
	// process, in a wait, or in a start. Whatever it meets, every process
	// started must be gone once it returns, and none may start after.
	for i := range 12 {
		env, starts := startsFile(t)
		cmd := fakeCommand(t, modeShortLived, env, "STDIO_TEST_N=5")
		cmd.Restart = &reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: time.Millisecond, Jitter: -1, MaxAttempts: -1, Budget: -1}
		tr, err := stdio.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		// Time is the event: each round, Close lands at another moment
		// of the processes' 5ms lives and 1ms waits.
		time.Sleep(time.Duration(i*7) * time.Millisecond)
		// A process may die by itself while Close shuts it down: that is
		// reported, and is not a failure here.
		var ee *stdio.ExitError
		if err, _ := closeWithin(t, tr, 3*time.Second); err != nil && (!errors.As(err, &ee) || ee.ExitCode != 3) {
			t.Errorf("Close: %v", err)
		}
		pids := starts()
		for _, pid := range pids {
			assertReaped(t, pid)
		}
		supervisorDone(t, tr)
		if after := starts(); len(after) != len(pids) {
			t.Errorf("%d processes started after Close", len(after)-len(pids))
		}
	}
}

func TestSupervisedRestartsOnEveryKindOfDeath(t *testing.T) {
	tests := []struct {
		name   string
		mode   string
		kill   bool // SIGKILL the server from outside
		code   int
		signal string
	}{
		{name: "exit", mode: modeCrash, code: 3},
		{name: "signal", mode: modeEcho, kill: true, code: -1, signal: "SIGKILL"},
		{name: "stdout closed", mode: modeStdoutClose, code: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := fakeCommand(t, tt.mode, "STDIO_TEST_N=1")
			cmd.Restart = tinyPolicy()
			tr := start(t, cmd)
			pid1 := tr.Pid()
			if tt.kill {
				if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			} else {
				send(t, tr, request(1, "echo", `{}`))
				mustRecv(t, tr)
			}
			_, err := recv(t, tr)
			var sl *jsonrpc.SessionLostError
			var ee *stdio.ExitError
			if !errors.As(err, &sl) || !errors.As(sl.Cause, &ee) {
				t.Fatalf("Recv: %v, want a SessionLostError caused by an *ExitError", err)
			}
			if ee.Pid != pid1 || ee.ExitCode != tt.code || ee.Signal != tt.signal {
				t.Errorf("exit %+v, want pid %d, status %d, signal %q", ee, pid1, tt.code, tt.signal)
			}
			if pid2, _ := initialize(t, tr, 2); pid2 == pid1 {
				t.Errorf("initialize answered by the old pid %d", pid1)
			}
			if n := tr.Restarts(); n != 1 {
				t.Errorf("Restarts() = %d, want 1", n)
			}
		})
	}
}

func TestSupervisedConcurrentCloseUnblocksRecv(t *testing.T) {
	cmd := fakeCommand(t, modeEcho)
	cmd.Restart = tinyPolicy()
	tr := start(t, cmd)
	pid := tr.Pid()
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
	assertReaped(t, pid)
	if n := tr.Restarts(); n != 0 {
		t.Errorf("Restarts() = %d after Close, want 0", n)
	}
}
