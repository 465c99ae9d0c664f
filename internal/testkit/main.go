package testkit

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

// VerifyMain runs the tests, then fails the run (exit status 1) if a
// goroutine they started is still running (goleak) or a process they
// started is still a child of this one: a test that leaves a server
// running fails whichever test it was. Call it last in TestMain.
func VerifyMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	if code == 0 {
		// goleak waited for every goroutine to end, those that wait for
		// (and so reap) child processes too: a child left now is one
		// nothing waits for.
		left := Children()
		if len(left) > 0 {
			fmt.Fprintf(os.Stderr, "child processes left running after the tests: %v\n", left)
			code = 1
		}
	}
	os.Exit(code)
}

// Children returns the pids of this process's children, from /proc (none
// where there is no /proc).
func Children() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces; read after its ")".
		i := bytes.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		if f := bytes.Fields(st[i+1:]); len(f) >= 2 && string(f[1]) == self {
			out = append(out, pid)
		}
	}
	return out
}
