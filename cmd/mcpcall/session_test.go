//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/testservers"
)

// The session tests start real gateways: this test binary, run as
// mcpcall (asMCPCall), detached, over this test binary as a stdio test
// server. Every process is killed at the end of the test, pass or fail.

func init() {
	gatewayTestEnv = []string{asMCPCall + "=1", "GORACE=atexit_sleep_ms=0"}
}

// patienceSessions bounds every wait of these tests.
const patienceSessions = 15 * time.Second

// sessionRunner is a runner whose sessions live in a directory of the
// test's; the gateways are killed, with their processes, when it ends.
func sessionRunner(t *testing.T) (*runner, string) {
	t.Helper()
	r := newRunner(t)
	dir := filepath.Join(t.TempDir(), "s")
	r.env[envSessionDir] = dir
	t.Cleanup(func() {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
		for _, p := range paths {
			rec, _ := readRecord(sessionFiles{dir, strings.TrimSuffix(filepath.Base(p), ".pid")})
			if rec != nil && rec.PID > 0 {
				syscall.Kill(rec.PID, syscall.SIGKILL)
				killSessionProcesses(rec.PID, "")
			}
		}
	})
	return r, dir
}

// pidFileServer is the stdio test server's target line, writing its pid
// (and its grandchild's) to a file of the test's.
func pidFileServer(t *testing.T, f testservers.StdioFaults) (args []string, pidFile string) {
	pidFile = filepath.Join(t.TempDir(), "server.pid")
	f.PIDFile = pidFile
	return stdioTarget(testservers.Options{Stdio: f}), pidFile
}

// serverPIDs reads the pids the test server wrote: its own, then its
// grandchild's.
func serverPIDs(t *testing.T, pidFile string, want int) []int {
	t.Helper()
	var pids []int
	testkit.Eventually(t, patienceSessions, "the server's pid file", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return false
			}
			pids = append(pids, n)
		}
		return len(pids) >= want
	})
	return pids
}

