package interop_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

var writeResults = flag.Bool("results", false, "write RESULTS.md and the interop table of ../docs/interop.md from this run")

func TestMain(m *testing.M) {
	testservers.RunFromEnv() // this test binary doubles as anymcp's own stdio test server
	serveGoSDKStdioFromEnv() // and as go-sdk's
	// Then remove the mcpcall that the bridge tests built.
	goleak.VerifyTestMain(cleanupAfter{m, removeMcpcall})
}

// negotiated is what Dial should find, or found.
type negotiated struct {
	era, transport, revision string
}

func (n negotiated) String() string { return n.era + " / " + n.transport + " / " + n.revision }

// peer is one row of the matrix: a server somebody else wrote, started
// fresh for the row, and what anymcp must negotiate with it.
type peer struct {
	server string // the implementation
	pkg    string // its Go module or npm package, for the version
	mode   string // how it is set up
	want   negotiated
	opts   []client.Option // Dial options beyond the defaults (none for most rows)
	start  func(t *testing.T) *peerServer
}

// peerServer is a started server.
type peerServer struct {
	target client.Target
	tools  toolSet
	// sawCancel waits until the server's slow tool saw its cancellation,
	// or fails; nil when the server cannot tell.
	sawCancel func(ctx context.Context, conn *client.Conn) error
	mark      string // carried by the server's processes ("" for an in-process server)
	// received, when not nil, hears of every progress notification the
	// progress step receives (see newMCPGoServer).
	received chan<- struct{}
	stop     func() error // ends the server (idempotent); also done at the end of the test
}

// toolSet names the tools of a server that the steps use.
type toolSet struct {
	echo          string
	echoArgs      func(s string) map[string]any
	echoWant      func(s string) string
	progress      string
	progressArgs  map[string]any
	progressSteps int
	slow          string
	slowArgs      map[string]any
}

// goTools are the tools of the Go peer servers (tools_test.go).
var goTools = toolSet{
	echo:          echoTool,
	echoArgs:      func(s string) map[string]any { return map[string]any{"text": s} },
	echoWant:      func(s string) string { return s },
	progress:      progressTool,
	progressArgs:  map[string]any{"steps": 3},
	progressSteps: 3,
	slow:          slowTool,
	slowArgs:      map[string]any{},
}

// goPeer describes an in-process Go server with the Go tools; at the end
// of the test, its slow calls end before the server closes (cleanups run
// last first).
func goPeer(t *testing.T, target client.Target, probe *cancelProbe) *peerServer {
	t.Cleanup(probe.stop)
	return &peerServer{target: target, tools: goTools, sawCancel: probe.wait, stop: func() error { return nil }}
}

const (
	goSDKModule   = "github.com/modelcontextprotocol/go-sdk"
	mcpGoModule   = "github.com/mark3labs/mcp-go"
	everything    = "@modelcontextprotocol/server-everything"
	v2026         = mcp.Version20260728
	v2025         = mcp.Version20251125
	eraStateless  = string(mcp.EraStateless)
	eraInitialize = string(mcp.EraInitialize)
	httpT         = client.TransportStreamableHTTP
	sseT          = client.TransportSSE
	stdioT        = client.TransportStdio
)

// slowStart is longer than the wait for the stdio probe's answer
// (negotiate.DefaultProbeTimeout): such a server answers the probe only
// after the client gave up on it.
const slowStart = negotiate.DefaultProbeTimeout + 500*time.Millisecond

