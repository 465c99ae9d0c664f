package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
)

// @modelcontextprotocol/server-everything, installed into node_modules by
// `npm ci` (run.sh), run with node directly (no npx, no npm: one process
// per server).

const everythingPkg = "node_modules/@modelcontextprotocol/server-everything"

// everythingTools are server-everything's tools that fit the steps: its
// long-running operation sends one progress notification a step,
// duration/steps seconds apart. It never looks at its cancellation, so the
// server cannot tell the test it saw one.
var everythingTools = toolSet{
	echo:     "echo",
	echoArgs: func(s string) map[string]any { return map[string]any{"message": s} },
	echoWant: func(s string) string { return "Echo: " + s },
	progress: "trigger-long-running-operation",
	// 3 steps, 0.1 s apart.
	progressArgs:  map[string]any{"duration": 0.3, "steps": 3},
	progressSteps: 3,
	slow:          "trigger-long-running-operation",
	// The first step after 0.1 s; the rest run on after the cancellation
	// until the process is stopped.
	slowArgs: map[string]any{"duration": 30, "steps": 300},
}

// everythingMain returns the server's entry point, or ends the test: the
// package must have been installed (run.sh does it).
func everythingMain(t *testing.T) string {
	t.Helper()
	main, err := filepath.Abs(filepath.Join(everythingPkg, "dist", "index.js"))
	if err == nil {
		_, err = os.Stat(main)
	}
	if err != nil {
		t.Fatalf("server-everything is not installed (%v): run `npm ci` in interop/, or interop/run.sh", err)
	}
	return main
}

// npmVersion reads the version of an installed npm package.
func npmVersion(pkg string) string {
	raw, err := os.ReadFile(filepath.Join("node_modules", pkg, "package.json"))
	if err != nil {
		return "not installed"
	}
	var p struct{ Version string }
	if json.Unmarshal(raw, &p) != nil || p.Version == "" {
		return "unknown"
	}
	return p.Version
}

func nodePath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for server-everything: %v", err)
	}
	return p
}

// everythingStdio is server-everything over stdio: anymcp starts it.
func everythingStdio(t *testing.T) *peerServer {
	mark := newMark(t)
	target := client.Command(nodePath(t), everythingMain(t), "stdio").WithEnv(markVar + "=" + mark)
	return &peerServer{target: target, tools: everythingTools, mark: mark, stop: func() error { return nil }}
}

// everythingHTTP starts server-everything in mode ("sse" or
// "streamableHttp") on 127.0.0.1 and a port of the kernel's choosing, in a
// process group of its own, and targets path on it.
func everythingHTTP(mode, path string) func(t *testing.T) *peerServer {
	return func(t *testing.T) *peerServer {
		main := everythingMain(t)
		preload, err := filepath.Abs("loopback.mjs")
		if err != nil {
			t.Fatal(err)
		}
		mark := newMark(t)
		cmd := exec.Command(nodePath(t), "--import", preload, main, mode)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PORT=0", markVar + "=" + mark}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.WaitDelay = 5 * time.Second
		errOut := newListenWatcher()
		cmd.Stderr = errOut
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting server-everything %s: %v", mode, err)
		}
		p := &processServer{cmd: cmd, out: errOut}
		t.Cleanup(func() {
			if err := p.stop(); err != nil {
				t.Errorf("server-everything %s: %v", mode, err)
			}
		})
		select {
		case addr := <-errOut.addr:
			return &peerServer{target: client.URL("http://" + addr + path), tools: everythingTools, mark: mark, stop: p.stop}
		case <-time.After(30 * time.Second):
			t.Fatalf("server-everything %s did not say where it listens within 30 s; stderr: %s", mode, errOut.tail())
		}
		return nil
	}
}

// processServer is a server process this test started, in its own
// process group.
type processServer struct {
	cmd  *exec.Cmd
	out  *listenWatcher
	once sync.Once
	err  error
}

// stop ends the whole process group: SIGTERM, then SIGKILL after 5 s; it
// returns once the process is reaped.
func (p *processServer) stop() error {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
			p.err = fmt.Errorf("ignored SIGTERM for 5 s: killed; stderr: %s", p.out.tail())
		}
		// Anything left in the group (a grandchild) is a leak: kill it too.
		if err := syscall.Kill(-pgid, 0); err == nil {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			p.err = errors.Join(p.err, fmt.Errorf("process group %d outlived its leader", pgid))
		}
	})
	return p.err
}

// listenWatcher is a server's stderr: it finds the address line that
// loopback.mjs prints, and keeps the last few KiB for error messages.
type listenWatcher struct {
	addr chan string
	mu   sync.Mutex
	line []byte // the unfinished line
	last []byte // bounded tail of everything written
	seen bool
}

func newListenWatcher() *listenWatcher { return &listenWatcher{addr: make(chan string, 1)} }

var listenLine = regexp.MustCompile(`^interop: listening on (127\.0\.0\.1:[0-9]+)$`)

const tailBytes = 4 << 10

func (w *listenWatcher) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = append(w.last, b...)
	if len(w.last) > tailBytes {
		w.last = append(w.last[:0], w.last[len(w.last)-tailBytes:]...)
	}
	if w.seen {
		return len(b), nil
	}
	w.line = append(w.line, b...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		if m := listenLine.FindSubmatch(bytes.TrimRight(w.line[:i], "\r")); m != nil {
			w.seen = true
			w.addr <- string(m[1])
			w.line = nil
			break
		}
		w.line = w.line[i+1:]
	}
	if len(w.line) > tailBytes {
		w.line = w.line[len(w.line)-tailBytes:]
	}
	return len(b), nil
}

func (w *listenWatcher) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.last))
}

// Processes are recognised by a variable in their environment that names
// the row that started them: after Close (stdio) or the server's stop
// (HTTP), none may be left.
const markVar = "ANYMCP_INTEROP_MARK"

func newMark(t *testing.T) string {
	return fmt.Sprintf("%d-%s-%d", os.Getpid(), strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), time.Now().UnixNano())
}

// processesMarked lists the live processes whose environment carries mark.
func processesMarked(mark string) []string {
	want := []byte(markVar + "=" + mark + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []string
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil && isZombie(stat) {
			continue
		}
		pids = append(pids, filepath.Base(d))
	}
	return pids
}

// isZombie reads the state field of /proc/PID/stat ("pid (comm) S ...").
func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// waitNoProcesses waits, until ctx ends, for no process to carry mark.
func waitNoProcesses(ctx context.Context, mark string) error {
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		pids := processesMarked(mark)
		if len(pids) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("processes left behind: %s", strings.Join(pids, ", "))
		case <-time.After(pause):
		}
	}
}