// startSession runs session start and returns the gateway's record.
func startSessionOK(t *testing.T, r *runner, args ...string) (sessionRecord, bool) {
	t.Helper()
	res := r.runOK(append([]string{"session", "start", "--json"}, args...)...)
	var out struct {
		Session sessionRecord `json:"session"`
		Reused  bool          `json:"reused"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("session start --json: %v\n%s", err, res.stdout)
	}
	return out.Session, out.Reused
}

// gone reports whether pid has ended (a zombie has).
func gone(pid int) bool { return !processAlive(pid) }

// waitAllGone waits for every pid to end, and fails naming those alive.
func waitAllGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	if !testkit.Poll(patienceSessions, func() bool {
		return !slices.ContainsFunc(pids, processAlive)
	}) {
		alive := slices.DeleteFunc(slices.Clone(pids), gone)
		t.Fatalf("%s: processes %v still run", what, alive)
	}
}

// inSession lists the live processes of the Unix session sid: a gateway's
// and everything it started.
func inSession(sid int) []int {
	var out []int
	names, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range names {
		pid, _ := strconv.Atoi(filepath.Base(p))
		if st := procStat(pid); len(st) > 3 && st[3] == strconv.Itoa(sid) && st[0] != "Z" && st[0] != "X" {
			out = append(out, pid)
		}
	}
	return out
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestSessionStateSurvivesRuns counts with the test server's counter
// tool in two runs: through the session the second sees the first's
// count (a new server would say 1), and the server process is the same.
// Stop leaves no process and no file.
func TestSessionStateSurvivesRuns(t *testing.T) {
	r, dir := sessionRunner(t)
	server, pidFile := pidFileServer(t, testservers.StdioFaults{})
	rec, reused := startSessionOK(t, r, append([]string{"counting"}, server...)...)
	if reused || rec.PID <= 0 {
		t.Fatalf("start: %+v reused=%v", rec, reused)
	}
	child := serverPIDs(t, pidFile, 1)[0]

	// The socket is the user's only, in a directory that is too.
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "counting.sock"): 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}

	if got := strings.TrimSpace(r.runOK("tools", "call", "counter", "@counting").stdout); got != "1" {
		t.Fatalf("first run: counter = %q, want 1", got)
	}
	if got := strings.TrimSpace(r.runOK("tools", "call", "counter", "--session", "counting").stdout); got != "2" {
		t.Fatalf("second run: counter = %q, want 2: the state did not survive", got)
	}
	if now := serverPIDs(t, pidFile, 1)[0]; now != child {
		t.Errorf("the server process changed between runs: %d, then %d", child, now)
	}
	if procs := inSession(rec.PID); !slices.Contains(procs, rec.PID) || !slices.Contains(procs, child) {
		t.Errorf("processes of the gateway's session: %v, want the gateway %d and the server %d", procs, rec.PID, child)
	}

	res := r.runOK("session", "stop", "counting")
	if !strings.Contains(res.stderr, "session counting stopped") {
		t.Errorf("stop said %q", res.stderr)
	}
	waitAllGone(t, "after stop", rec.PID, child)
	if procs := inSession(rec.PID); len(procs) > 0 {
		t.Errorf("after stop, processes %v remain in the gateway's session", procs)
	}
	if names := dirEntries(t, dir); len(names) > 0 {
		t.Errorf("after stop the directory holds %v", names)
	}
	if res := r.run("ping", "@counting"); res.code != exitConnect || !strings.Contains(res.stderr, "no session counting") {
		t.Errorf("ping after stop: exit %d, %s", res.code, res.stderr)
	}
}

// TestSessionConcurrentStart starts one session from two runs at once:
// one gateway runs, the other run reuses it.
func TestSessionConcurrentStart(t *testing.T) {
	r, _ := sessionRunner(t)
	server, _ := pidFileServer(t, testservers.StdioFaults{})
	args := append([]string{"both"}, server...)
	var wg sync.WaitGroup
	recs := make([]sessionRecord, 2)
	reused := make([]bool, 2)
	begin := make(chan struct{})
	for i := range 2 {
		wg.Go(func() {
			<-begin
			recs[i], reused[i] = startSessionOK(t, r, args...)
		})
	}
	close(begin)
	wg.Wait()
	if t.Failed() {
		return
	}
	if recs[0].PID != recs[1].PID {
		t.Fatalf("two gateways: pids %d and %d", recs[0].PID, recs[1].PID)
	}
	if reused[0] == reused[1] {
		t.Errorf("reused = %v: want one start to start and one to reuse", reused)
	}
	// No second gateway was started at all: this process's children
	// running the gateway command are one.
	var gateways int
	names, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range names {
		pid, _ := strconv.Atoi(filepath.Base(p))
		if st := procStat(pid); len(st) > 1 && st[1] == strconv.Itoa(os.Getpid()) && isGateway(pid, "both") {
			gateways++
		}
	}
	if gateways != 1 {
		t.Errorf("%d gateway processes, want 1", gateways)
	}
	r.runOK("session", "stop", "both")
	waitAllGone(t, "after stop", recs[0].PID)
}

// TestSessionIdle lets a session go idle: its gateway ends by itself,
// with its server, and leaves no file.
func TestSessionIdle(t *testing.T) {
	r, dir := sessionRunner(t)
	server, pidFile := pidFileServer(t, testservers.StdioFaults{Grandchild: true})
	// Each request restarting the clock is TestIdleWatch's: here a run
	// could be cut between two of its requests on a busy machine.
	rec, _ := startSessionOK(t, r, append([]string{"--idle", "500ms", "idler"}, server...)...)
	pids := serverPIDs(t, pidFile, 2)
	waitAllGone(t, "after the idle timeout", append([]int{rec.PID}, pids...)...)
	if procs := inSession(rec.PID); len(procs) > 0 {
		t.Errorf("after the idle timeout, processes %v remain in the gateway's session", procs)
	}
	testkit.Eventually(t, patienceSessions, "the directory to empty", func() bool { return len(dirEntries(t, dir)) == 0 })
}

// TestSessionGatewayKilled kills a gateway with SIGKILL: its server dies
// with it (the parent-death signal), and the next run that looks finds
// the stale files, removes them, and kills what the server left (its
// grandchild, in the gateway's session).
func TestSessionGatewayKilled(t *testing.T) {
	for _, next := range [][]string{{"session", "list"}, {"ping", "@crashy"}, {"session", "start", "crashy"}} {
		t.Run(next[0]+" "+next[1], func(t *testing.T) {
			r, dir := sessionRunner(t)
			// The server outlives its stdin: only a signal ends it.
			server, pidFile := pidFileServer(t, testservers.StdioFaults{Grandchild: true, IgnoreStdinEOF: true})
			rec, _ := startSessionOK(t, r, append([]string{"crashy"}, server...)...)
			pids := serverPIDs(t, pidFile, 2)
			child, grandchild := pids[0], pids[1]
			if err := syscall.Kill(rec.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitAllGone(t, "the server after its gateway's SIGKILL", rec.PID, child)
			if gone(grandchild) {
				t.Fatalf("the grandchild %d is gone already: the test shows nothing", grandchild)
			}

			args := next
			if next[0] == "session" && next[1] == "start" {
				server2, _ := pidFileServer(t, testservers.StdioFaults{})
				args = append(slices.Clone(next), server2...)
			}
			res := r.run(args...)
			switch next[0] {
			case "ping":
				if res.code != exitConnect || !strings.Contains(res.stderr, "session crashy is not running") {
					t.Errorf("ping: exit %d, %s", res.code, res.stderr)
				}
			default:
				if res.code != 0 {
					t.Fatalf("%v: exit %d, %s", args, res.code, res.stderr)
				}
			}
			waitAllGone(t, "the grandchild after the cleanup", grandchild)
			names := dirEntries(t, dir)
			if next[1] == "start" {
				r.runOK("session", "stop", "crashy")
				names = dirEntries(t, dir)
			}
			if slices.Contains(names, "crashy.sock") || slices.Contains(names, "crashy.pid") {
				t.Errorf("stale files remain: %v", names)
			}
		})
	}
}

// TestSessionTargetRules checks what @NAME and --session mean next to the
// other targets.
func TestSessionTargetRules(t *testing.T) {
	r, _ := sessionRunner(t)
	path, args, _ := testservers.StdioCommand()
	cfg := map[string]any{"mcpServers": map[string]any{
		"@team": map[string]any{"command": path, "args": args, "env": map[string]string{"ANYMCP_TESTSERVER": "stdio", "GORACE": "atexit_sleep_ms=0"}},
	}}
	b, _ := json.Marshal(cfg)
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), string(b))
	// A config server named @team is reached with --server; @team is a
	// session, always.
	r.runOK("ping", "--server", "@team")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ping", "@team"}, exitConnect, "no session team"},
		{[]string{"ping", "--session", "team"}, exitConnect, "no session team"},
		{[]string{"ping", "@a:b"}, exitUsage, `session name "a:b"`},
		{[]string{"ping", "@modelcontextprotocol/server-memory"}, exitUsage, "a command goes after `--`"},
		{[]string{"ping", "--session", "x", "--server", "y"}, exitUsage, "either --session or --server"},
		{[]string{"ping", "--session", "x", "--", "cmd"}, exitUsage, "either --session or `-- command`"},
		{[]string{"ping", "-H", "A: b", "@x"}, exitUsage, "belong to `mcpcall session start`"},
		{[]string{"session", "start", "n", "@x"}, exitConnect, "no session x"},
		{[]string{"session", "start", "n/m", "https://example.com/mcp"}, exitUsage, `session name "n/m"`},
		{[]string{"session", "start", "n", "--all", "x"}, exitUsage, "takes no target"},
		{[]string{"session", "start", "n", "--all", "-H", "A: b"}, exitUsage, "--header sets one server's connection"},
		{[]string{"session", "start", "n", "--gateway", "g.json", "https://example.com/mcp"}, exitUsage, "give --all"},
		{[]string{"session", "stop", "nothing"}, exitOK, "session nothing was not running"},
	}
	for _, c := range cases {
		res := r.run(c.args...)
		if res.code != c.code || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q; stderr:\n%s", c.args, res.code, c.code, c.want, res.stderr)
		}
	}
}

// TestSessionStartFails starts a session whose server exits at once: the
// run says why, and no process or socket is left.
func TestSessionStartFails(t *testing.T) {
	r, dir := sessionRunner(t)
	res := r.run("session", "start", "broken", "--connect-timeout", "5s", "--", "sh", "-c", "echo the server says no >&2; exit 3")
	if res.code != exitConnect || !strings.Contains(res.stderr, "the gateway did not start") || !strings.Contains(res.stderr, "status 3") {
		t.Fatalf("exit %d, stderr:\n%s", res.code, res.stderr)
	}
	names := dirEntries(t, dir)
	if slices.Contains(names, "broken.sock") || slices.Contains(names, "broken.pid") {
		t.Errorf("files left: %v", names)
	}
}

// TestSessionDirChecks refuses a sessions directory others can reach.
func TestSessionDirChecks(t *testing.T) {
	base := t.TempDir()
	ok := filepath.Join(base, "ok", "sessions")
	if _, err := ensurePrivateDir(ok); err != nil {
		t.Fatalf("a new directory: %v", err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o755)
	groupParent := filepath.Join(base, "gw")
	os.Mkdir(groupParent, 0o700)
	os.Chmod(groupParent, 0o775)
	link := filepath.Join(base, "link")
	os.Symlink(ok, link)
	for dir, want := range map[string]string{
		open:                                 "has mode -rwxr-xr-x",
		filepath.Join(groupParent, "s"):      "others could reach",
		link:                                 "not a directory",
		filepath.Join(base, "ok", "..", "x"): "",
	} {
		_, err := ensurePrivateDir(dir)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", dir, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want %q", dir, err, want)
		}
	}
}

// TestSessionSweepSparesOthers: the sweep of a dead gateway's Unix
// session leaves alone a session whose leader is alive and no gateway:
// the dead gateway's pid went to it, and so did the session id.
func TestSessionSweepSparesOthers(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	killSessionProcesses(cmd.Process.Pid, "reused")
	if !processAlive(cmd.Process.Pid) {
		t.Fatal("the sweep killed a session that is not a gateway's")
	}
}

// TestSessionCompletion completes --session with the running sessions'
// names.
func TestSessionCompletion(t *testing.T) {
	r, _ := sessionRunner(t)
	server, _ := pidFileServer(t, testservers.StdioFaults{})
	startSessionOK(t, r, append([]string{"completed"}, server...)...)
	res := r.runOK("__complete", "tools", "list", "--session", "comp")
	if !strings.HasPrefix(res.stdout, "completed\n") {
		t.Errorf("completions of --session comp:\n%s", res.stdout)
	}
	// The name is taken: a start of it for another target is refused.
	other := r.run(append([]string{"session", "start", "completed", "-e", "OTHER=1"}, server...)...)
	if other.code != exitUsage || !strings.Contains(other.stderr, "session completed already runs, for") {
		t.Errorf("a second start for another target: exit %d, %s", other.code, other.stderr)
	}
	r.runOK("session", "stop", "completed")
}

// TestSessionAll starts a session of the whole fleet (--all): one stdio
// server, one HTTP. Runs through it list both servers' tools under their
// fleet names, and the stdio server's counter counts on across runs (a
// new server process would say 1 again). Stop leaves no process and no
// file.
func TestSessionAll(t *testing.T) {
	r, dir := sessionRunner(t)
	config, pidFile := gatewayFleet(t, t.TempDir())
	pins := filepath.Join(t.TempDir(), "pins.json")
	gw := writeFile(t, filepath.Join(r.cwd, "gateway.json"), `{"pins": {"file": "`+pins+`"}}`)
	rec, reused := startSessionOK(t, r, "fleet", "--all", "--config", config, "--gateway", "gateway.json")
	if reused || rec.PID <= 0 || rec.Target != "--all --config "+config {
		t.Fatalf("start: %+v reused=%v", rec, reused)
	}
	if list := r.runOK("session", "list").stdout; !strings.Contains(strings.Join(strings.Fields(list), " "), "fleet --all --config "+config+" ") {
		t.Errorf("session list does not show the fleet's session:\n%s", list)
	}
	// The same line again reuses it (the relative --gateway made absolute
	// is the same file).
	if again, reused := startSessionOK(t, r, "fleet", "--all", "--config", config, "--gateway", gw); !reused || again.PID != rec.PID {
		t.Errorf("a second start: pid %d reused=%v, want pid %d reused", again.PID, reused, rec.PID)
	}

	var names []string
	for _, l := range strings.Split(r.runOK("tools", "list", "@fleet").stdout, "\n") {
		if name, _, ok := strings.Cut(l, "("); ok {
			names = append(names, strings.TrimSpace(name))
		}
	}
	for _, want := range []string{"st__echo", "st__counter", "web__echo", "web__counter"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools list @fleet has no %s: %v", want, names)
		}
	}
	if got := strings.TrimSpace(r.runOK("tools", "call", "st__counter", "@fleet").stdout); got != "1" {
		t.Fatalf("first run: st__counter = %q, want 1", got)
	}
	child := serverPIDs(t, pidFile, 1)[0]
	if got := strings.TrimSpace(r.runOK("tools", "call", "st__counter", "--session", "fleet").stdout); got != "2" {
		t.Fatalf("second run: st__counter = %q, want 2: the state did not survive", got)
	}
	if now := serverPIDs(t, pidFile, 1)[0]; now != child {
		t.Errorf("the stdio server changed between runs: %d, then %d", child, now)
	}
	if procs := inSession(rec.PID); !slices.Contains(procs, child) {
		t.Errorf("processes of the gateway's session: %v, want the stdio server %d", procs, child)
	}
	if _, err := os.Stat(pins); err != nil {
		t.Errorf("the pins of --gateway FILE were not written: %v", err)
	}

	r.runOK("session", "stop", "fleet")
	waitAllGone(t, "after stop", rec.PID, child)
	if procs := inSession(rec.PID); len(procs) > 0 {
		t.Errorf("after stop, processes %v remain in the gateway's session", procs)
	}
	if names := dirEntries(t, dir); len(names) > 0 {
		t.Errorf("after stop the directory holds %v", names)
	}
}

// TestSessionAllGatewayFile refuses, for a session of the fleet, what
// its socket cannot serve: a view's token, "access", no default view.
// No gateway is left running.
func TestSessionAllGatewayFile(t *testing.T) {
	r, dir := sessionRunner(t)
	config := writeFile(t, filepath.Join(r.cwd, "fleet.json"), `{"mcpServers": {"web": {"url": "http://127.0.0.1:1/mcp"}}}`)
	tokenFile := writeFile(t, filepath.Join(r.cwd, "token"), "team-token-0123456789abc\n")
	for _, tc := range []struct{ file, want string }{
		{`{"views": [{"name": ""}, {"name": "team", "tokenFile": "` + tokenFile + `"}], "pins": {"file": false}}`, "admits only you"},
		{`{"access": {"resource": "https://example.com/mcp"}, "pins": {"file": false}}`, "admits only you"},
		{`{"views": [{"name": "team"}], "pins": {"file": false}}`, "serves the default view"},
	} {
		gw := writeFile(t, filepath.Join(r.cwd, "gateway.json"), tc.file)
		res := r.run("session", "start", "refused", "--all", "--config", config, "--gateway", gw)
		if res.code == 0 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.file, res.code, res.stderr, tc.want)
		}
		if names := dirEntries(t, dir); slices.Contains(names, "refused.sock") || slices.Contains(names, "refused.pid") {
			t.Errorf("%s: files left: %v", tc.file, names)
		}
	}
}
