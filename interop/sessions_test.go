package interop_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// @modelcontextprotocol/server-memory behind `mcpcall session`: an entity
// created in one mcpcall run is read back in the next, from the same
// node process, and nothing of the session outlives its stop.

const memoryPkg = "node_modules/@modelcontextprotocol/server-memory"

// memoryMain returns server-memory's entry point, or ends the test: the
// package must have been installed (run.sh does it).
func memoryMain(t *testing.T) string {
	t.Helper()
	main, err := filepath.Abs(filepath.Join(memoryPkg, "dist", "index.js"))
	if err == nil {
		_, err = os.Stat(main)
	}
	if err != nil {
		t.Fatalf("server-memory is not installed (%v): run `npm ci` in interop/, or interop/run.sh", err)
	}
	return main
}

// mcpcallRun runs the mcpcall binary with the test's mark and session
// directory, and returns its stdout; it fails the test on a non-zero exit.
func mcpcallRun(t *testing.T, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcpcallBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpcall %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func TestSessionServerMemory(t *testing.T) {
	main := memoryMain(t)
	node := nodePath(t)
	mark := newMark(t)
	dir := t.TempDir()
	env := []string{markVar + "=" + mark, "MCPCALL_SESSION_DIR=" + filepath.Join(dir, "s")}
	t.Cleanup(func() {
		// Whatever happened: stop the session, then nothing marked runs.
		cmd := exec.Command(mcpcallBinary(t), "session", "stop", "mem")
		cmd.Env = append(os.Environ(), env...)
		_ = cmd.Run()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := waitNoProcesses(ctx, mark); err != nil {
			t.Errorf("after session stop: %v", err)
			for _, p := range processesMarked(mark) {
				if pid, err := strconv.Atoi(p); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	})
	mcpcallRun(t, env, "session", "start", "mem",
		"-e", "MEMORY_FILE_PATH="+filepath.Join(dir, "memory.jsonl"), "-e", markVar+"="+mark,
		"--", node, main)
	before := processesMarked(mark)

	entities := `{"entities":[{"name":"anymcp","entityType":"project","observations":["sessions keep servers up"]}]}`
	mcpcallRun(t, env, "tools", "call", "create_entities", "--args", entities, "@mem")
	out := mcpcallRun(t, env, "tools", "call", "read_graph", "--json", "--session", "mem")
	var res struct {
		StructuredContent struct {
			Entities []struct {
				Name         string   `json:"name"`
				Observations []string `json:"observations"`
			} `json:"entities"`
		} `json:"structuredContent"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("read_graph --json: %v\n%s", err, out)
	}
	found := false
	for _, e := range res.StructuredContent.Entities {
		found = found || (e.Name == "anymcp" && len(e.Observations) == 1)
	}
	if !found && (len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, `"anymcp"`)) {
		t.Fatalf("read_graph in the second run does not show the entity of the first:\n%s", out)
	}
	// The gateway and node ran through both runs: the same processes.
	if after := processesMarked(mark); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("the session's processes changed between runs: %v, then %v", before, after)
	}
	if len(before) < 2 {
		t.Errorf("marked processes %v: want the gateway and node", before)
	}

	mcpcallRun(t, env, "session", "stop", "mem")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := waitNoProcesses(ctx, mark); err != nil {
		t.Fatalf("after session stop: %v", err)
	}
}
