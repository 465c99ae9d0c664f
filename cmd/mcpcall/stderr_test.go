package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/testservers"
)

// Everything that is not the result goes to stderr: progress, server
// logs, server stderr, -v. These tests check what, and in which shape.

func TestProgressLines(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			res := r.runOK(append([]string{"tools", "call", "slow", "steps=3", "delayMs=10"}, tc.target(t)...)...)
			want := "progress 1/3 step 1 of 3\nprogress 2/3 step 2 of 3\nprogress 3/3 step 3 of 3\n"
			if res.stderr != want || res.stdout != "done 3 steps\n" {
				t.Errorf("stdout %q\nstderr %q", res.stdout, res.stderr)
			}
		})
	}
}

func TestProgressJSON(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	res := newRunner(t).runOK("--json", "tools", "call", "slow", "steps=2", "delayMs=10", srv.URL)
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	if len(lines) != 2 {
		t.Fatalf("stderr %q", res.stderr)
	}
	var p struct {
		Progress struct {
			Progress, Total float64
			Message         string
		}
	}
	if err := json.Unmarshal([]byte(lines[1]), &p); err != nil || p.Progress.Progress != 2 || p.Progress.Total != 2 || p.Progress.Message != "step 2 of 2" {
		t.Errorf("%q: %+v %v", lines[1], p, err)
	}
	checkOneJSON(t, "slow", res.stdout)
}

// TestProgressBar: on a terminal, progress draws a bar (and clears it).
func TestProgressBar(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	r.tty = true
	res := r.runOK("tools", "call", "slow", "steps=3", "delayMs=10", srv.URL)
	if !strings.Contains(res.stderr, "\r") || !strings.Contains(res.stderr, "(2/3)") || !strings.Contains(res.stderr, "step 3 of 3") {
		t.Errorf("no progress bar on stderr: %q", res.stderr)
	}
	if strings.Contains(res.stderr, "progress 1/3") {
		t.Errorf("line-per-update output on a terminal: %q", res.stderr)
	}
	if res.stdout != "done 3 steps\n" {
		t.Errorf("stdout %q", res.stdout)
	}
}

// TestServerLogs: notifications/message goes to stderr through the
// logger; --log-level filters it and is passed to the server.
func TestServerLogs(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	res := r.runOK("tools", "call", "log", "level=warning", "message=disk almost full", srv.URL)
	if res.stdout != "logged\n" || !strings.Contains(res.stderr, "disk almost full") || !strings.Contains(res.stderr, "WRN") {
		t.Errorf("stdout %q stderr %q", res.stdout, res.stderr)
	}
	if strings.Contains(res.stderr, "\x1b[") {
		t.Errorf("colours when stderr is not a terminal: %q", res.stderr)
	}
	res = r.runOK("tools", "call", "log", "level=info", "message=chatty", "--log-level", "error", srv.URL)
	if res.stdout != "filtered\n" || strings.Contains(res.stderr, "chatty") {
		t.Errorf("--log-level error: stdout %q stderr %q", res.stdout, res.stderr)
	}
	if lvl := srv.Server().Stats().LogLevel; lvl != "error" {
		t.Errorf("the server was asked for level %q, want error", lvl)
	}
	res = r.runOK("--json", "tools", "call", "log", "level=error", "message=boom", srv.URL)
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(res.stderr)), &rec); err != nil || rec["msg"] != "boom" || rec["level"] != "ERROR" {
		t.Errorf("--json log line %q: %v", res.stderr, err)
	}
}

// TestLogLevelIsTheServers: --log-level is the server's level, not
// mcpcall's: --log-level debug shows the server's debug logs without
// mcpcall's own debug lines, which only -v turns on (and -v alone leaves
// the server's level at its default).
func TestLogLevelIsTheServers(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	own := "connecting" // mcpcall's first debug line
	r := newRunner(t)
	res := r.runOK("tools", "call", "log", "level=debug", "message=cache miss", "--log-level", "debug", srv.URL)
	if !strings.Contains(res.stderr, "cache miss") || strings.Contains(res.stderr, own) {
		t.Errorf("--log-level debug: want the server's debug log and none of mcpcall's own; stderr:\n%s", res.stderr)
	}
	res = r.runOK("tools", "call", "log", "level=info", "message=chatty", "-v", srv.URL)
	if !strings.Contains(res.stderr, own) || strings.Contains(res.stderr, "chatty") {
		t.Errorf("-v: want mcpcall's debug lines and not the server's info log; stderr:\n%s", res.stderr)
	}
	res = r.runOK("tools", "call", "log", "level=debug", "message=both", "-v", "--log-level", "debug", srv.URL)
	if !strings.Contains(res.stderr, own) || !strings.Contains(res.stderr, "both") {
		t.Errorf("-v --log-level debug: want both; stderr:\n%s", res.stderr)
	}
}

// TestColour: colours on a terminal, unless NO_COLOR is set.
func TestColour(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	r.tty = true
	res := r.runOK("tools", "call", "log", "level=error", "message=red", srv.URL)
	if !strings.Contains(res.stderr, "\x1b[") {
		t.Errorf("no colour on a terminal: %q", res.stderr)
	}
	r.env["NO_COLOR"] = "1"
	res = r.runOK("tools", "call", "log", "level=error", "message=plain", srv.URL)
	if strings.Contains(res.stderr, "\x1b[") {
		t.Errorf("colour with NO_COLOR: %q", res.stderr)
	}
}

// TestServerStderr: a stdio server's stderr reaches our stderr, never
// stdout; in --json mode as JSON lines.
func TestServerStderr(t *testing.T) {
	r := newRunner(t)
	target := shellFront(`echo "starting up" >&2`) // writes to stderr, then serves
	res := r.runOK(append([]string{"ping"}, target...)...)
	if res.stderr != "starting up\n" || strings.Contains(res.stdout, "starting up") {
		t.Errorf("server stderr: stdout %q stderr %q", res.stdout, res.stderr)
	}
	res = r.runOK(append([]string{"ping", "--json"}, target...)...)
	checkStderrJSONLines(t, "ping --json", res.stderr)
	if !strings.Contains(res.stderr, `"stderr":"starting up"`) {
		t.Errorf("server stderr missing in --json mode: %q", res.stderr)
	}
}

// TestVerbose: -v prints the negotiation report and the connection.
func TestVerbose(t *testing.T) {
	legacy := testservers.StartLegacy(testservers.LegacyOptions{})
	defer legacy.Close()
	r := newRunner(t)
	res := r.runOK("ping", "-v", legacy.URL)
	for _, want := range []string{"negotiation for " + legacy.URL, "405 is a fallback status", "using sse", "connected in", "transport sse, protocol 2024-11-05"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("-v output lacks %q:\n%s", want, res.stderr)
		}
	}
	if !strings.HasPrefix(res.stdout, "ok in ") {
		t.Errorf("stdout %q", res.stdout)
	}
	res = r.runOK("ping", "-v", "--json", legacy.URL)
	checkStderrJSONLines(t, "-v --json", res.stderr)
	if !strings.Contains(res.stderr, `"negotiation":{"url":`) {
		t.Errorf("-v --json: %s", res.stderr)
	}
	// a failed negotiation still shows its report
	notMCP := testservers.StartStatus(testservers.StatusOptions{})
	defer notMCP.Close()
	res = r.run("ping", "-v", notMCP.URL)
	if res.code != exitConnect || !strings.Contains(res.stderr, "negotiation for") || !strings.Contains(res.stderr, "no transport worked") {
		t.Errorf("-v on failure: exit %d\n%s", res.code, res.stderr)
	}
}
