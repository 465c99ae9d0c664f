//go:build linux

package stdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/stdio"
)

// patience bounds every wait in the tests.
const patience = 10 * time.Second

func selfPath(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeCommand returns a Command that runs the fake server in mode.
func fakeCommand(t testing.TB, mode string, env ...string) stdio.Command {
	return stdio.Command{
		Path: selfPath(t),
		// GORACE: a race-enabled server would otherwise linger 1s at exit.
		Env: append([]string{"STDIO_TEST_MODE=" + mode, "GORACE=atexit_sleep_ms=0"}, env...),
	}
}

// start starts cmd and closes the transport when the test ends.
func start(t testing.TB, cmd stdio.Command) *stdio.Transport {
	t.Helper()
	tr, err := stdio.Start(cmd)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func request(id int64, method, params string) *jsonrpc.Message {
	m := &jsonrpc.Message{ID: jsonrpc.Int(id), Method: method}
	if params != "" {
		m.Params = json.RawMessage(params)
	}
	return m
}

func send(t testing.TB, tr *stdio.Transport, m *jsonrpc.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := tr.Send(ctx, m); err != nil {
		t.Fatalf("Send(%s): %v", m.ID, err)
	}
}

// recv calls Recv, failing the test (after closing the transport) if it
// does not return in time.
func recv(t testing.TB, tr *stdio.Transport) (*jsonrpc.Message, error) {
	t.Helper()
	type result struct {
		m   *jsonrpc.Message
		err error
	}
	ch := make(chan result, 1)
	go func() {
		m, err := tr.Recv()
		ch <- result{m, err}
	}()
	select {
	case r := <-ch:
		return r.m, r.err
	case <-time.After(patience):
		tr.Close()
		<-ch
		t.Fatal("Recv did not return in time")
		return nil, nil
	}
}

// mustRecv receives a message and fails on an error.
func mustRecv(t testing.TB, tr *stdio.Transport) *jsonrpc.Message {
	t.Helper()
	m, err := recv(t, tr)
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return m
}

// closeWithin closes tr and fails if that takes longer than d.
func closeWithin(t testing.TB, tr *stdio.Transport, d time.Duration) (error, time.Duration) {
	t.Helper()
	begin := time.Now()
	err := tr.Close()
	took := time.Since(begin)
	if took > d {
		t.Errorf("Close took %v, want at most %v", took, d)
	}
	return err, took
}

// assertReaped checks that pid no longer exists at all: not running, not a
// zombie.
func assertReaped(t testing.TB, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Errorf("process %d still exists (kill -0: %v, state %q)", pid, err, procState(pid))
	}
}

// waitDead waits until pid is gone or a zombie; a grandchild is reaped by
// pid 1, which in some containers never happens.
func waitDead(t testing.TB, pid int) {
	t.Helper()
	testkit.Eventually(t, patience, "process "+strconv.Itoa(pid)+" to end", func() bool {
		return syscall.Kill(pid, 0) == syscall.ESRCH || procState(pid) == 'Z'
	})
}

// procState returns the state letter of pid from /proc, or 0.
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// pids asks the fake server for its pid and its grandchild's.
func pids(t testing.TB, tr *stdio.Transport) (pid, grandchild int) {
	t.Helper()
	send(t, tr, request(99, "pid", ""))
	m := mustRecv(t, tr)
	var r struct{ Pid, Grandchild int }
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("pid result %s: %v", m.Result, err)
	}
	return r.Pid, r.Grandchild
}

// supervisorDone waits until the supervisor of tr has stopped: no process
// starts after that, so the processes started so far are all there are.
func supervisorDone(t testing.TB, tr *stdio.Transport) {
	t.Helper()
	select {
	case <-stdio.SupervisorDone(tr):
	case <-time.After(patience):
		t.Fatal("the supervisor still runs")
	}
}
