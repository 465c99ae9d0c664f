//go:build unix

package client_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers"
)

// TestStdioEscapedGrandchild: a stdio server whose helper escaped its
// process group with setsid and holds its stdout and stderr open. Close
// cannot kill the helper (documented in docs/security.md and the stdio package
// doc) but must not wait for its pipes: it returns, and the Conn is done.
func TestStdioEscapedGrandchild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	c := dial(t, server{name: "stdio", target: stdioTarget(testservers.Options{
		Stdio: testservers.StdioFaults{EscapedGrandchild: true, PIDFile: pidFile},
	})})
	if err := echo(t, c, "hello"); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(raw))
	if len(lines) != 2 {
		t.Fatalf("pid file %q, want the server's and the grandchild's", raw)
	}
	server, _ := strconv.Atoi(lines[0])
	grandchild, _ := strconv.Atoi(lines[1])
	t.Cleanup(func() { syscall.Kill(grandchild, syscall.SIGKILL) })
	if pgid, err := syscall.Getpgid(grandchild); err != nil || pgid == server {
		t.Fatalf("grandchild %d: group %d (%v), want one of its own", grandchild, pgid, err)
	}

	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the pipes the escaped grandchild holds")
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("the Conn is not done after Close")
	}
	if c.State() != client.StateClosed {
		t.Errorf("state %v after Close", c.State())
	}
	if err := syscall.Kill(server, 0); err != syscall.ESRCH {
		t.Errorf("the server %d is still there after Close: %v", server, err)
	}
	// The limit, as documented: the escaped grandchild outlives Close.
	if err := syscall.Kill(grandchild, 0); err != nil {
		t.Errorf("the escaped grandchild is gone (%v): if the transport can now reach it, update the documented limit", err)
	}
}
