package fleet

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ctxT is a context that ends with the test, bounded.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// stdioServer is the test binary as a stdio server configured by o, each
// of whose processes appends its pid to the returned file.
func stdioServer(t *testing.T, o testservers.Options) (client.Target, string) {
	t.Helper()
	pidLog := filepath.Join(t.TempDir(), "pids")
	o.Stdio.PIDLog = pidLog
	path, args, _ := testservers.StdioCommand()
	env := append(testservers.StdioEnv(o), "GORACE=atexit_sleep_ms=0")
	return client.Command(path, args...).WithEnv(env...), pidLog
}

// pids returns the pids logged in pidLog (none when no process started).
func pids(t *testing.T, pidLog string) []int {
	t.Helper()
	b, err := os.ReadFile(pidLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid log %q: %v", b, err)
		}
		out = append(out, pid)
	}
	return out
}

// checkGone fails the test for every logged process still there.
func checkGone(t *testing.T, pidLogs ...string) {
	t.Helper()
	for _, l := range pidLogs {
		for _, pid := range pids(t, l) {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process %d (%s) outlived its use: %v", pid, l, err)
			}
		}
	}
}

// deadURL is an MCP URL on a loopback port nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}

// recorder keeps the state changes a fleet reported, and wakes waiters.
type recorder struct {
	mu     sync.Mutex
	seen   []Status
	notify chan struct{}
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{}, 1)} }

func (r *recorder) record(_, s Status) {
	r.mu.Lock()
	r.seen = append(r.seen, s)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *recorder) all() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Status(nil), r.seen...)
}

// wait waits for a change that cond holds for, counting from the
// from-th change, and returns its index.
func (r *recorder) wait(ctx context.Context, t *testing.T, from int, cond func(Status) bool) int {
	t.Helper()
	for {
		for i, s := range r.all() {
			if i >= from && cond(s) {
				return i
			}
		}
		select {
		case <-r.notify:
		case <-ctx.Done():
			t.Fatalf("no such state change; seen: %v", r.all())
		}
	}
}

// index returns the index of the first change cond holds for, or -1.
func (r *recorder) index(cond func(Status) bool) int {
	for i, s := range r.all() {
		if cond(s) {
			return i
		}
	}
	return -1
}

func is(server string, st State) func(Status) bool {
	return func(s Status) bool { return s.Server == server && s.State == st }
}

// text is the text of a tool result's first content.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) == 0 {
		t.Fatalf("result without content: %+v", res)
	}
	if c := res.Content[0]; c.Type != "text" {
		t.Fatalf("content %q, want text", c.Type)
	}
	return res.Content[0].Text
}

// toolNamed returns the fleet tool of server with the tool's own name.
func toolNamed(cat *Catalogue, server, name string) (Tool, bool) {
	for _, t := range cat.Tools {
		if t.Server == server && t.Tool.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}
