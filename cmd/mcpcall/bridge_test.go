//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/anymcp/anymcp/testservers"
)

// A stdio server that takes the stateless probe for the start of its session
// and then refuses initialize (supergateway in front of an HTTP server) is
// reached with the defaults: started again and sent initialize alone,
// where mcpcall exited 4. No process is left behind.
func TestStdioBridgeAfterProbe(t *testing.T) {
	pidLog := filepath.Join(t.TempDir(), "pids")
	target := stdioTarget(testservers.Options{Stdio: testservers.StdioFaults{SessionOnFirstMessage: true, PIDLog: pidLog}})
	r := newRunner(t)
	res := r.run(append([]string{"tools", "call", "echo", "text=hi"}, target...)...)
	if res.code != 0 || strings.TrimSpace(res.stdout) != "hi" {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	res = r.run(append([]string{"probe", "--json"}, target...)...)
	var p probeResult
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &p) != nil {
		t.Fatalf("probe: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	// (a server slower to start than the probe's wait answers it after
	// initialize: one more probe, refused, comes before the start again)
	if p.Era != "initialize" || p.Negotiation == nil || len(p.Negotiation.Attempts) < 3 ||
		!strings.Contains(p.Negotiation.Attempts[len(p.Negotiation.Attempts)-1].Decision, "started again") {
		t.Errorf("era %s, negotiation %s", p.Era, p.Negotiation)
	}
	b, err := os.ReadFile(pidLog)
	if err != nil {
		t.Fatal(err)
	}
	pids := strings.Fields(string(b))
	if len(pids) != 4 {
		t.Errorf("%d processes started, want 4 (two a run)", len(pids))
	}
	for _, f := range pids {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d is still there: %v", pid, err)
		}
	}
}
