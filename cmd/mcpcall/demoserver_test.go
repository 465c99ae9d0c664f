package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// TestTestServerVariableIgnored: the environment variable that makes a
// test binary a stdio test server does nothing to mcpcall, which answers
// as itself; only demo's hidden subcommand serves, and it stays hidden.
func TestTestServerVariableIgnored(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "--version")
	cmd.Env = append(os.Environ(), asMCPCall+"=1", testservers.EnvVar+"=stdio", "GORACE=atexit_sleep_ms=0")
	cmd.Stdin = strings.NewReader("")
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "mcpcall ") {
		t.Errorf("mcpcall --version with %s=stdio: %q, %v; want its version", testservers.EnvVar, out, err)
	}
	for _, args := range [][]string{{"--help"}, {"demo", "--help"}} {
		res := newRunner(t).run(args...)
		if strings.Contains(res.stdout+res.stderr, demoStdioServer) {
			t.Errorf("mcpcall %s shows the hidden %s", strings.Join(args, " "), demoStdioServer)
		}
	}
}

// TestDemoStdioServer: demo's hidden subcommand serves the stdio test
// server of the eras asked, and refuses others.
func TestDemoStdioServer(t *testing.T) {
	r := newRunner(t)
	r.stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n")
	res := r.run(demoServerArgs("stateless")...)
	if res.code != 0 || !strings.Contains(res.stdout, `"supportedVersions":["2026-07-28"]`) {
		t.Errorf("stateless: code %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if res := newRunner(t).run(demoServerArgs("modern")...); res.code != exitUsage {
		t.Errorf("--eras modern: code %d, want %d", res.code, exitUsage)
	}
}
