package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// errorCase is one failure mcpcall reports: what provokes it, the exit
// status, and testdata/errors/NAME.golden holding stderr.
type errorCase struct {
	name string
	code int
	args func(t *testing.T) []string
}

// statusServer starts a status server for the test.
func statusServer(t *testing.T, opts testservers.StatusOptions) string {
	srv := testservers.StartStatus(opts)
	t.Cleanup(srv.Close)
	return srv.URL
}

func streamable(t *testing.T, opts testservers.HTTPOptions) string {
	srv := testservers.StartStreamable(opts)
	t.Cleanup(srv.Close)
	return srv.URL
}

func statelessServer(t *testing.T) string {
	srv := testservers.StartStateless(testservers.HTTPOptions{})
	t.Cleanup(srv.Close)
	return srv.URL
}

// deepJSON is an answer nested deeper than encoding/json decodes.
var deepJSON = `{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`

var errorCases = []errorCase{
	{"status_401", exitAuth, func(t *testing.T) []string {
		return []string{"ping", statusServer(t, testservers.StatusOptions{PostStatus: http.StatusUnauthorized, PostHeader: http.Header{"Www-Authenticate": {`Bearer realm="mcp"`}}})}
	}},
	{"status_403", exitAuth, func(t *testing.T) []string {
		return []string{"tools", "list", statusServer(t, testservers.StatusOptions{PostStatus: http.StatusForbidden})}
	}},
	{"status_500", exitConnect, func(t *testing.T) []string {
		return []string{"ping", statusServer(t, testservers.StatusOptions{PostStatus: http.StatusInternalServerError, PostBody: "database down"})}
	}},
	{"status_404_not_mcp", exitConnect, func(t *testing.T) []string {
		return []string{"ping", statusServer(t, testservers.StatusOptions{})}
	}},
	{"status_405_then_sse_404", exitConnect, func(t *testing.T) []string {
		return []string{"ping", statusServer(t, testservers.StatusOptions{PostStatus: http.StatusMethodNotAllowed})}
	}},
	{"streamable_only_404", exitConnect, func(t *testing.T) []string {
		return []string{"ping", "--transport", "http", "--era", "initialize", statusServer(t, testservers.StatusOptions{})}
	}},
	{"legacy_cross_origin_endpoint", exitConnect, func(t *testing.T) []string {
		srv := testservers.StartLegacy(testservers.LegacyOptions{Endpoint: testservers.EndpointCrossOrigin})
		t.Cleanup(srv.Close)
		return []string{"ping", srv.URL}
	}},
	{"deep_json", exitConnect, func(t *testing.T) []string {
		return []string{"ping", statusServer(t, testservers.StatusOptions{PostStatus: http.StatusOK, PostBody: deepJSON, PostContentType: "application/json"})}
	}},
	{"newer_server_initialize_not_found", exitConnect, func(t *testing.T) []string {
		return []string{"ping", "--era", "initialize", statusServer(t, testservers.StatusOptions{PostBodyFunc: testservers.MethodNotFoundBody})}
	}},
	{"newer_server_unsupported_version", exitConnect, func(t *testing.T) []string {
		return []string{"ping", statusServer(t, testservers.StatusOptions{PostStatus: http.StatusBadRequest, PostBodyFunc: testservers.UnsupportedVersionBody("2099-01-01")})}
	}},
	{"stateless_server_refuses_after_initialize", exitConnect, func(t *testing.T) []string {
		srv := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{StatelessInitialize: testservers.InitializeLikeGoSDK}})
		t.Cleanup(srv.Close)
		return []string{"ping", "--era", "initialize", srv.URL}
	}},
	{"refused", exitConnect, func(t *testing.T) []string {
		return []string{"ping", "--connect-timeout", "1s", refusedURL(t)}
	}},
	{"connect_timeout", exitTimeout, func(t *testing.T) []string {
		return []string{"ping", "--connect-timeout", "200ms", statusServer(t, testservers.StatusOptions{PostStatus: http.StatusOK, PostDelay: 10 * time.Second})}
	}},
	{"call_timeout", exitTimeout, func(t *testing.T) []string {
		return []string{"tools", "call", "slow", "steps=1", "delayMs=5000", "--timeout", "150ms", streamable(t, testservers.HTTPOptions{})}
	}},
	{"call_timeout_stateless", exitTimeout, func(t *testing.T) []string {
		return []string{"tools", "call", "slow", "steps=1", "delayMs=5000", "--timeout", "150ms", statelessServer(t)}
	}},
	{"max_time", exitTimeout, func(t *testing.T) []string {
		return []string{"tools", "call", "slow", "steps=1", "delayMs=5000", "--max-time", "300ms", streamable(t, testservers.HTTPOptions{})}
	}},
	{"expired_sessions", exitConnect, func(t *testing.T) []string {
		return []string{"tools", "list", streamable(t, testservers.HTTPOptions{Faults: testservers.Faults{Rules: []testservers.FaultRule{{Fault: testservers.FaultExpireSession, Method: "tools/list"}}}})}
	}},
	{"stdio_crash_at_startup", exitConnect, func(*testing.T) []string {
		return []string{"ping", "--", "sh", "-c", "echo 'fatal: no config file' >&2; exit 3"}
	}},
	{"stdio_crash_during_call", exitConnect, func(*testing.T) []string {
		return append([]string{"tools", "call", "echo", "text=hi"}, stdioTarget(testservers.Options{Stdio: testservers.StdioFaults{CrashOnCall: 1}})...)
	}},
	{"stdio_no_such_command", exitConnect, func(*testing.T) []string {
		return []string{"ping", "--", "/nonexistent/mcp-server"}
	}},
	{"unknown_tool_local", exitRPC, func(t *testing.T) []string {
		return []string{"tools", "call", "ech", "text=x", streamable(t, testservers.HTTPOptions{})}
	}},
	{"unknown_tool_server", exitRPC, func(t *testing.T) []string {
		return []string{"tools", "call", "--no-validate", "nosuchtool", streamable(t, testservers.HTTPOptions{})}
	}},
	{"unknown_method", exitRPC, func(t *testing.T) []string {
		return []string{"call", "bogus/method", streamable(t, testservers.HTTPOptions{})}
	}},
	{"unknown_method_stateless", exitRPC, func(t *testing.T) []string {
		return []string{"call", "bogus/method", statelessServer(t)}
	}},
	{"invalid_arguments", exitRPC, func(t *testing.T) []string {
		return []string{"tools", "call", "add", "a=1", streamable(t, testservers.HTTPOptions{})}
	}},
	{"unknown_resource", exitRPC, func(t *testing.T) []string {
		return []string{"resources", "read", "test://nope", streamable(t, testservers.HTTPOptions{})}
	}},
	{"unknown_prompt", exitRPC, func(t *testing.T) []string {
		return []string{"prompts", "get", "gret", streamable(t, testservers.HTTPOptions{})}
	}},
	{"missing_capability_stateless", exitRPC, func(t *testing.T) []string {
		return []string{"tools", "call", "roots", statelessServer(t)}
	}},
	{"sampling_declined_stateless", exitRPC, func(t *testing.T) []string {
		return []string{"tools", "call", "sample", "prompt=hi", statelessServer(t)}
	}},
	{"tool_is_error", exitToolError, func(t *testing.T) []string {
		return []string{"tools", "call", "fail", "message=disk full", streamable(t, testservers.HTTPOptions{})}
	}},
	{"usage_no_target", exitUsage, func(*testing.T) []string {
		return []string{"tools", "list"}
	}},
}

