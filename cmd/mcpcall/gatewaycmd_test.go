//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/pin"
	"github.com/anymcp/anymcp/testservers"
)

// gatewayFleet writes a config of two servers of different eras and
// transports: "st", a stateless-only stdio server (this test binary, which
// writes its PID to pidFile), and "web", an initialize-era Streamable
// HTTP server.
func gatewayFleet(t *testing.T, dir string) (config, pidFile string) {
	t.Helper()
	web := testservers.StartStreamable(testservers.HTTPOptions{})
	t.Cleanup(web.Close)
	path, _, _ := testservers.StdioCommand()
	pidFile = filepath.Join(dir, "st.pid")
	st, _ := json.Marshal(map[string]any{
		"command": path,
		"env": map[string]string{
			testservers.EnvVar: "stdio", testservers.EnvName: "st", testservers.EnvEras: "stateless",
			testservers.EnvPIDFile: pidFile, "GORACE": "atexit_sleep_ms=0",
		},
	})
	config = writeFile(t, filepath.Join(dir, "fleet.json"), `{"mcpServers": {"st": `+string(st)+`, "web": {"type": "http", "url": "`+web.URL+`"}}}`)
	return config, pidFile
}

// pidFileGone fails the test unless the process whose PID pidFile holds has
// exited (the bridge waits for its servers before it exits).
func pidFileGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the stdio server never started: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the stdio server (pid %d) outlived the bridge: kill 0: %v", pid, err)
	}
}

// bridgeProc is a running mcpcall bridge --all --listen.
type bridgeProc struct {
	url    string
	lines  chan string
	exited chan error
	cmd    *exec.Cmd
}

// startBridgeAll runs mcpcall bridge --all --listen 127.0.0.1:0 args...
// with a home of its own under dir.
func startBridgeAll(t *testing.T, dir string, env []string, args ...string) *bridgeProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{"bridge", "--all", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), asMCPCall+"=1", "GORACE=atexit_sleep_ms=0", "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &bridgeProc{lines: make(chan string, 256), exited: make(chan error, 1), cmd: cmd}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck // already gone, normally
		for range p.lines {
		}
	})
	p.url = strings.TrimPrefix(p.waitLine(t, "listening on "), "listening on ")
	return p
}

// waitLine returns the first stderr line that contains s.
func (p *bridgeProc) waitLine(t *testing.T, s string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("mcpcall bridge --all ended before writing %q", s)
			}
			if strings.Contains(l, s) {
				return l
			}
		case <-timeout:
			t.Fatalf("no line with %q in 30 s", s)
		}
	}
}

// stop sends SIGTERM and waits for the exit.
func (p *bridgeProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range p.lines {
	}
	p.waitExited(t)
}

// waitExited waits for the exit after SIGTERM, and fails on an exit
// other than 0.
func (p *bridgeProc) waitExited(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("mcpcall bridge --all: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after SIGTERM")
	}
}

// toolNames lists conn's tools.
func toolNames(ctx context.Context, t *testing.T, conn *client.Conn) []string {
	t.Helper()
	tools, err := conn.AllTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// callEcho calls name (an echo tool) and checks its answer.
func callEcho(ctx context.Context, t *testing.T, conn *client.Conn, name string) {
	t.Helper()
	res, err := conn.CallTool(ctx, name, map[string]any{"text": "via " + name})
	if err != nil || len(res.Content) == 0 || res.Content[0].Text != "via "+name {
		t.Fatalf("%s: %+v, %v", name, res, err)
	}
}

// bridge --all --listen serves both servers' tools under their fleet
// names, and a view of --gateway FILE at /mcp/VIEW with only its part (a
// view with "ownNames" under the server's own names); the stdio server is
// gone once the bridge has exited.
func TestBridgeAllListen(t *testing.T) {
	dir := t.TempDir()
	config, pidFile := gatewayFleet(t, dir)
	gw := writeFile(t, filepath.Join(dir, "gateway.json"), `{"views": [{"name": ""}, {"name": "team", "allow": ["server:web"]}, {"name": "own", "allow": ["server:web"], "ownNames": true}], "pins": {"file": false}}`)
	p := startBridgeAll(t, dir, nil, "--config", config, "--gateway", gw)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := client.Dial(ctx, client.URL(p.url))
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(ctx, t, conn)
	for _, want := range []string{"st__echo", "web__echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list at /mcp has no %s: %v", want, names)
		}
	}
	callEcho(ctx, t, conn, "st__echo")
	callEcho(ctx, t, conn, "web__echo")
	_ = conn.Close()

	team, err := client.Dial(ctx, client.URL(p.url+"/team"))
	if err != nil {
		t.Fatal(err)
	}
	names = toolNames(ctx, t, team)
	if !slices.Contains(names, "web__echo") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "st__") }) {
		t.Errorf("tools/list at /mcp/team: %v, want web's tools only", names)
	}
	if _, err := team.CallTool(ctx, "st__echo", map[string]any{"text": "x"}); err == nil {
		t.Error("view team called st__echo, which it excludes")
	}
	_ = team.Close()

	own, err := client.Dial(ctx, client.URL(p.url+"/own"))
	if err != nil {
		t.Fatal(err)
	}
	names = toolNames(ctx, t, own)
	if !slices.Contains(names, "echo") || slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "__") }) {
		t.Errorf("tools/list at /mcp/own: %v, want web's tools under their own names", names)
	}
	callEcho(ctx, t, own, "echo")
	_ = own.Close()
	p.stop(t)
	pidFileGone(t, pidFile)
}

