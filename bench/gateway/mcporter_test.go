package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mcporterCLI is mcporter's entry point, installed by run.sh (npm ci).
const mcporterCLI = "node_modules/mcporter/dist/cli.js"

// mcporterServe is `mcporter serve --http PORT` over a config of its own,
// with a HOME of its own: its daemon is found by that HOME.
type mcporterServe struct {
	url, home, config string
	cmd               *exec.Cmd
	stopped           bool
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func startMcporter(b *testing.B, servers map[string]any) *mcporterServe {
	b.Helper()
	if _, err := os.Stat(mcporterCLI); err != nil {
		b.Skipf("mcporter is not installed (%v): run bench/gateway/run.sh", err)
	}
	dir := b.TempDir()
	m := &mcporterServe{home: dir, config: filepath.Join(dir, "mcporter.json")}
	raw, _ := json.Marshal(map[string]any{"mcpServers": servers, "imports": []string{}})
	if err := os.WriteFile(m.config, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	// Port 0: mcporter serve listens on a port of the kernel's choosing
	// and names it on stderr once it listens ("MCPorter serve HTTP bridge
	// URL"), the event waited for.
	m.cmd = exec.Command("node", mcporterCLI, "serve", "--http", "0", "--config", m.config)
	m.cmd.Env = append(os.Environ(), "HOME="+dir, "NO_COLOR=1")
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := m.cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	m.cmd.Stdout = m.cmd.Stderr
	if err := m.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.stop)
	ready := make(chan string, 1)
	var seen bytes.Buffer // what it wrote before the line, for a failure
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "MCPorter serve HTTP bridge "); ok {
				ready <- strings.TrimSpace(u)
				break
			}
			if seen.Len() < 64<<10 {
				seen.WriteString(sc.Text() + "\n")
			}
		}
		close(ready)
		io.Copy(io.Discard, out) //nolint:errcheck // drained until mcporter exits
	}()
	select {
	case u, ok := <-ready:
		if !ok || !strings.HasPrefix(u, "http://127.0.0.1:") {
			b.Fatalf("mcporter serve did not say where it listens (%q): %s", u, seen.String())
		}
		m.url = u
	case <-time.After(60 * time.Second):
		b.Fatal("mcporter serve did not listen within 60 s")
	}
	return m
}

// pids are the processes of this mcporter: those whose environment has
// its HOME (serve, its daemon, and the servers they started).
func (m *mcporterServe) pids() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(env, []byte("\x00HOME="+m.home+"\x00")) {
			out = append(out, pid)
		}
	}
	return out
}

// rss is the resident memory of this mcporter's processes, in bytes.
func (m *mcporterServe) rss(b *testing.B) int64 { return rssOf(m.pids()) }

// rssOf is the resident memory of the processes pids, in bytes.
func rssOf(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(st), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				total += kb << 10
			}
		}
	}
	return total
}

// children are the processes whose parent is this one.
func children() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; read after its ")".
		rest := string(st[bytes.LastIndexByte(st, ')')+1:])
		if f := strings.Fields(rest); len(f) >= 2 && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, pid)
		}
	}
	return out
}

func (m *mcporterServe) stop() {
	if m.stopped {
		return
	}
	m.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	stop := exec.CommandContext(ctx, "node", mcporterCLI, "daemon", "stop", "--config", m.config)
	stop.Env = m.cmd.Env
	_ = stop.Run()
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	_ = m.cmd.Wait()
	for _, pid := range m.pids() { // whatever the daemon left
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