var (
	clockRE = regexp.MustCompile(`\b\d\d:\d\d:\d\d\.\d{3}\b`)
	quoteRE = regexp.MustCompile(`\([^()]*: [^()]*\)`) // an aside that quotes a message
	idRE    = regexp.MustCompile(` \(id [^()]*\)`)     // a request id: "tools/list (id 9)" names tools/list
)

// TestErrorMessages walks the error paths mcpcall can take and keeps
// what each prints in testdata/errors/NAME.golden; the message never names
// one thing twice (no "initialize: initialize:"), says the same in --json,
// and a stdio server's stderr is shown once.
func TestErrorMessages(t *testing.T) {
	for _, ec := range errorCases {
		t.Run(ec.name, func(t *testing.T) {
			args := ec.args(t)
			r := newRunner(t)
			res := r.run(args...)
			if res.code != ec.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", res.code, ec.code, res.stderr)
			}
			msg := errorText(t, res.stderr)
			if seg := repeatedSegment(msg); seg != "" {
				t.Errorf("the error names %q twice:\n%s", seg, msg)
			}
			golden(t, "errors/"+ec.name, clockRE.ReplaceAllString(normalise(res.stderr), "CLOCK"))

			jres := r.run(append([]string{"--json"}, ec.args(t)...)...)
			lines := strings.Split(strings.TrimSpace(jres.stderr), "\n")
			var line struct {
				Error struct{ Message string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &line); err != nil {
				t.Fatalf("--json: last stderr line is not an error: %q", jres.stderr)
			}
			if got, want := normalise(line.Error.Message), normalise(msg); got != want {
				t.Errorf("--json message differs from the text one:\n%s\n%s", got, want)
			}
		})
	}
}

