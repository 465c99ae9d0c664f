package bridge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// outcomeMember is the outcome member of an error's data as it went over
// the wire ("" when none), read without the jsonrpc package's help.
func outcomeMember(t *testing.T, e *jsonrpc.Error) string {
	t.Helper()
	if e == nil || len(e.Data) == 0 {
		return ""
	}
	var data map[string]any
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatalf("data %s: %v", e.Data, err)
	}
	s, _ := data["io.github.anymcp/outcome"].(string)
	return s
}

// downstream is a client of one of the bridge's faces.
type downstream struct {
	name string
	dial func(t *testing.T, b *Bridge, url string) *client.Conn
}

// faces are the bridge's faces, each with an anymcp client of its era.
var faces = []downstream{
	{"stateless /mcp", func(t *testing.T, _ *Bridge, url string) *client.Conn {
		return dialFace(t, client.URL(url), client.WithEra(negotiate.StatelessOnly))
	}},
	{"session /mcp", func(t *testing.T, _ *Bridge, url string) *client.Conn {
		return dialInitialize(t, url)
	}},
	{"/sse", func(t *testing.T, _ *Bridge, url string) *client.Conn {
		return dialFace(t, client.URL(strings.TrimSuffix(url, "/mcp")+"/sse"), client.WithTransportPolicy(negotiate.SSEOnly),
			client.WithEra(negotiate.InitializeOnly), client.WithProtocolVersion(mcp.Version20241105))
	}},
	{"stdio initialize", func(t *testing.T, b *Bridge, _ string) *client.Conn {
		return stdioConn(t, b, negotiate.InitializeOnly)
	}},
	{"stdio stateless", func(t *testing.T, b *Bridge, _ string) *client.Conn {
		return stdioConn(t, b, negotiate.StatelessOnly)
	}},
}

func dialFace(t *testing.T, target client.Target, opts ...client.Option) *client.Conn {
	t.Helper()
	conn, err := client.Dial(testCtx(t), target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func stdioConn(t *testing.T, b *Bridge, era negotiate.EraPolicy) *client.Conn {
	t.Helper()
	tr, _ := serveStdio(t, b)
	conn, err := client.Open(testCtx(t), tr, client.WithEra(era))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// upstreams are the upstream eras the bridge is tested over.
var upstreams = []struct {
	name string
	eras testservers.Eras
}{{"stateless upstream", testservers.StatelessOnly}, {"initialize upstream", testservers.InitializeOnly}}

// An upstream that runs a tool and loses its answer: every face answers
// with -32603 whose data says the call may have run, which an anymcp
// client reads as jsonrpc.ErrOutcomeUnknown, still a *jsonrpc.Error. The
// tool ran once: neither the bridge nor the client sent it again.
func TestLostAnswerMayHaveRunOnEveryFace(t *testing.T) {
	for _, u := range upstreams {
		t.Run(u.name, func(t *testing.T) {
			up := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true, Options: testservers.Options{Eras: u.eras}})
			defer up.Close()
			b, url := startBridge(t, up.URL, Options{})
			runs := 0
			lose := func() {
				up.Inject(testservers.FaultRule{Fault: testservers.FaultDropStreamNoIDs, Method: "tools/call", Count: 1})
			}
			check := func(t *testing.T) {
				t.Helper()
				runs++
				if st := up.Server().Stats(); st.Executions != runs || st.Duplicates != 0 {
					t.Errorf("the upstream ran the tool %d times (%d duplicates), want %d and none", st.Executions, st.Duplicates, runs)
				}
			}

			// The wire form, on the stateless face.
			lose()
			ex := statelessCall(t, url, 1, "tools/call", map[string]any{"name": "once", "arguments": map[string]any{"key": "raw"}}, nil)
			if ex.resp == nil || ex.resp.Error == nil || ex.resp.Error.Code != jsonrpc.CodeInternalError || outcomeMember(t, ex.resp.Error) != "unknown" {
				t.Fatalf("lost answer: status %d, %+v, body %q", ex.status, ex.resp, ex.body)
			}
			check(t)

			for _, f := range faces {
				t.Run(f.name, func(t *testing.T) {
					conn := f.dial(t, b, url)
					lose()
					_, err := conn.CallTool(testCtx(t), "once", map[string]any{"key": f.name})
					if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
						t.Errorf("CallTool = %v, want an error matching ErrOutcomeUnknown", err)
					}
					var rpcErr *jsonrpc.Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || outcomeMember(t, rpcErr) != "unknown" ||
						!strings.Contains(rpcErr.Message, "may have run") {
						t.Errorf("CallTool = %v, want the bridge's -32603 whose data says unknown", err)
					}
					check(t)
				})
			}
		})
	}
}

