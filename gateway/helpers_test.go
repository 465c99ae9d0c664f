package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// upstreams are test servers of every era and transport.
type upstreams struct {
	stateless  *testservers.HTTPServer   // 2026-07-28, stateless HTTP
	streamable *testservers.HTTPServer   // 2025-11-25, Streamable HTTP sessions
	sse        *testservers.LegacyServer // 2024-11-05, HTTP+SSE
	stdio      client.Target             // initialize era, a child process
	stdioPids  string                    // where each stdio process logs its pid
}

func startUpstreams(t *testing.T) *upstreams {
	t.Helper()
	u := &upstreams{
		stateless:  testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{Name: "st", Eras: testservers.StatelessOnly}}),
		streamable: testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{Name: "sh", Instructions: "Use echo to echo."}}),
		sse:        testservers.StartLegacy(testservers.LegacyOptions{Options: testservers.Options{Name: "ss"}}),
	}
	t.Cleanup(u.stateless.Close)
	t.Cleanup(u.streamable.Close)
	t.Cleanup(u.sse.Close)
	u.stdioPids = filepath.Join(t.TempDir(), "pids")
	path, args, _ := testservers.StdioCommand()
	env := append(testservers.StdioEnv(testservers.Options{Name: "sd", Stdio: testservers.StdioFaults{PIDLog: u.stdioPids}}), "GORACE=atexit_sleep_ms=0")
	u.stdio = client.Command(path, args...).WithEnv(env...)
	return u
}

// servers is the fleet of every upstream, in this order.
func (u *upstreams) servers() []fleet.Server {
	return []fleet.Server{
		{Name: "stateless", Target: client.URL(u.stateless.URL)},
		{Name: "streamable", Target: client.URL(u.streamable.URL)},
		{Name: "sse", Target: client.URL(u.sse.URL)},
		{Name: "stdio", Target: u.stdio},
	}
}

// startGateway serves a gateway over HTTP on loopback; both end with the
// test. It returns the gateway and the server's base URL.
func startGateway(t *testing.T, servers []fleet.Server, cfg Config) (*Gateway, string) {
	t.Helper()
	g, err := New(ctxT(t), servers, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = g.Close()
	})
	return g, srv.URL
}

// downstream is a kind of client of the gateway.
type downstream struct {
	name string
	path string // "/mcp" or "/sse", plus the view's segment
	opts []client.Option
}

// eras are the downstream clients of every era.
var eras = []downstream{
	{name: "stateless", path: "/mcp", opts: []client.Option{client.WithEra(negotiate.StatelessOnly)}},
	{name: "initialize", path: "/mcp", opts: []client.Option{client.WithEra(negotiate.InitializeOnly)}},
	{name: "sse", path: "/sse", opts: []client.Option{client.WithEra(negotiate.InitializeOnly),
		client.WithTransportPolicy(negotiate.SSEOnly), client.WithProtocolVersion(mcp.Version20241105)}},
}

func dial(t *testing.T, url string, d downstream, opts ...client.Option) *client.Conn {
	t.Helper()
	c, err := client.Dial(ctxT(t), client.URL(url+d.path), append(append([]client.Option(nil), d.opts...), opts...)...)
	if err != nil {
		t.Fatalf("%s client: %v", d.name, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// callText calls the tool name through c and returns its text.
func callText(t *testing.T, c *client.Conn, name string, args any) string {
	t.Helper()
	res, err := c.CallTool(ctxT(t), name, args)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("no content: %+v", res)
	}
	if res.IsError {
		t.Fatalf("tool error: %s", res.Content[0].Text)
	}
	return res.Content[0].Text
}

// pids are the stdio processes logged in pidLog.
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
		pid, _ := strconv.Atoi(f)
		out = append(out, pid)
	}
	return out
}

func checkGone(t *testing.T, pidLog string) {
	t.Helper()
	for _, pid := range pids(t, pidLog) {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("stdio server %d outlived the gateway: %v", pid, err)
		}
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
