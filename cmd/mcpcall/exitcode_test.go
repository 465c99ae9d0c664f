package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// refusedURL is a URL on a loopback port nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}

// TestExitCodes provokes every exit code for real, one by one.
func TestExitCodes(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	unauthorized := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusUnauthorized, PostHeader: http.Header{"Www-Authenticate": {`Bearer realm="mcp"`}}})
	defer unauthorized.Close()
	forbidden := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusForbidden})
	defer forbidden.Close()
	unavailable := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusInternalServerError})
	defer unavailable.Close()
	notMCP := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusNotFound, GETStatus: http.StatusNotFound})
	defer notMCP.Close()
	slowConnect := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusOK, PostDelay: 10 * time.Second})
	defer slowConnect.Close()
	u := srv.URL

	cases := []struct {
		name string
		code int
		args []string
	}{
		{"ok", exitOK, []string{"ping", u}},
		{"tool isError", exitToolError, []string{"tools", "call", "fail", u}},
		{"raw tools/call isError", exitToolError, []string{"call", "tools/call", "--params", `{"name":"fail","arguments":{}}`, u}},
		{"raw tools/call ok", exitOK, []string{"call", "tools/call", "--params", `{"name":"add","arguments":{"a":1,"b":2}}`, u}},
		{"no target", exitUsage, []string{"tools", "list"}},
		{"unknown flag", exitUsage, []string{"tools", "list", "--bogus", u}},
		{"unknown command", exitUsage, []string{"frobnicate", u}},
		{"missing tool name", exitUsage, []string{"tools", "call", u}},
		{"bad --args JSON", exitUsage, []string{"tools", "call", "echo", "--args", "{nope", u}},
		{"--args not an object", exitUsage, []string{"tools", "call", "echo", "--args", "[1]", u}},
		{"bad pair", exitUsage, []string{"tools", "call", "echo", "=x", u}},
		{"unknown server name", exitUsage, []string{"ping", "nosuchserver"}},
		{"ftp URL", exitUsage, []string{"ping", "ftp://example.com/mcp"}},
		{"-e with a URL", exitUsage, []string{"ping", "-e", "A=b", u}},
		{"-H with a command", exitUsage, append([]string{"ping", "-H", "X-A: b"}, stdioTarget(testservers.Options{})...)},
		{"--transport stdio with a URL", exitUsage, []string{"ping", "--transport", "stdio", u}},
		{"--transport bogus", exitUsage, []string{"ping", "--transport", "carrier-pigeon", u}},
		{"--bearer-env unset", exitUsage, []string{"ping", "--bearer-env", "MCPCALL_TEST_UNSET_TOKEN", u}},
		{"--log-level bogus", exitUsage, []string{"ping", "--log-level", "chatty", u}},
		{"401", exitAuth, []string{"ping", unauthorized.URL}},
		{"403", exitAuth, []string{"tools", "list", forbidden.URL}},
		// the library retries a refused connection under its reconnect
		// policy; --connect-timeout bounds that and the error stays "refused"
		{"refused", exitConnect, []string{"ping", "--connect-timeout", "1s", refusedURL(t)}},
		{"500, no fallback", exitConnect, []string{"ping", unavailable.URL}},
		{"not an MCP endpoint", exitConnect, []string{"ping", notMCP.URL}},
		{"no such command", exitConnect, []string{"ping", "--", "/nonexistent/mcp-server"}},
		{"unknown tool, found locally", exitRPC, []string{"tools", "call", "ech", "text=x", u}},
		{"unknown tool, from the server", exitRPC, []string{"tools", "call", "--no-validate", "nosuchtool", u}},
		{"invalid arguments", exitRPC, []string{"tools", "call", "add", "a=1", u}},
		{"unknown method", exitRPC, []string{"call", "bogus/method", u}},
		{"unknown resource", exitRPC, []string{"resources", "read", "test://nope", u}},
		{"unknown prompt", exitRPC, []string{"prompts", "get", "gret", u}},
		{"--timeout", exitTimeout, []string{"tools", "call", "slow", "steps=1", "delayMs=5000", "--timeout", "200ms", u}},
		{"--max-time", exitTimeout, []string{"tools", "call", "slow", "steps=20", "delayMs=100", "--timeout", "1s", "--max-time", "400ms", u}},
		{"--connect-timeout", exitTimeout, []string{"ping", "--connect-timeout", "200ms", slowConnect.URL}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			res := r.run(tc.args...)
			if res.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, tc.code, res.stdout, res.stderr)
			}
			if tc.code != exitOK && !strings.Contains(res.stderr, "mcpcall:") {
				t.Errorf("no error message on stderr: %q", res.stderr)
			}
			if tc.code > exitToolError && res.stdout != "" {
				t.Errorf("stdout not empty on failure: %q", res.stdout)
			}
		})
	}
}