var peers = []peer{
	{"go-sdk", goSDKModule, "2026-07-28 only, stateless Streamable HTTP", negotiated{eraStateless, httpT, v2026}, nil, goSDKModern},
	{"go-sdk", goSDKModule, "2025 revisions only, stateful Streamable HTTP", negotiated{eraInitialize, httpT, v2025}, nil, goSDKLegacy},
	{"go-sdk", goSDKModule, "defaults, stateless Streamable HTTP (both eras)", negotiated{eraStateless, httpT, v2026}, nil, goSDKDefaultStateless},
	{"go-sdk", goSDKModule, "defaults, stateful Streamable HTTP (serves 2026-07-28 only when stateless)", negotiated{eraInitialize, httpT, v2025}, nil, goSDKDefault},
	{"go-sdk", goSDKModule, "HTTP+SSE handler", negotiated{eraInitialize, sseT, v2025}, nil, goSDKSSE},
	{"go-sdk", goSDKModule, "stdio, 2026-07-28 only", negotiated{eraStateless, stdioT, v2026}, nil, goSDKStdio("modern", 0)},
	{"go-sdk", goSDKModule, "stdio, defaults (both eras)", negotiated{eraStateless, stdioT, v2026}, nil, goSDKStdio("default", 0)},
	{"go-sdk", goSDKModule, "stdio, 2025 revisions only", negotiated{eraInitialize, stdioT, v2025}, nil, goSDKStdio("legacy", 0)},
	{"go-sdk", goSDKModule, "stdio, 2026-07-28 only, first answer after " + slowStart.String() + " (a slow start, as through npx or uvx)",
		negotiated{eraStateless, stdioT, v2026}, nil, goSDKStdio("modern", slowStart)},
	{"go-sdk", goSDKModule, "stdio, 2025 revisions only, first answer after " + slowStart.String(),
		negotiated{eraInitialize, stdioT, v2025}, nil, goSDKStdio("legacy", slowStart)},
	{"mcp-go", mcpGoModule, "dual-era Streamable HTTP (2026-07-28 and 2025)", negotiated{eraStateless, httpT, v2026}, nil, mcpGoDual},
	{"mcp-go", mcpGoModule, "dual-era Streamable HTTP, client pinned to the initialize era", negotiated{eraInitialize, httpT, v2025},
		[]client.Option{client.WithEra(negotiate.InitializeOnly)}, mcpGoDual},
	{"mcp-go", mcpGoModule, "HTTP+SSE server", negotiated{eraInitialize, sseT, v2025}, nil, mcpGoSSE},
	{"server-everything", everything, "stdio", negotiated{eraInitialize, stdioT, v2025}, nil, everythingStdio},
	{"server-everything", everything, "sse", negotiated{eraInitialize, sseT, v2025}, nil, everythingHTTP("sse", "/sse")},
	{"server-everything", everything, "streamableHttp", negotiated{eraInitialize, httpT, v2025}, nil, everythingHTTP("streamableHttp", "/mcp")},
}

// TestInterop runs every step against every peer server; each step is
// asserted, and with -results the run writes the table.
func TestInterop(t *testing.T) {
	var (
		mu   sync.Mutex
		rows []*result
	)
	for _, p := range peers {
		r := &result{peer: p, version: versionOf(p.pkg)}
		mu.Lock()
		rows = append(rows, r)
		mu.Unlock()
		t.Run(strings.ReplaceAll(p.server+"/"+p.mode, " ", "_"), func(t *testing.T) { runPeer(t, p, r) })
	}
	if *writeResults {
		if err := writeTables(rows); err != nil {
			t.Fatalf("writing the results: %v", err)
		}
	}
}

// The steps, in order.
const (
	stepNegotiate = iota
	stepList
	stepCall
	stepProgress
	stepCancel
	stepClose
	nSteps
)

var stepNames = [nSteps]string{"negotiate", "list", "call", "progress", "cancel", "close"}

// result is what one row found.
type result struct {
	peer    peer
	version string
	got     negotiated
	ladder  string         // the negotiation's attempts, short
	steps   [nSteps]string // "ok", "ok (note)", "FAIL: why", or "" when not run
}

func (r *result) failed() bool {
	for _, s := range r.steps {
		if s == "" || strings.HasPrefix(s, "FAIL") {
			return true
		}
	}
	return false
}

