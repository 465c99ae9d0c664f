package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The example's "local" server is this test binary, started with the
	// argument main's config gives it.
	if len(os.Args) == 2 && os.Args[1] == serveStdioFlag {
		os.Exit(serveStdio(context.Background()))
	}
	goleak.VerifyTestMain(m)
}

// The example host, run as `go run ./examples/fleethost` runs it: the
// fleet of built-in servers listed (the dead one named), searched, and
// the best match called; its stdio server is gone when it returns.
func TestFleetHost(t *testing.T) {
	pidLog := filepath.Join(t.TempDir(), "pids")
	localServer.Stdio.PIDLog = pidLog
	defer func() { localServer.Stdio.PIDLog = "" }()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out, "", "add two numbers", json.RawMessage(`{"a": 2, "b": 3}`), 30*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"tools from 4 servers\n",
		"  offline is not in the catalogue: unreachable\n",
		"best matches for \"add two numbers\":\n  calendar__add ",
		"(tool add of server calendar)",
		"calendar__add {\"a\": 2, \"b\": 3}:\n  2+3=5\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(pidLog)
	if err != nil {
		t.Fatalf("the stdio server never started: %v", err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("stdio server %d outlived the host: %v", pid, err)
		}
	}
}