// TestExitCodeJSONErrors checks the one JSON line --json writes on stderr
// for each kind of failure.
func TestExitCodeJSONErrors(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	unauthorized := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusUnauthorized})
	defer unauthorized.Close()
	// initialize refused with a JSON-RPC error: the ladder chose
	// Streamable HTTP, and the handshake on it failed
	refusesInit := statusServer(t, testservers.StatusOptions{PostStatus: http.StatusOK, PostContentType: "application/json",
		PostBody: `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"database down"}}`})
	_, protected := protectedServer(t, oauthserver.AuthServerOptions{})
	cases := []struct {
		args      []string
		code      int
		kind      string
		status    float64
		rpcCode   float64
		transport string
		url       string
	}{
		{[]string{"ping", unauthorized.URL}, exitAuth, kindAuth, 401, 0, "streamable-http", unauthorized.URL},
		{[]string{"ping", "--era", "initialize", refusesInit}, exitConnect, kindConnect, 0, -32603, "streamable-http", refusesInit},
		{[]string{"ping", protected.URL}, exitAuth, kindAuth, 401, 0, "streamable-http", protected.URL},
		{[]string{"call", "bogus/method", srv.URL}, exitRPC, kindRPC, 0, -32601, "streamable-http", srv.URL},
		{[]string{"tools", "call", "ech", srv.URL}, exitRPC, kindRPC, 0, -32602, "streamable-http", srv.URL},
		{[]string{"tools", "list"}, exitUsage, kindUsage, 0, 0, "", ""},
		{[]string{"tools", "call", "fail", srv.URL}, exitToolError, kindToolError, 0, 0, "streamable-http", srv.URL},
		{[]string{"call", "tools/call", "--params", `{"name":"fail"}`, srv.URL}, exitToolError, kindToolError, 0, 0, "streamable-http", srv.URL},
		{[]string{"tools", "call", "slow", "steps=1", "delayMs=3000", "--timeout", "100ms", srv.URL}, exitTimeout, kindTimeout, 0, 0, "streamable-http", srv.URL},
	}
	for _, tc := range cases {
		r := newRunner(t)
		res := r.run(append([]string{"--json"}, tc.args...)...)
		if res.code != tc.code {
			t.Errorf("%v: exit %d, want %d; stderr %s", tc.args, res.code, tc.code, res.stderr)
			continue
		}
		lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
		var line struct {
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &line); err != nil || line.Error == nil {
			t.Errorf("%v: last stderr line is not an error object: %q", tc.args, res.stderr)
			continue
		}
		e := line.Error
		for _, k := range []string{"kind", "message", "status", "code", "url"} {
			if _, ok := e[k]; !ok {
				t.Errorf("%v: error has no %q: %v", tc.args, k, e)
			}
		}
		// the transport is named when one was in use or tried, and
		// left out (never null) when none was
		if tr, ok := e["transport"]; ok != (tc.transport != "") || ok && tr == nil {
			t.Errorf("%v: transport %v (present %v), want %q", tc.args, tr, ok, tc.transport)
		}
		if e["kind"] != tc.kind || e["message"] == "" {
			t.Errorf("%v: kind %v, want %s (message %q)", tc.args, e["kind"], tc.kind, e["message"])
		}
		if status, _ := e["status"].(float64); status != tc.status {
			t.Errorf("%v: status %v, want %v", tc.args, e["status"], tc.status)
		}
		if code, _ := e["code"].(float64); code != tc.rpcCode {
			t.Errorf("%v: code %v, want %v", tc.args, e["code"], tc.rpcCode)
		}
		if tr, _ := e["transport"].(string); tr != tc.transport {
			t.Errorf("%v: transport %v, want %q", tc.args, e["transport"], tc.transport)
		}
		if u, _ := e["url"].(string); u != tc.url {
			t.Errorf("%v: url %v, want %q", tc.args, e["url"], tc.url)
		}
	}
}