// bridge --all without --listen is a stdio server of the whole fleet.
func TestBridgeAllStdio(t *testing.T) {
	dir := t.TempDir()
	config, pidFile := gatewayFleet(t, dir)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	target := client.Command(self, "bridge", "--all", "--config", config).
		WithEnv(asMCPCall+"=1", "GORACE=atexit_sleep_ms=0", "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	conn, err := client.Dial(ctx, target, client.WithProbeTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(ctx, t, conn)
	if !slices.Contains(names, "st__echo") || !slices.Contains(names, "web__echo") {
		t.Errorf("tools/list: %v", names)
	}
	callEcho(ctx, t, conn, "st__echo")
	callEcho(ctx, t, conn, "web__echo")
	if err := conn.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	pidFileGone(t, pidFile)
	// The default pin file was written under the bridge's own home.
	if _, err := os.Stat(filepath.Join(dir, "config", "anymcp", "pins.json")); err != nil {
		t.Errorf("pins are on by default, but: %v", err)
	}
}

// --gateway FILE refuses a token written in it and an unknown member,
// each by name, before any server is started.
func TestBridgeAllGatewayFileRefused(t *testing.T) {
	r := newRunner(t)
	config := writeFile(t, filepath.Join(r.cwd, "fleet.json"), `{"mcpServers": {"web": {"url": "http://127.0.0.1:1/mcp"}}}`)
	for _, tc := range []struct{ file, want string }{
		{`{"views": [{"name": "team", "token": "s3cr3t-s3cr3t-s3cr3t"}]}`, "views[0].token: a token is never written in the file"},
		{`{"views": [{"name": "team", "alow": ["server:web"]}]}`, `unknown field "alow"`},
		{`{"approvals": {"requires": ["*"]}}`, `unknown field "requires"`},
		{`{"pins": {"file": 3}}`, "pins.file"},
		{`{"views": [{"name": "team", "tokenEnv": "NOT_SET_ANYWHERE_GWCLI"}]}`, "is empty or not set"},
	} {
		gw := writeFile(t, filepath.Join(r.cwd, "gateway.json"), tc.file)
		res := r.run("bridge", "--all", "--config", config, "--gateway", gw, "--listen", "127.0.0.1:0")
		if res.code != exitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.file, res.code, res.stderr, tc.want)
		}
		if strings.Contains(res.stderr, "s3cr3t") {
			t.Errorf("the token is repeated: %q", res.stderr)
		}
	}
	res := r.run("bridge", "--all", "--config", config, "-H", "X: y")
	if res.code != exitUsage || !strings.Contains(res.stderr, "--header") {
		t.Errorf("--all -H: exit %d, stderr %q", res.code, res.stderr)
	}
	res = r.run("bridge", "--all", "--config", config, "--view", "team", "--listen", "127.0.0.1:0")
	if res.code != exitUsage || !strings.Contains(res.stderr, "/mcp/NAME") {
		t.Errorf("--view with --listen: exit %d, stderr %q", res.code, res.stderr)
	}
	res = r.run("bridge", "--all", "--config", config, "--view", "nosuch")
	if res.code != exitUsage || !strings.Contains(res.stderr, `--view "nosuch"`) {
		t.Errorf("--view nosuch: exit %d, stderr %q", res.code, res.stderr)
	}
	res = r.run("bridge", "--gateway", "x.json", "http://127.0.0.1:1/mcp")
	if res.code != exitUsage || !strings.Contains(res.stderr, "give --all") {
		t.Errorf("--gateway without --all: exit %d, stderr %q", res.code, res.stderr)
	}
}

