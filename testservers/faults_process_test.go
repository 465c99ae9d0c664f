//go:build unix

package testservers

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/internal/testkit"
)

// child is this test binary run as a stdio server in a process group of
// its own.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *logtest.Buffer
	exited chan struct{} // closed when Wait returned; err is then set
	err    error
}

func startChild(t *testing.T, opts Options) *child {
	t.Helper()
	path, args, env := StdioCommand()
	cmd := exec.Command(path, args...)
	cmd.Env = append(append(os.Environ(), env...), StdioEnv(opts)[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = testTimeout
	c := &child{cmd: cmd, stderr: &logtest.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	// An os.Pipe of our own, not cmd.StdoutPipe: Wait closes the latter as
	// soon as the child exits, so a read racing with it could fail with
	// "file already closed" instead of seeing the EOF the tests expect.
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdout.Close() })
	cmd.Stdout = w
	err = cmd.Start()
	w.Close() // the child has its copy: EOF once it (and its group) let go
	if err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewReader(stdout)
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	})
	return c
}

func (c *child) roundTrip(t *testing.T, line string) string {
	t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
	b, err := c.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the answer to %s: %v (stderr %q)", line, err, c.stderr.String())
	}
	return string(b)
}

func (c *child) initialize(t *testing.T) {
	t.Helper()
	result[struct{}](t, mustDecode(t, c.roundTrip(t, reqJSON(0, "initialize", initParams))))
	if _, err := io.WriteString(c.stdin, notifJSON("notifications/initialized", "")+"\n"); err != nil {
		t.Fatal(err)
	}
}

// alive reports whether the child is still running after d.
func (c *child) alive(d time.Duration) bool {
	select {
	case <-c.exited:
		return false
	case <-time.After(d):
		return true
	}
}

func (c *child) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-c.exited:
		return c.err
	case <-time.After(testTimeout):
		t.Fatal("the child does not exit")
		return nil
	}
}

func TestStdioProcessCrash(t *testing.T) {
	c := startChild(t, Options{Stdio: StdioFaults{CrashOnCall: 3}})
	c.initialize(t)
	for i := range 2 {
		if text, _ := toolText(t, mustDecode(t, c.roundTrip(t, reqJSON(i+1, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`)))); text != "x" {
			t.Fatalf("call %d: %q", i+1, text)
		}
	}
	if _, err := io.WriteString(c.stdin, reqJSON(3, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`)+"\n"); err != nil {
		t.Fatal(err)
	}
	if b, err := c.out.ReadBytes('\n'); err != io.EOF {
		t.Errorf("after the third call: %q %v, want EOF", b, err)
	}
	err := c.wait(t)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != CrashExitCode {
		t.Errorf("exit: %v, want status %d", err, CrashExitCode)
	}
	if !strings.Contains(c.stderr.String(), "crashing on purpose") {
		t.Errorf("stderr %q", c.stderr.String())
	}
}

func TestStdioProcessIgnoreStdinEOF(t *testing.T) {
	c := startChild(t, Options{Stdio: StdioFaults{IgnoreStdinEOF: true}})
	c.initialize(t)
	c.stdin.Close()
	if !c.alive(100 * time.Millisecond) {
		t.Fatalf("exited after EOF: %v", c.err)
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM) // SIGTERM still works
	if err := c.wait(t); err == nil {
		t.Error("exit status 0 after SIGTERM")
	}
}

func TestStdioProcessIgnoreSIGTERM(t *testing.T) {
	c := startChild(t, Options{Stdio: StdioFaults{IgnoreSIGTERM: true}})
	c.initialize(t)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !c.alive(100 * time.Millisecond) {
		t.Fatalf("exited after SIGTERM: %v", c.err)
	}
	if m := mustDecode(t, c.roundTrip(t, reqJSON(1, "ping", ""))); m.Error != nil {
		t.Errorf("ping after SIGTERM: %v", m.Error)
	}
	c.stdin.Close() // EOF still ends it
	if err := c.wait(t); err != nil {
		t.Errorf("exit after EOF: %v", err)
	}
}

func TestStdioProcessGrandchild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tells a zombie from a live process through /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "server.pid")
	c := startChild(t, Options{Stdio: StdioFaults{Grandchild: true, PIDFile: pidFile}})
	c.initialize(t) // the PID file is written before serving
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	if len(lines) != 2 || lines[0] != strconv.Itoa(c.cmd.Process.Pid) {
		t.Fatalf("PID file %q, child %d", b, c.cmd.Process.Pid)
	}
	grandchild, _ := strconv.Atoi(lines[1])
	if pgid, err := syscall.Getpgid(grandchild); err != nil || pgid != c.cmd.Process.Pid {
		t.Fatalf("grandchild %d: group %d %v, want %d", grandchild, pgid, err, c.cmd.Process.Pid)
	}
	// Closing stdin ends the server, not the grandchild.
	c.stdin.Close()
	testkit.Eventually(t, testTimeout, "the server's exit", func() bool { return exitedProcess(c.cmd.Process.Pid) })
	// A signal the server's exit sent the group was sent before the server
	// was reaped: by now it is pending, or the grandchild is gone.
	if exitedProcess(grandchild) || signalPending(grandchild) {
		t.Fatal("the grandchild died with the server")
	}
	// Killing the group ends it; then Wait returns (its stderr closes).
	if err := syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := c.wait(t); err != nil {
		t.Errorf("server exit: %v", err)
	}
	testkit.Eventually(t, testTimeout, "the grandchild's death", func() bool { return exitedProcess(grandchild) })
}

// exitedProcess reports whether pid is gone or a zombie.
// signalPending reports whether a signal waits for pid to take it, to it
// or to its thread group (/proc/PID/status: SigPnd, ShdPnd).
func signalPending(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		name, mask, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "SigPnd" || name == "ShdPnd") && strings.Trim(strings.TrimSpace(mask), "0") != "" {
			return true
		}
	}
	return false
}

func exitedProcess(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}