// TestInterrupt cancels the context mid-call, as Ctrl-C does: exit 130,
// and the call is cancelled as --help says: the server is told with
// notifications/cancelled, except a 2026-07-28 server over HTTP, which
// sees the call's stream closed (and no notification).
func TestInterrupt(t *testing.T) {
	for _, tr := range []string{"http", "sse", "modern"} {
		t.Run(tr, func(t *testing.T) {
			var url string
			var server *testservers.Server
			switch tr {
			case "http":
				srv := testservers.StartStreamable(testservers.HTTPOptions{})
				defer srv.Close()
				url, server = srv.URL, srv.Server()
			case "sse":
				srv := testservers.StartLegacy(testservers.LegacyOptions{})
				defer srv.Close()
				url, server = srv.URL, srv.Server()
			case "modern":
				srv := testservers.StartStateless(testservers.HTTPOptions{})
				defer srv.Close()
				url, server = srv.URL, srv.Server()
			}
			wait := func(cond func(testservers.Stats) bool) testservers.Stats {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				st, _ := server.WaitStats(ctx, cond)
				return st
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				wait(func(st testservers.Stats) bool { return st.ToolCalls["slow"] > 0 })
				cancel()
			}()
			r := newRunner(t)
			r.ctx = ctx
			res := r.run("tools", "call", "slow", "steps=1", "delayMs=10000", url)
			if res.code != exitInterrupt {
				t.Fatalf("exit %d, want 130; stderr %s", res.code, res.stderr)
			}
			st := wait(func(st testservers.Stats) bool { return st.RequestsCancelled > 0 })
			wantNotes := 1
			if tr == "modern" {
				wantNotes = 0
			}
			if st.Cancelled != wantNotes || st.RequestsCancelled != 1 {
				t.Errorf("the server saw %d notifications/cancelled (want %d) and %d calls cancelled (want 1)", st.Cancelled, wantNotes, st.RequestsCancelled)
			}
		})
	}
}

// TestCancelHelp: the help of tools call and the exit status table say
// how a call given up is cancelled in each era, as TestInterrupt sees it.
func TestCancelHelp(t *testing.T) {
	for _, args := range [][]string{{"tools", "call", "--help"}, {"--help"}} {
		out := strings.Join(strings.Fields(newRunner(t).runOK(args...).stdout), " ")
		for _, want := range []string{"notifications/cancelled", "2026-07-28 server over HTTP", "stream closed"} {
			if !strings.Contains(out, want) {
				t.Errorf("mcpcall %s does not say %q", strings.Join(args, " "), want)
			}
		}
	}
}

