//go:build unix

package ladder_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/stdio"
	"github.com/anymcp/anymcp/testservers"
)

// stdioServer is a command running the stdio test server with o; each of
// its processes appends its pid to the returned file.
func stdioServer(t *testing.T, o testservers.Options) (*stdio.Command, string) {
	pidLog := filepath.Join(t.TempDir(), "pids")
	o.Stdio.PIDLog = pidLog
	path, args, _ := testservers.StdioCommand()
	return &stdio.Command{Path: path, Args: args, Env: append(testservers.StdioEnv(o), "GORACE=atexit_sleep_ms=0")}, pidLog
}

// pids returns the pids of the processes that appended to pidLog.
func pids(t *testing.T, pidLog string) []int {
	t.Helper()
	b, err := os.ReadFile(pidLog)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var ps []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid log %q: %v", b, err)
		}
		ps = append(ps, pid)
	}
	return ps
}

// gone fails t for each process of pidLog still there.
func gone(t *testing.T, pidLog string) {
	t.Helper()
	for _, pid := range pids(t, pidLog) {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d is still there: %v", pid, err)
		}
	}
}

func dialCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Dial of a command starts it and runs the ladder over it: a stateless
// server answers the probe, an initialize-era one initialize; the report names the
// program, the result the stdio transport, and the cache keeps the era
// under the command line.
func TestDialCommand(t *testing.T) {
	for _, tc := range []struct {
		eras testservers.Eras
		want mcp.Era
	}{
		{testservers.StatelessOnly, mcp.EraStateless},
		{testservers.InitializeOnly, mcp.EraInitialize},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			cmd, pidLog := stdioServer(t, testservers.Options{Eras: tc.eras})
			cache := negotiate.NewCache(0)
			res, err := ladder.Dial(dialCtx(t), ladder.Target{Command: cmd}, dualHello(), ladder.Config{Cache: cache})
			if err != nil {
				t.Fatal(err)
			}
			if res.Era != tc.want || res.Name != negotiate.Stdio || res.Response.Error != nil ||
				res.Report.URL != strings.Join(append([]string{"stdio:" + filepath.Base(cmd.Path)}, cmd.Args...), " ") || res.Report.Chosen != negotiate.Stdio {
				t.Errorf("era %s over %q, answer %+v, report:\n%s", res.Era, res.Name, res.Response, res.Report)
			}
			if name, era, ok := cache.Lookup(negotiate.CommandKey(*cmd)); !ok || era != tc.want || name != negotiate.Stdio {
				t.Errorf("cached for %q: %s %s, %v", negotiate.CommandKey(*cmd), name, era, ok)
			}
			if err := jsonrpc.Shutdown(dialCtx(t), res.Transport); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			if n := len(pids(t, pidLog)); n != 1 {
				t.Errorf("%d processes started, want 1", n)
			}
			gone(t, pidLog)
		})
	}
}

// A stdio server that the probe left refusing initialize (it takes any
// first message for the start of its session) is stopped and started
// again by Dial itself, and the new process gets initialize alone. The
// first process is gone by then; none is left after Close.
func TestDialCommandStartsTheServerAgain(t *testing.T) {
	cmd, pidLog := stdioServer(t, testservers.Options{Stdio: testservers.StdioFaults{SessionOnFirstMessage: true}})
	res, err := ladder.Dial(dialCtx(t), ladder.Target{Command: cmd}, dualHello(), ladder.Config{ProbeTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	a := res.Report.Attempts
	if res.Era != mcp.EraInitialize || res.Response.Error != nil || len(a) != 3 ||
		!strings.Contains(a[1].Decision, "starting the server again") || !strings.Contains(a[2].Decision, "started again") {
		t.Errorf("era %s, answer %+v, report:\n%s", res.Era, res.Response, res.Report)
	}
	ps := pids(t, pidLog)
	if len(ps) != 2 {
		t.Fatalf("%d processes started, want 2", len(ps))
	}
	if err := syscall.Kill(ps[0], 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the first process (%d) is still there: %v", ps[0], err)
	}
	res.Transport.Close()
	gone(t, pidLog)
}

// A command whose handshake fails leaves no process behind: Dial stops
// the one it started (here an initialize-era server, asked for the stateless era only).
func TestDialCommandFailureLeavesNoProcess(t *testing.T) {
	cmd, pidLog := stdioServer(t, testservers.Options{Eras: testservers.InitializeOnly})
	res, err := ladder.Dial(dialCtx(t), ladder.Target{Command: cmd}, dualHello(),
		ladder.Config{Era: negotiate.StatelessOnly, ProbeTimeout: 50 * time.Millisecond})
	var nerr *negotiate.Error
	if !errors.As(err, &nerr) {
		if res != nil {
			res.Transport.Close()
		}
		t.Fatalf("Dial: %v, want a *negotiate.Error", err)
	}
	if n := len(pids(t, pidLog)); n != 1 {
		t.Errorf("%d processes started, want 1", n)
	}
	gone(t, pidLog)
}

// A target is a URL or a command: neither, both, or a URL that is not
// http(s) is refused before anything is started or sent.
func TestDialRefusesTargets(t *testing.T) {
	cmd := &stdio.Command{Path: "/nonexistent/never-started"}
	for _, tc := range []struct {
		name   string
		target ladder.Target
		want   string
	}{
		{"none", ladder.Target{}, "no target"},
		{"both", ladder.Target{URL: "http://127.0.0.1:1/mcp", Command: cmd}, "not both"},
		{"scheme", ladder.Target{URL: "ftp://127.0.0.1/mcp"}, "not an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ladder.Dial(dialCtx(t), tc.target, dualHello(), ladder.Config{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dial: %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ladder.Dial(dialCtx(t), ladder.Target{}, dualHello(), ladder.Config{}); err == nil || !strings.Contains(err.Error(), "no target") {
		t.Errorf("Dial of no target: %v, want \"no target\"", err)
	}
}