// An upstream that cannot be reached: the request never went out, and the
// answer's data says it did not run, on every face. No anymcp client
// takes it for a lost answer, nor sends it again.
func TestUnreachableUpstreamNotRun(t *testing.T) {
	up := testservers.StartStateless(testservers.HTTPOptions{JSONResponse: true})
	b, url := startBridge(t, up.URL, Options{}, client.WithReconnectPolicy(reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxAttempts: 2}))
	conns := make([]*client.Conn, len(faces))
	for i, f := range faces {
		conns[i] = f.dial(t, b, url)
	}
	up.Close()
	ex := statelessCall(t, url, 1, "tools/call", map[string]any{"name": "once", "arguments": map[string]any{"key": "raw"}}, nil)
	if ex.resp == nil || ex.resp.Error == nil || ex.resp.Error.Code != jsonrpc.CodeInternalError || outcomeMember(t, ex.resp.Error) != "not-run" {
		t.Fatalf("unreachable upstream: status %d, %+v, body %q", ex.status, ex.resp, ex.body)
	}
	for i, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			_, err := conns[i].CallTool(testCtx(t), "once", map[string]any{"key": f.name}, client.AsReplayable())
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || outcomeMember(t, rpcErr) != "not-run" || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Errorf("CallTool = %v, want the bridge's error whose data says not-run", err)
			}
		})
	}
	if st := up.Server().Stats(); st.Executions != 0 {
		t.Errorf("the upstream ran the tool %d times, want 0", st.Executions)
	}
}

// Through the bridge, a call whose answer the upstream lost is sent
// again by the client only when it is safe to repeat, as over a direct
// connection: a call marked AsReplayable is, and then has its answer; a
// tool call that is not safe to repeat is not (see
// TestLostAnswerMayHaveRunOnEveryFace).
func TestLostAnswerReplayedOnlyWhenSafe(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true})
	defer up.Close()
	b, url := startBridge(t, up.URL, Options{})
	for i, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			conn := f.dial(t, b, url)
			up.Inject(testservers.FaultRule{Fault: testservers.FaultDropStreamNoIDs, Method: "tools/call", Count: 1})
			res, err := conn.CallTool(testCtx(t), "once", map[string]any{"key": f.name}, client.AsReplayable())
			if err != nil || !strings.Contains(res.Content[0].Text, "executed 2 time") {
				t.Fatalf("CallTool = %+v, %v; want the second execution's answer", res, err)
			}
			if st := up.Server().Stats(); st.Executions != 2*(i+1) {
				t.Errorf("the upstream ran the tool %d times in all, want %d", st.Executions, 2*(i+1))
			}
		})
	}
}

// An upstream call that runs out of the bridge's request timeout once it
// went out: every face says it may have run.
func TestUpstreamTimeoutMayHaveRun(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	b, url := startBridge(t, up.URL, Options{}, client.WithDefaultTimeout(time.Second)) // a dial of the upstream fits in it under load
	slow := map[string]any{"steps": 1, "delayMs": 60_000}
	ex := statelessCall(t, url, 1, "tools/call", map[string]any{"name": "slow", "arguments": slow}, nil)
	if ex.resp == nil || ex.resp.Error == nil || ex.resp.Error.Code != jsonrpc.CodeInternalError || outcomeMember(t, ex.resp.Error) != "unknown" {
		t.Fatalf("timed out: status %d, %+v, body %q", ex.status, ex.resp, ex.body)
	}
	for _, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			conn := f.dial(t, b, url)
			_, err := conn.CallTool(testCtx(t), "slow", slow)
			var rpcErr *jsonrpc.Error
			if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.As(err, &rpcErr) || outcomeMember(t, rpcErr) != "unknown" {
				t.Errorf("CallTool = %v, want the bridge's error whose data says unknown", err)
			}
		})
	}
}
