package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/testservers"
)

// exitSlack is how late mcpcall may exit after --max-time or Ctrl-C in
// these tests: generous for a loaded machine (it aims at exitGrace, 0.3 s,
// and takes a few milliseconds when nothing holds it), and still below the
// 2 s grace periods it used to wait out (4 s for the stdio server here).
const exitSlack = 1500 * time.Millisecond

// blockingDeleteServer is a Streamable HTTP test server whose DELETE
// blocks until the client gives up on it, as servers do that end a session
// only after its running tools.
func blockingDeleteServer(t *testing.T) (string, *testservers.Server) {
	h := testservers.NewStreamableHandler(testservers.HTTPOptions{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			<-r.Context().Done()
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { h.Close(); ts.Close() })
	return ts.URL, h.Server()
}

// stubbornStdio is a stdio test server that keeps running a cancelled
// tool, ignores stdin EOF and SIGTERM, behind a tee that records its stdin
// in log.
func stubbornStdio(log string) []string {
	target := stdioTarget(testservers.Options{Stdio: testservers.StdioFaults{IgnoreStdinEOF: true, IgnoreSIGTERM: true}})
	dash := len(target) - 2
	return append(target[:dash:dash], "--", "sh", "-c", `tee "`+log+`" | "$0"`, target[dash+1])
}

// TestMaxTimeExitsPromptly: --max-time 1s during a tool that runs for a
// minute exits 6 right after the second, cancellation delivered first —
// also when the server keeps running the tool, its session DELETE
// blocks, or (stdio) it ignores stdin EOF and SIGTERM.
func TestMaxTimeExitsPromptly(t *testing.T) {
	const maxTime = 2 * time.Second // time enough to connect and call, even on a loaded machine
	cancelledCall := func(srv *testservers.Server, modern bool) func() bool {
		return func() bool {
			st := srv.Stats()
			if modern { // the request's stream closed: no notification
				return st.ToolCalls["slow"] == 1 && st.RequestsCancelled >= 1
			}
			return st.ToolCalls["slow"] == 1 && st.Cancelled == 1
		}
	}
	cases := []struct {
		name   string
		target func(t *testing.T) (args []string, cancelled func() bool)
	}{
		{"http, DELETE blocks", func(t *testing.T) ([]string, func() bool) {
			u, srv := blockingDeleteServer(t)
			return []string{u}, cancelledCall(srv, false)
		}},
		{"stateless http", func(t *testing.T) ([]string, func() bool) {
			srv := testservers.StartStateless(testservers.HTTPOptions{})
			t.Cleanup(srv.Close)
			return []string{srv.URL}, cancelledCall(srv.Server(), true)
		}},
		{"sse", func(t *testing.T) ([]string, func() bool) {
			srv := testservers.StartLegacy(testservers.LegacyOptions{})
			t.Cleanup(srv.Close)
			return []string{srv.URL}, cancelledCall(srv.Server(), false)
		}},
		{"stdio ignoring EOF and SIGTERM", func(t *testing.T) ([]string, func() bool) {
			log := filepath.Join(t.TempDir(), "stdin.log")
			return stubbornStdio(log), func() bool {
				b, _ := os.ReadFile(log)
				return strings.Contains(string(b), `"method":"tools/call"`) && strings.Contains(string(b), `"method":"notifications/cancelled"`)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target, cancelled := tc.target(t)
			r := newRunner(t)
			start := time.Now()
			res := r.run(append([]string{"tools", "call", "slow", "steps=1", "delayMs=60000", "--max-time", maxTime.String()}, target...)...)
			took := time.Since(start)
			if res.code != exitTimeout {
				t.Fatalf("exit %d, want 6\nstderr:\n%s", res.code, res.stderr)
			}
			if late := took - maxTime; late > exitSlack {
				t.Errorf("exited %v after --max-time ran out, want at most %v", late, exitSlack)
			} else {
				t.Logf("exited %v after --max-time ran out", late)
			}
			waitFor(t, "the server to see the cancellation", cancelled)
		})
	}
}

// waitFor polls cond for a while: what the server saw may reach its
// stats, or its stdin log, a moment after mcpcall has gone.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 5*time.Second, what, cond)
}

// asMCPCall is the environment variable that makes this test binary run
// as mcpcall itself (TestMain), for tests that signal a real process.
const asMCPCall = "MCPCALL_TEST_AS_MCPCALL"

// TestSignalExitsPromptly: SIGINT or SIGHUP (a closed terminal) to a
// real mcpcall process during a call exits 130 soon after, the server
// told first. A hangup used to kill mcpcall at once, its stdio server left
// running the call.
func TestSignalExitsPromptly(t *testing.T) {
	restoreHangups()
	cases := []struct {
		name   string
		target func(t *testing.T) (args []string, started, cancelled func() bool)
	}{
		{"http, DELETE blocks", func(t *testing.T) ([]string, func() bool, func() bool) {
			u, srv := blockingDeleteServer(t)
			return []string{u}, func() bool { return srv.Stats().ToolCalls["slow"] == 1 }, func() bool { return srv.Stats().Cancelled == 1 }
		}},
		{"stdio ignoring EOF and SIGTERM", func(t *testing.T) ([]string, func() bool, func() bool) {
			log := filepath.Join(t.TempDir(), "stdin.log")
			seen := func(s string) func() bool {
				return func() bool { b, _ := os.ReadFile(log); return strings.Contains(string(b), s) }
			}
			return stubbornStdio(log), seen(`"method":"tools/call"`), seen(`"method":"notifications/cancelled"`)
		}},
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		for _, tc := range cases {
			t.Run(sig.String()+"/"+tc.name, func(t *testing.T) { signalDuringCall(t, sig, tc.target) })
		}
	}
}

// restoreHangups makes the processes this test starts get SIGHUP as by
// default when the test itself runs with hangups ignored (under nohup, as
// a CI job may be): a child inherits an ignored signal, and mcpcall keeps
// ignoring a hangup it started ignoring (TestNohupIgnoresHangup), while a
// signal this process handles is back to the default in the programs it
// executes.
func restoreHangups() {
	hangupsOnce.Do(func() {
		if signal.Ignored(syscall.SIGHUP) {
			// For the life of the test binary: stopping it would give
			// the signal back to its ignored state at start.
			signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
		}
	})
}

var hangupsOnce sync.Once

// signalDuringCall sends sig to a real mcpcall process during a call to
// the server target starts, and checks that it exits 130 soon after, the
// server told first.
func signalDuringCall(t *testing.T, sig syscall.Signal, start func(t *testing.T) (args []string, started, cancelled func() bool)) {
	target, started, cancelled := start(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{"tools", "call", "slow", "steps=1", "delayMs=60000"}, target...)...)
	cmd.Env = append(os.Environ(), asMCPCall+"=1", "GORACE=atexit_sleep_ms=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck // already gone, normally
		<-exited
	})
	waitFor(t, "the call to reach the server", started)

	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	var werr error
	select {
	case werr = <-exited:
		exited <- werr // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatalf("mcpcall still running 10 s after %v\nstderr:\n%s", sig, stderr.String())
	}
	took := time.Since(signalled)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != exitInterrupt {
		t.Fatalf("mcpcall ended with %v, want exit 130\nstderr:\n%s", werr, stderr.String())
	}
	if took > exitSlack {
		t.Errorf("exited %v after %v, want at most %v", took, sig, exitSlack)
	} else {
		t.Logf("exited %v after %v", took, sig)
	}
	waitFor(t, "the server to see the cancellation", cancelled)
}

// TestNohupIgnoresHangup: a run started with hangups ignored (nohup, or a
// shell's trap "" HUP) goes on through a hangup and finishes its call, as
// asked, where asking for SIGHUP had put a handler in the place of the
// inherited "ignore".
func TestNohupIgnoresHangup(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	t.Cleanup(srv.Close)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The tool takes about a second: time for the hangup to come first.
	cmd := exec.Command("sh", "-c", `trap "" HUP; exec "$0" "$@"`, self, "tools", "call", "slow", "steps=3", "delayMs=300", srv.URL)
	cmd.Env = append(os.Environ(), asMCPCall+"=1", "GORACE=atexit_sleep_ms=0")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck // already gone, normally
		<-exited
	})
	waitFor(t, "the call to reach the server", func() bool { return srv.Server().Stats().ToolCalls["slow"] == 1 })
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil || srv.Server().Stats().Cancelled != 0 {
			t.Fatalf("after a hangup it ignores, mcpcall ended with %v, %d cancellations\nstdout:\n%s\nstderr:\n%s",
				err, srv.Server().Stats().Cancelled, stdout.String(), stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("mcpcall still running 20 s after the hangup\nstderr:\n%s", stderr.String())
	}
}