// A tool whose definition is not the one pinned is held back, named on
// stderr with the command that approves it; pins approve releases it for
// the next run.
func TestBridgeAllPinsHeldThenApproved(t *testing.T) {
	dir := t.TempDir()
	config, _ := gatewayFleet(t, dir)
	pins := filepath.Join(dir, "pins.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The definition approved before the server changed it.
	old := json.RawMessage(`{"name": "echo", "description": "Echoes text (an older description).", "inputSchema": {"type": "object"}}`)
	if err := pin.New(pin.File(pins)).Approve(ctx, "web/echo", old); err != nil {
		t.Fatal(err)
	}
	gw := writeFile(t, filepath.Join(dir, "gateway.json"), `{"pins": {"file": "`+pins+`"}}`)

	p := startBridgeAll(t, dir, nil, "--config", config, "--gateway", gw)
	conn, err := client.Dial(ctx, client.URL(p.url))
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(ctx, t, conn)
	if slices.Contains(names, "web__echo") || !slices.Contains(names, "st__echo") {
		t.Errorf("tools/list: %v, want st__echo and no web__echo", names)
	}
	if _, err := conn.CallTool(ctx, "web__echo", map[string]any{"text": "x"}); err == nil {
		t.Error("a held tool was called")
	}
	_ = conn.Close()
	line := p.waitLine(t, `tool "web/echo" changed since it was approved`)
	if !strings.Contains(line, "description") {
		t.Errorf("the held line says not what changed: %q", line)
	}
	approveLine := p.waitLine(t, "approve it: ")
	p.stop(t)

	r := newRunner(t)
	res := r.run("pins", "approve", "web/echo", "--config", config, "--file", pins)
	if res.code != 0 {
		t.Fatalf("pins approve: exit %d, stderr %q", res.code, res.stderr)
	}
	if want := "mcpcall pins approve web/echo --config " + config + " --file " + pins; !strings.Contains(approveLine, want) {
		t.Errorf("approve line %q, want %q", approveLine, want)
	}
	res = r.run("pins", "approve", "web/echo", "--config", config, "--file", pins)
	if res.code != exitUsage || !strings.Contains(res.stderr, "not held back") {
		t.Errorf("approving again: exit %d, stderr %q", res.code, res.stderr)
	}
	list := r.runOK("pins", "list", "--file", pins)
	if !strings.Contains(list.stdout, "web/echo\tv1:") || !strings.Contains(list.stdout, "st/echo\t") {
		t.Errorf("pins list: %q", list.stdout)
	}

	p = startBridgeAll(t, dir, nil, "--config", config, "--gateway", gw)
	conn, err = client.Dial(ctx, client.URL(p.url))
	if err != nil {
		t.Fatal(err)
	}
	callEcho(ctx, t, conn, "web__echo")
	_ = conn.Close()
	p.stop(t)

	r.runOK("pins", "forget", "web/echo", "--file", pins)
	list = r.runOK("pins", "list", "--file", pins)
	if strings.Contains(list.stdout, "web/echo") {
		t.Errorf("forgotten, yet listed: %q", list.stdout)
	}
}

// The token of --auth-token-file admits clients to the default view; a
// view's tokenEnv token to that view only, at /mcp; no token, none.
func TestBridgeAllViewTokens(t *testing.T) {
	dir := t.TempDir()
	config, _ := gatewayFleet(t, dir)
	const def, team = "default-token-0123456789", "team-token-0123456789abc"
	tokenFile := writeFile(t, filepath.Join(dir, "token"), def+"\n")
	gw := writeFile(t, filepath.Join(dir, "gateway.json"), `{"views": [{"name": ""}, {"name": "team", "allow": ["server:web"], "tokenEnv": "GWCLI_TEAM_TOKEN"}], "pins": {"file": false}}`)
	p := startBridgeAll(t, dir, []string{"GWCLI_TEAM_TOKEN=" + team}, "--config", config, "--gateway", gw, "--auth-token-file", tokenFile)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if conn, err := client.Dial(ctx, client.URL(p.url)); err == nil {
		_ = conn.Close()
		t.Error("a client without a token was admitted")
	}
	for _, tc := range []struct {
		token  string
		st     bool // sees st's tools
		viewed string
	}{{def, true, "default"}, {team, false, "team"}} {
		conn, err := client.Dial(ctx, client.URL(p.url), client.WithHeader("Authorization", "Bearer "+tc.token))
		if err != nil {
			t.Fatalf("%s token: %v", tc.viewed, err)
		}
		names := toolNames(ctx, t, conn)
		hasSt := slices.Contains(names, "st__echo")
		if hasSt != tc.st || !slices.Contains(names, "web__echo") {
			t.Errorf("%s token: tools %v", tc.viewed, names)
		}
		_ = conn.Close()
	}
	p.stop(t)
}