// TestInterruptStdio: Ctrl-C during a call to a stdio server exits 130,
// and notifications/cancelled reaches the server's stdin (a tee in front
// of the server records it).
func TestInterruptStdio(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newRunner(t)
	r.ctx = ctx
	log := filepath.Join(r.home, "stdin.log")
	go func() {
		testkit.Poll(10*time.Second, func() bool { // another process writes the log
			b, _ := os.ReadFile(log)
			return strings.Contains(string(b), `"tools/call"`)
		})
		cancel()
	}()
	target := shellFront(`tee "` + log + `" | "$0"; exit`) // the exec after it is never reached
	res := r.run(append([]string{"tools", "call", "slow", "steps=1", "delayMs=10000"}, target...)...)
	if res.code != exitInterrupt {
		t.Fatalf("exit %d, want 130; stderr %s", res.code, res.stderr)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"method":"notifications/cancelled"`) {
		t.Errorf("the server's stdin never got notifications/cancelled:\n%s", b)
	}
}

// TestTimeoutSendsCancelled: a request given up for --timeout is
// cancelled on the server too.
func TestTimeoutSendsCancelled(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	res := r.run("tools", "call", "slow", "steps=1", "delayMs=5000", "--timeout", "150ms", srv.URL)
	if res.code != exitTimeout {
		t.Fatalf("exit %d, want 6; stderr %s", res.code, res.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if st, _ := srv.Server().WaitStats(ctx, func(st testservers.Stats) bool { return st.Cancelled > 0 }); st.Cancelled != 1 {
		t.Errorf("server saw %d cancellations, want 1", st.Cancelled)
	}
}

// TestTimeoutResetByProgress: --timeout is per answer and every progress
// notification restarts it, so a long call that reports progress lives.
func TestTimeoutResetByProgress(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	res := r.runOK("tools", "call", "slow", "steps=6", "delayMs=100", "--timeout", "300ms", srv.URL)
	if !strings.Contains(res.stdout, "done 6 steps") {
		t.Errorf("stdout %q", res.stdout)
	}
	if !strings.Contains(res.stderr, "progress 6/6 step 6 of 6") {
		t.Errorf("no progress lines on stderr: %q", res.stderr)
	}
}

// TestZeroAndNegativeLimits: 0 means no limit for --connect-timeout as
// for --timeout and --max-time, where --connect-timeout 0 failed at once
// (exit 6); a negative limit is a usage error, where it was taken as none
// (--timeout, --max-time) or as one already run out.
func TestZeroAndNegativeLimits(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	newRunner(t).runOK("ping", "--connect-timeout", "0", "--timeout", "0", "--max-time", "0", srv.URL)
	newRunner(t).runOK("tools", "call", "echo", "text=hi", "--connect-timeout", "0", srv.URL)
	for _, flag := range []string{"--connect-timeout", "--timeout", "--max-time"} {
		res := newRunner(t).run("ping", flag, "-1s", srv.URL)
		if want := flag + " -1s: want a duration of 0 or more (0: no limit)"; res.code != exitUsage || !strings.Contains(res.stderr, want) {
			t.Errorf("%s -1s: exit %d, want %d and %q\n%s", flag, res.code, exitUsage, want, res.stderr)
		}
	}
}

// TestBridgedLostAnswerExitsAsConnection: a bridge's error that says the
// answer was lost (data outcome "unknown") exits as a direct lost answer
// does, 4, not as a server's refusal; "not-run" stays a JSON-RPC error.
func TestBridgedLostAnswerExitsAsConnection(t *testing.T) {
	base := jsonrpc.NewError(jsonrpc.CodeInternalError, "the upstream's answer was lost")
	cases := []struct {
		err  error
		code int
	}{
		{base.WithOutcome(jsonrpc.OutcomeUnknown), exitConnect},
		{fmt.Errorf("tools/call: %w", base.WithOutcome(jsonrpc.OutcomeUnknown)), exitConnect},
		{base.WithOutcome(jsonrpc.OutcomeNotRun), exitRPC},
		{base, exitRPC},
	}
	for _, c := range cases {
		if got := classify(c.err, false).code; got != c.code {
			t.Errorf("classify(%v) = %d, want %d", c.err, got, c.code)
		}
	}
}
