package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// readTrace parses an NDJSON trace, failing on any line that is not JSON.
func readTrace(t *testing.T, data string) []traceEvent {
	t.Helper()
	var evs []traceEvent
	sc := bufio.NewScanner(strings.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev traceEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("trace line is not JSON: %q", sc.Text())
		}
		if _, err := time.Parse(time.RFC3339Nano, ev.Time); err != nil {
			t.Errorf("trace line without a time: %q", sc.Text())
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestTraceRedaction: a bearer token, an API key and a cookie reach the
// server but never the trace file.
func TestTraceRedaction(t *testing.T) {
	const token, apiKey, cookie, inText = "s3cr3t-bearer-token-value", "key-abc-123-xyz", "sid=cookie-xyz-789", "hunter2hunter2"
	var mu sync.Mutex
	var got http.Header
	srv := testservers.StartStreamable(testservers.HTTPOptions{OnRequest: func(r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
	}})
	defer srv.Close()
	r := newRunner(t)
	r.env["MY_TOKEN"] = token
	file := filepath.Join(r.home, "trace.ndjson")
	r.runOK("tools", "call", "echo", "text=Authorization: Bearer "+inText, "--trace", file,
		"--bearer-env", "MY_TOKEN", "-H", "X-Api-Key: "+apiKey, "-H", "Cookie: "+cookie, srv.URL)
	mu.Lock()
	if got.Get("Authorization") != "Bearer "+token || got.Get("X-Api-Key") != apiKey {
		t.Errorf("credentials did not reach the server: %v", got)
	}
	mu.Unlock()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("trace file mode %v, want 0600", st.Mode().Perm())
	}
	for _, secret := range []string{token, apiKey, "cookie-xyz-789", inText} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the trace holds %q", secret)
		}
	}
	if !strings.Contains(string(data), `"Authorization":"Bearer [REDACTED]"`) {
		t.Errorf("no redacted Authorization header in the trace")
	}
	evs := readTrace(t, string(data))
	kinds := map[string]int{}
	for _, ev := range evs {
		kinds[ev.Kind+" "+ev.Dir]++
	}
	for _, k := range []string{"jsonrpc send", "jsonrpc recv", "http request", "http response"} {
		if kinds[k] == 0 {
			t.Errorf("no %q events in the trace: %v", k, kinds)
		}
	}
	var methods []string
	for _, ev := range evs {
		if ev.Kind == "jsonrpc" && ev.Dir == "send" {
			var m struct{ Method string }
			_ = json.Unmarshal(ev.Message, &m)
			methods = append(methods, m.Method)
		}
	}
	if strings.Join(methods, ",") != "server/discover,initialize,notifications/initialized,tools/list,tools/call" {
		t.Errorf("messages sent: %v", methods)
	}
}

// TestTraceStdioToStderr: --trace - writes NDJSON to stderr; over stdio
// there are JSON-RPC messages only.
func TestTraceStdioToStderr(t *testing.T) {
	r := newRunner(t)
	res := r.runOK(append([]string{"ping", "--json", "--trace", "-"}, stdioTarget(testservers.Options{})...)...)
	evs := readTrace(t, res.stderr)
	if len(evs) != 7 { // server/discover ⇄ (refused), initialize ⇄, initialized →, ping ⇄
		t.Errorf("%d trace events, want 7:\n%s", len(evs), res.stderr)
	}
	for _, ev := range evs {
		if ev.Kind != "jsonrpc" {
			t.Errorf("unexpected event %+v", ev)
		}
	}
}

func TestRedactors(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@h/mcp?api_key=k1&x=1&sessionId=s": "https://user:REDACTED@h/mcp?api_key=REDACTED&sessionId=s&x=1",
		"http://h/mcp":                         "http://h/mcp",
		"http://h/mcp?access_token=abc&page=2": "http://h/mcp?access_token=REDACTED&page=2",
		"http://tok@h/mcp":                     "http://REDACTED@h/mcp",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"Authorization: Bearer abc.def-ghi": "Authorization: Bearer [REDACTED]",
		`{"auth":"basic dXNlcjpwYXNz"}`:     `{"auth":"basic [REDACTED]"}`,
		"a bearer of news":                  "a bearer of news",
	} {
		if got := redactText(in); got != want {
			t.Errorf("redactText(%q) = %q, want %q", in, got, want)
		}
	}
	for name, sensitive := range map[string]bool{
		"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "X-Api-Key": true,
		"X-Auth-Token": true, "Private-Token": true, "Dpop": true, "Accept": false, "Mcp-Session-Id": false, "Content-Type": false,
	} {
		if sensitiveHeader(name) != sensitive {
			t.Errorf("sensitiveHeader(%q) = %v", name, !sensitive)
		}
	}
	if got := redactHeaderValue("Authorization", "Basic dXNlcjpwYXNz"); got != "Basic [REDACTED]" {
		t.Errorf("Authorization value: %q", got)
	}
	if got := redactHeaderValue("X-Api-Key", "k"); got != redacted {
		t.Errorf("X-Api-Key value: %q", got)
	}
}
