package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// TestProbeGolden keeps probe's output over each transport: the
// negotiation report (none for stdio), transport, revision, server info
// and capabilities.
func TestProbeGolden(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target(t)
			r := newRunner(t)
			// The report is kept: a stdio test server that starts
			// slowly on a busy machine must not be taken for a silent
			// one (past the 1 s default), which changes the report.
			r.probeTimeout = 20 * time.Second
			res := r.runOK(append([]string{"probe"}, target...)...)
			golden(t, "probe_"+tc.name, normalise(res.stdout))
			res = r.runOK(append([]string{"probe", "--json"}, target...)...)
			golden(t, "probe_"+tc.name+".json", normalise(res.stdout))
			var p map[string]json.RawMessage
			if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"transport", "era", "protocolVersion", "serverInfo", "capabilities", "negotiation"} {
				if _, ok := p[k]; !ok {
					t.Errorf("probe --json has no %q", k)
				}
			}
			want := map[string]string{"http": `"streamable-http"`, "sse": `"sse"`, "stdio": `"stdio"`}[tc.name]
			if string(p["transport"]) != want {
				t.Errorf("transport %s, want %s", p["transport"], want)
			}
			if string(p["negotiation"]) == "null" || string(p["era"]) != `"initialize"` {
				t.Errorf("era %s, negotiation %s", p["era"], p["negotiation"])
			}
		})
	}
}

// TestTransportFlag: --transport picks the negotiation policy.
func TestTransportFlag(t *testing.T) {
	hybrid := testservers.StartHybrid(testservers.HybridOptions{})
	defer hybrid.Close()
	legacy := testservers.StartLegacy(testservers.LegacyOptions{})
	defer legacy.Close()
	modern := testservers.StartStreamable(testservers.HTTPOptions{})
	defer modern.Close()
	r := newRunner(t)
	probe := func(args ...string) (probeResult, result) {
		t.Helper()
		res := r.run(append([]string{"probe", "--json"}, args...)...)
		var p probeResult
		if res.code == 0 {
			if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
				t.Fatal(err)
			}
		}
		return p, res
	}
	for _, tc := range []struct {
		args      []string
		transport string
		policy    string
		attempts  int
	}{
		{[]string{legacy.URL}, "sse", "auto", 3}, // stateless probe, initialize, GET
		{[]string{"--transport", "auto", legacy.URL}, "sse", "auto", 3},
		{[]string{"--transport", "sse", legacy.URL}, "sse", "sse-only", 1},
		{[]string{"--transport", "sse", hybrid.SSEURL}, "sse", "sse-only", 1},
		{[]string{"--transport", "http", hybrid.URL}, "streamable-http", "streamable-only", 2},
		{[]string{"--transport", "http", "--era", "initialize", hybrid.URL}, "streamable-http", "streamable-only", 1},
		{[]string{hybrid.URL}, "streamable-http", "auto", 2},
	} {
		p, res := probe(tc.args...)
		if res.code != 0 {
			t.Errorf("%v: exit %d %s", tc.args, res.code, res.stderr)
			continue
		}
		if p.Transport != tc.transport || p.Negotiation == nil || p.Negotiation.TransportPolicy != tc.policy || len(p.Negotiation.Attempts) != tc.attempts {
			t.Errorf("%v: transport %s, negotiation %+v", tc.args, p.Transport, p.Negotiation)
		}
	}
	// forced onto the wrong transport: the real error, exit 4
	if _, res := probe("--transport", "http", legacy.URL); res.code != exitConnect || !strings.Contains(res.stderr, "405") {
		t.Errorf("--transport http at an initialize-era server: exit %d %s", res.code, res.stderr)
	}
	if _, res := probe("--transport", "sse", modern.URL); res.code != exitConnect {
		t.Errorf("--transport sse at a Streamable HTTP server: exit %d %s", res.code, res.stderr)
	}
	p, res := probe(append([]string{"--transport", "stdio"}, stdioTarget(testservers.Options{})...)...)
	if res.code != 0 || p.Transport != "stdio" || p.Negotiation == nil || p.Era != "initialize" {
		t.Errorf("--transport stdio: exit %d %+v %s", res.code, p, res.stderr)
	}
	if _, res := probe(append([]string{"--transport", "sse"}, stdioTarget(testservers.Options{})...)...); res.code != exitUsage {
		t.Errorf("--transport sse with a command: exit %d", res.code)
	}
}

// TestNewerServer: a server of a later revision than this client speaks is
// reported as such, not masked by a fallback, and exits 4.
func TestNewerServer(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 400, PostBodyFunc: testservers.UnsupportedVersionBody("2099-01-01")})
	defer srv.Close()
	res := newRunner(t).run("--json", "ping", srv.URL)
	if res.code != exitConnect || !strings.Contains(res.stderr, "newer MCP revision") {
		t.Errorf("exit %d %s", res.code, res.stderr)
	}
}

// An HTTP+SSE server that answers a POST to its SSE URL with an endpoint
// event stream (go-mcp's) is probed at once over HTTP+SSE, where probe
// waited out --connect-timeout and exited 6. The timeout is the default,
// and the probe must not need it: the endpoint event says what to do.
func TestProbeEndpointEventOnPost(t *testing.T) {
	srv := testservers.StartLegacy(testservers.LegacyOptions{StreamOnPost: true})
	defer srv.Close()
	r := newRunner(t)
	res := r.run("probe", "--json", srv.URL)
	var p probeResult
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &p) != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if p.Transport != "sse" || p.Negotiation == nil || len(p.Negotiation.Attempts) != 2 ||
		!strings.Contains(p.Negotiation.Attempts[0].Decision, "endpoint event") {
		t.Errorf("transport %s, negotiation %+v", p.Transport, p.Negotiation)
	}
}

// A server that drops the connection on the stateless probe (mcp-golang's HTTP
// transport panics on a method it does not know): the failure is reported
// as itself, exit 4, with a hint to --era initialize, which reaches it.
func TestProbeDroppedHint(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{OnRequest: func(r *http.Request) {
		if r.Header.Get("Mcp-Method") == "server/discover" {
			panic(http.ErrAbortHandler)
		}
	}})
	defer srv.Close()
	r := newRunner(t)
	res := r.run("probe", srv.URL)
	if res.code != exitConnect || !strings.Contains(res.stderr, "hint: the server closed the connection on the stateless probe: --era initialize") {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	r.runOK("probe", "--era", "initialize", srv.URL)
}