// TestStdioStartupStderrOnce: a stdio server that dies at startup has
// its stderr shown once, as it came — not again in the error.
func TestStdioStartupStderrOnce(t *testing.T) {
	script := `printf 'fatal: %s\n' "no config file" >&2; exit 3` // the command line does not hold the text
	res := newRunner(t).run("ping", "--", "sh", "-c", script)
	if n := strings.Count(res.stderr, "fatal: no config file"); n != 1 {
		t.Errorf("the server's stderr is shown %d times, want once:\n%s", n, res.stderr)
	}
	res = newRunner(t).run("--json", "ping", "--", "sh", "-c", script)
	if n := strings.Count(res.stderr, "fatal: no config file"); n != 1 {
		t.Errorf("--json: the server's stderr is shown %d times, want once:\n%s", n, res.stderr)
	}
}

// errorText returns the message of the "mcpcall: ..." line of stderr.
func errorText(t *testing.T, stderr string) string {
	t.Helper()
	for line := range strings.SplitSeq(stderr, "\n") {
		if msg, ok := strings.CutPrefix(line, "mcpcall: "); ok {
			return msg
		}
	}
	t.Fatalf("no error line on stderr:\n%s", stderr)
	return ""
}

// repeatedSegment returns a segment that msg holds twice, or "": msg is
// split at ": " and "; " once the asides that quote another message
// ("(jsonrpc error -32001: session expired)") and request ids are out.
func repeatedSegment(msg string) string {
	for {
		stripped := quoteRE.ReplaceAllString(msg, "")
		if stripped == msg {
			break
		}
		msg = stripped
	}
	msg = idRE.ReplaceAllString(msg, "")
	seen := map[string]bool{}
	for _, part := range strings.Split(msg, "; ") {
		for seg := range strings.SplitSeq(part, ": ") {
			seg = strings.TrimSpace(seg)
			if seg == "" {
				continue
			}
			if seen[seg] {
				return seg
			}
			seen[seg] = true
		}
	}
	return ""
}

// TestRepeatedSegment: the stutter check catches the stutters this
// issue was about, and passes messages that name each thing once.
func TestRepeatedSegment(t *testing.T) {
	tests := []struct{ msg, want string }{
		{"initialize: initialize: modern: POST u → 500", "initialize"},
		{"notifications/initialized: notifications/initialized: modern: notifications/initialized: x", "notifications/initialized"},
		{"tools/list: modern: tools/list (id 9): session expired", "tools/list"},
		{"POST u → 404; POST u → 404; GET u → 404, not an SSE stream", "POST u → 404"},
		{"POST u (server/discover) → 404; POST u (initialize) → 404; GET u → 404, not an SSE stream", ""},
		{"modern: tools/list (id 9): session expired: POST u → 404 (jsonrpc error -32001: session expired)", ""},
		{"connecting to u: GET u → 200: endpoint e is on another origin than the SSE URL u: refused", ""},
		{"bogus/method: jsonrpc error -32601: method not found: bogus/method", "bogus/method"},
	}
	for _, tt := range tests {
		if got := repeatedSegment(tt.msg); got != tt.want {
			t.Errorf("repeatedSegment(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}
