package interop_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/gateway"
	"github.com/anymcp/anymcp/testservers"
)

// The gateway (package gateway) in front of a fleet of upstreams of every
// era and transport, driven by other implementations' clients of every
// era: go-sdk over Streamable HTTP (2026-07-28 and 2025-11-25) and over
// stdio, the TypeScript SDK over Streamable HTTP, and mcp-go over /sse
// (2024-11-05). Each client lists the tools (every server's, under its
// fleet name), calls a tool of each upstream, gets prompts and reads
// resources of two servers each, and answers an elicitation that an
// upstream's tool sends, where its SDK can answer one. Each test starts
// its own gateway and upstreams on loopback, and checks at the end that
// no upstream process is left.

// gwServers are the fleet names of the upstreams, one of each era and
// transport.
var gwServers = []string{"streamable", "stateless", "sse", "stdio"}

// gwElicitServers are the upstreams whose elicit tool sends a server
// request the clients answer: a 2025 session (elicitation/create on its
// stream) and a 2026-07-28 stateless server (an input-required result
// the gateway turns into elicitation/create).
var gwElicitServers = []string{"streamable", "stateless"}

// gwFleet is a gateway over one upstream of every era and transport.
type gwFleet struct {
	url        string // the gateway's base URL
	gw         *gateway.Gateway
	streamable *testservers.HTTPServer   // 2025-11-25 Streamable HTTP, sessions
	stateless  *testservers.HTTPServer   // 2026-07-28 only, stateless HTTP
	sse        *testservers.LegacyServer // 2024-11-05 HTTP+SSE
}

// startGatewayFleet starts the upstreams and a gateway over them,
// served by an httptest server on 127.0.0.1; all end with the test,
// which then fails if a stdio upstream process is still alive.
func startGatewayFleet(t *testing.T, cfg gateway.Config) *gwFleet {
	t.Helper()
	f := &gwFleet{
		streamable: testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{Name: "sh"}}),
		stateless:  testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{Name: "st", Eras: testservers.StatelessOnly}}),
		sse:        testservers.StartLegacy(testservers.LegacyOptions{Options: testservers.Options{Name: "ss"}}),
	}
	t.Cleanup(f.streamable.Close)
	t.Cleanup(f.stateless.Close)
	t.Cleanup(f.sse.Close)
	mark := newMark(t)
	path, args, _ := testservers.StdioCommand()
	env := append(testservers.StdioEnv(testservers.Options{Name: "sd"}), markVar+"="+mark, "GORACE=atexit_sleep_ms=0")
	servers := []fleet.Server{
		// streamable first: a URI both it and the stateless server list
		// is read from it (the first server wins).
		{Name: "streamable", Target: client.URL(f.streamable.URL)},
		{Name: "stateless", Target: client.URL(f.stateless.URL)},
		{Name: "sse", Target: client.URL(f.sse.URL)},
		{Name: "stdio", Target: client.Command(path, args...).WithEnv(env...)},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, servers, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.gw = g
	srv := httptest.NewServer(g.Handler()) // 127.0.0.1, port 0
	f.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		if err := g.Close(); err != nil {
			t.Errorf("gateway close: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := waitNoProcesses(ctx, mark); err != nil {
			t.Errorf("after the gateway closed: %v", err)
		}
	})
	return f
}

// gwReport is what a client saw through the gateway; checkGatewayReport
// holds every client to the same expectations.
type gwReport struct {
	tools     []string          // tools/list: names
	echo      map[string]string // server → text of SERVER__echo
	prompts   map[string]string // server → text of SERVER__greet {name: Ann}
	resources map[string]string // URI → text read
	elicit    map[string]string // server → text of SERVER__elicit
	asked     []string          // the messages the client's elicitation handler was asked
}

func newGWReport() *gwReport {
	return &gwReport{echo: map[string]string{}, prompts: map[string]string{}, resources: map[string]string{}, elicit: map[string]string{}}
}

// gwEchoText is what each client asks SERVER__echo to echo.
func gwEchoText(server string) string { return "über " + server }

// gwResources are the URIs each client reads: one the streamable server
// lists (first in the fleet) and one only the stateless server lists.
func gwResources() []string {
	return []string{testservers.StaticTextURI, testservers.NonASCIIResourceURI}
}

// gwPromptServers are the servers whose greet prompt each client gets.
var gwPromptServers = []string{"sse", "stdio"}

// checkGatewayReport checks r; elicits says whether the client answered
// elicitations (its SDK can).
func checkGatewayReport(t *testing.T, r *gwReport, elicits bool) {
	t.Helper()
	for _, s := range gwServers {
		for _, tool := range []string{"echo", "elicit"} {
			if name := s + "__" + tool; !slices.Contains(r.tools, name) {
				t.Errorf("tools/list lacks %s: %v", name, r.tools)
			}
		}
		if got, want := r.echo[s], gwEchoText(s); got != want {
			t.Errorf("%s__echo: %q, want %q", s, got, want)
		}
	}
	for _, name := range r.tools {
		if i := strings.Index(name, "__"); i < 0 || !slices.Contains(gwServers, name[:i]) {
			t.Errorf("tools/list has %q, not under a fleet name", name)
		}
	}
	for _, s := range gwPromptServers {
		if !strings.Contains(r.prompts[s], "Ann") {
			t.Errorf("prompts/get %s__greet: %q, want a greeting of Ann", s, r.prompts[s])
		}
	}
	for _, uri := range gwResources() {
		if r.resources[uri] == "" {
			t.Errorf("resources/read %s: no text", uri)
		}
	}
	if r.resources[testservers.StaticTextURI] != "hello" {
		t.Errorf("resources/read %s: %q, want hello", testservers.StaticTextURI, r.resources[testservers.StaticTextURI])
	}
	if !elicits {
		return
	}
	for _, s := range gwElicitServers {
		msg := "who via " + s
		if !strings.Contains(r.elicit[s], "Ada of "+msg) {
			t.Errorf("%s__elicit: %q, want the client's answer (Ada of %s)", s, r.elicit[s], msg)
		}
		if !slices.Contains(r.asked, msg) {
			t.Errorf("the client's elicitation handler was not asked %q (asked %q)", msg, r.asked)
		}
	}
}

// checkUpstreamsHit checks that each HTTP upstream got the requests
// that name it, and only those: one echo call each, and the reads and
// prompts routed to it.
// statelessReads is how many reads the stateless upstream must have got.
func (f *gwFleet) checkUpstreamsHit(t *testing.T, statelessReads int) {
	t.Helper()
	for _, w := range []struct {
		name           string
		srv            *testservers.Server
		reads, prompts int
	}{
		{"streamable", f.streamable.Server(), 1, 0},
		{"stateless", f.stateless.Server(), statelessReads, 0},
		{"sse", f.sse.Server(), 0, 1},
	} {
		st := w.srv.Stats()
		if got := st.ToolCalls["echo"]; got != 1 {
			t.Errorf("%s upstream ran echo %d times, want 1", w.name, got)
		}
		if got := st.Requests["resources/read"]; got != w.reads {
			t.Errorf("%s upstream got %d resources/read, want %d", w.name, got, w.reads)
		}
		if got := st.Requests["prompts/get"]; got != w.prompts {
			t.Errorf("%s upstream got %d prompts/get, want %d", w.name, got, w.prompts)
		}
	}
}