// step runs f as step i and records its outcome; a failure fails the
// test and, when fatal, ends the row.
func (r *result) step(t *testing.T, i int, fatal bool, f func() (note string, err error)) {
	t.Helper()
	note, err := f()
	switch {
	case err != nil:
		r.steps[i] = "FAIL: " + oneLine(err.Error())
		if fatal {
			t.Fatalf("%s: %v", stepNames[i], err)
		}
		t.Errorf("%s: %v", stepNames[i], err)
	case note != "":
		r.steps[i] = "ok (" + note + ")"
	default:
		r.steps[i] = "ok"
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

// stepTimeout bounds every step: the servers are local.
const stepTimeout = 30 * time.Second

func runPeer(t *testing.T, p peer, r *result) {
	srv := p.start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*stepTimeout)
	defer cancel()

	var (
		conn   *client.Conn
		closed bool // by the close step
		wire   = newWireLog()
	)
	defer func() {
		if conn != nil && !closed {
			conn.Close() // a step failed: the server's Close would wait for the Conn's streams
		}
	}()
	r.step(t, stepNegotiate, true, func() (string, error) {
		dctx, cancel := context.WithTimeout(ctx, stepTimeout)
		defer cancel()
		var err error
		conn, err = client.Dial(dctx, srv.target, append([]client.Option{client.WithMessageHook(wire.hook)}, p.opts...)...)
		if err != nil {
			return "", err
		}
		info := conn.Info()
		r.got = negotiated{string(info.Era), info.Transport, info.ProtocolVersion}
		r.ladder = ladder(info.Negotiation)
		if r.got != p.want {
			return "", fmt.Errorf("negotiated %s, want %s; %s", r.got, p.want, info.Negotiation)
		}
		if info.Negotiation == nil || string(info.Negotiation.Era) != p.want.era {
			return "", fmt.Errorf("the report does not name the era %s: %v", p.want.era, info.Negotiation)
		}
		return "", nil
	})

	r.step(t, stepList, false, func() (string, error) { return listStep(ctx, conn, srv.tools) })
	r.step(t, stepCall, false, func() (string, error) { return "", echoStep(ctx, conn, srv.tools, "hello from anymcp") })
	r.step(t, stepProgress, false, func() (string, error) { return progressStep(ctx, conn, srv) })
	r.step(t, stepCancel, false, func() (string, error) { return cancelStep(ctx, conn, srv, wire) })
	r.step(t, stepClose, false, func() (string, error) {
		closed = true
		return closeStep(ctx, conn, srv)
	})
}

// ladder shortens a negotiation report to its attempts and their answers.
func ladder(rep *negotiate.Report) string {
	if rep == nil {
		return "no report"
	}
	var parts []string
	for _, a := range rep.Attempts {
		what := strings.TrimSpace(a.Method + " " + a.Request)
		if a.Method == "GET" {
			what = "GET (SSE stream)"
		}
		if a.Version != "" {
			what += " " + a.Version
		}
		answer := a.Answer
		if a.Status != 0 {
			answer = fmt.Sprint(a.Status)
		}
		if answer == "" {
			answer = "no answer"
		}
		parts = append(parts, what+" → "+answer)
	}
	return strings.Join(parts, ", ")
}

func listStep(ctx context.Context, conn *client.Conn, ts toolSet) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	tools, err := conn.AllTools(ctx)
	if err != nil {
		return "", err
	}
	have := map[string]bool{}
	for _, tl := range tools {
		have[tl.Name] = true
	}
	for _, name := range []string{ts.echo, ts.progress, ts.slow} {
		if !have[name] {
			return "", fmt.Errorf("tools/list: %d tools, no %q", len(tools), name)
		}
	}
	return fmt.Sprintf("%d tools", len(tools)), nil
}

func echoStep(ctx context.Context, conn *client.Conn, ts toolSet, text string) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	res, err := conn.CallTool(ctx, ts.echo, ts.echoArgs(text))
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) == 0 || res.Content[0].Text != ts.echoWant(text) {
		return fmt.Errorf("echo answered %+v, want the text %q", res, ts.echoWant(text))
	}
	return nil
}

func progressStep(ctx context.Context, conn *client.Conn, srv *peerServer) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	var (
		mu  sync.Mutex
		got []float64
		ts  = srv.tools
	)
	res, err := conn.CallTool(ctx, ts.progress, ts.progressArgs, client.WithProgress(func(p mcp.ProgressParams) {
		mu.Lock()
		got = append(got, p.Progress)
		mu.Unlock()
		if srv.received != nil {
			select {
			case srv.received <- struct{}{}:
			default:
			}
		}
	}))
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", fmt.Errorf("the tool failed: %+v", res.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != ts.progressSteps {
		return "", fmt.Errorf("%d progress notifications before the answer (%v), want %d", len(got), got, ts.progressSteps)
	}
	for i, v := range got {
		if v != float64(i+1) {
			return "", fmt.Errorf("progress %v, want 1..%d in order", got, ts.progressSteps)
		}
	}
	return fmt.Sprintf("%d notifications", len(got)), nil
}

// wireLog watches what a Conn sends, through client.WithMessageHook.
type wireLog struct {
	mu       sync.Mutex
	lastCall string      // the id of the last tools/call sent
	cancels  chan string // the requestId of every notifications/cancelled sent
}

