//go:build linux

package stdio_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/anymcp/anymcp/stdio"
)

// parentOfServer is the fake server's "parent" mode: it starts a server
// that outlives its stdin, prints the server's pid, and waits to be killed.
func parentOfServer(killWithParent bool) int {
	self, _ := os.Executable()
	tr, err := stdio.Start(stdio.Command{
		Path:           self,
		Env:            []string{"STDIO_TEST_MODE=" + modeIgnoreStdinClose, "GORACE=atexit_sleep_ms=0"},
		KillWithParent: killWithParent,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the server:", err)
		return 1
	}
	fmt.Println(tr.Pid())
	lingerForever()
	return 0
}

// TestKillWithParent kills the process that started a server with
// SIGKILL, so that no Close runs: with KillWithParent the server dies
// too; without it, it lives on (it ignores its stdin's end).
func TestKillWithParent(t *testing.T) {
	for _, kill := range []bool{true, false} {
		t.Run(fmt.Sprintf("KillWithParent=%v", kill), func(t *testing.T) {
			n := "0"
			if kill {
				n = "1"
			}
			parent := exec.Command(selfPath(t))
			parent.Env = append(os.Environ(), "STDIO_TEST_MODE="+modeParent, "STDIO_TEST_N="+n, "GORACE=atexit_sleep_ms=0")
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("reading the server's pid: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("server pid %q: %v", line, err)
			}
			t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
			if err := parent.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			parent.Wait()
			if kill {
				waitDead(t, pid)
				return
			}
			// The parent is reaped: had the kernel signalled the server,
			// it would already be dying. It runs on (state S or R).
			if st := procState(pid); st != 'S' && st != 'R' {
				t.Errorf("without KillWithParent the server's state is %q, want it running", st)
			}
		})
	}
}