func newWireLog() *wireLog { return &wireLog{cancels: make(chan string, 16)} }

func (w *wireLog) hook(sent bool, m *jsonrpc.Message) {
	if !sent {
		return
	}
	switch m.Method {
	case "tools/call":
		w.mu.Lock()
		w.lastCall = m.ID.Raw()
		w.mu.Unlock()
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		select {
		case w.cancels <- string(p.RequestID):
		default:
		}
	}
}

func (w *wireLog) lastCallID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastCall
}

// cancelStep starts the slow call, waits for its first progress
// notification (the server is running it), cancels it, and checks that the
// caller gets the cancellation at once; that the client signalled it as the
// revision says (an initialize-era server and stdio: notifications/cancelled naming
// the call; a stateless server over Streamable HTTP: the answer stream closed,
// which only the server can tell); that the server saw it (where it can
// tell); and that the connection still serves calls.
func cancelStep(ctx context.Context, conn *client.Conn, srv *peerServer, wire *wireLog) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	callCtx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		res, err := conn.CallTool(callCtx, srv.tools.slow, srv.tools.slowArgs, client.WithProgress(func(mcp.ProgressParams) {
			once.Do(func() { close(started) })
		}))
		if err == nil {
			err = fmt.Errorf("the call was answered (%+v) instead of cancelled", res)
		}
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		return "", fmt.Errorf("the call ended before it started: %w", err)
	case <-ctx.Done():
		return "", errors.New("no progress notification from the slow call")
	}
	callID := wire.lastCallID() // the slow call is the only one in flight
	cancelCall()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			return "", fmt.Errorf("the cancelled call returned %v, want context.Canceled and ErrOutcomeUnknown", err)
		}
	case <-ctx.Done():
		return "", errors.New("the cancelled call did not return")
	}
	info := conn.Info()
	how := "stream closed"
	if info.Era == mcp.EraInitialize || info.Transport == client.TransportStdio {
		how = "notifications/cancelled"
	wait:
		for {
			select {
			case id := <-wire.cancels:
				if id == callID {
					break wait
				}
			case <-ctx.Done():
				return "", fmt.Errorf("no notifications/cancelled for the call (id %s) was sent", callID)
			}
		}
	}
	note := how + "; the server cannot tell"
	if srv.sawCancel != nil {
		if err := srv.sawCancel(ctx, conn); err != nil {
			return "", fmt.Errorf("%s: %w", how, err)
		}
		note = how + "; the server saw it"
	}
	if err := echoStep(ctx, conn, srv.tools, "after the cancellation"); err != nil {
		return "", fmt.Errorf("the next call: %w", err)
	}
	return note, nil
}

// closeStep closes the Conn and checks that nothing of it is left: no
// goroutine of the library, no process of the server (stdio: anymcp stops
// it; HTTP: the test does, after the Conn closed).
func closeStep(ctx context.Context, conn *client.Conn, srv *peerServer) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := conn.Close(); err != nil {
		return "", fmt.Errorf("Close: %w", err)
	}
	select {
	case <-conn.Done():
	case <-ctx.Done():
		return "", errors.New("Done not closed after Close")
	}
	if err := waitNoLibraryGoroutines(ctx); err != nil {
		return "", err
	}
	if err := srv.stop(); err != nil {
		return "", fmt.Errorf("stopping the server: %w", err)
	}
	if srv.mark != "" {
		if err := waitNoProcesses(ctx, srv.mark); err != nil {
			return "", err
		}
		return "no goroutine, no process left", nil
	}
	return "no goroutine left", nil
}

// waitNoLibraryGoroutines waits, until ctx ends, for every goroutine
// running the library's code to end.
func waitNoLibraryGoroutines(ctx context.Context) error {
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		left := libraryGoroutines()
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d goroutines of the library left, the first: %s", len(left), left[0])
		case <-time.After(pause):
		}
	}
}

func libraryGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var left []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "github.com/anymcp/anymcp/") && !strings.Contains(g, "github.com/anymcp/anymcp/interop") {
			left = append(left, g)
		}
	}
	return left
}

// versionOf is the version of a Go module this test binary was built with,
// or of an installed npm package.
func versionOf(pkg string) string {
	if strings.HasPrefix(pkg, "@") {
		return npmVersion(pkg)
	}
	return goModuleVersion(pkg)
}
