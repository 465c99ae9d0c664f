package gateway

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// fastRetries is the reconnect policy of the fault tests' Conns, direct
// and the fleet member's alike.
var fastRetries = client.WithReconnectPolicy(reconnect.Policy{InitialDelay: 2 * time.Millisecond, MaxDelay: 50 * time.Millisecond, MaxAttempts: 20})

// outcomeFaces are the ways a fault test reaches the faulty upstream: on
// its own, and through a gateway's stateless and session faces.
var outcomeFaces = []struct {
	name string
	dial func(t *testing.T, up *testservers.HTTPServer) (conn *client.Conn, tool string)
}{
	{"direct", func(t *testing.T, up *testservers.HTTPServer) (*client.Conn, string) {
		return dialT(t, client.URL(up.URL), fastRetries), "once"
	}},
	{"gateway", func(t *testing.T, up *testservers.HTTPServer) (*client.Conn, string) {
		return dialT(t, client.URL(faultyGateway(t, up)+"/mcp")), "up__once"
	}},
	{"gateway-session", func(t *testing.T, up *testservers.HTTPServer) (*client.Conn, string) {
		return dialT(t, client.URL(faultyGateway(t, up)+"/mcp"), client.WithEra(negotiate.InitializeOnly)), "up__once"
	}},
}

func faultyGateway(t *testing.T, up *testservers.HTTPServer) string {
	_, url := startGateway(t, []fleet.Server{{Name: "up", Target: client.URL(up.URL), Options: []client.Option{fastRetries}}}, Config{})
	return url
}

func dialT(t *testing.T, target client.Target, opts ...client.Option) *client.Conn {
	t.Helper()
	conn, err := client.Dial(ctxT(t), target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// Each fault of the upstream's HTTP hop, met by a non-idempotent call,
// gives a client of the gateway what it gives a client of the upstream
// itself: a refusal with Retry-After is sent again and runs once; one
// without fails, not run, and not as "may have run"; a lost answer is
// ErrOutcomeUnknown, never sent again: the request ran at most once.
func TestUpstreamFaultOutcomesAsDirect(t *testing.T) {
	const ran, notRun, mayHaveRun = "ran", "not run", "may have run"
	cases := []struct {
		rule testservers.FaultRule
		want string
	}{
		{testservers.FaultRule{Fault: testservers.FaultDropStreamNoIDs}, mayHaveRun},
		{testservers.FaultRule{Fault: testservers.FaultUnavailable}, notRun}, // its body is a JSON-RPC error: the server's own refusal
		{testservers.FaultRule{Fault: testservers.FaultTooManyRequests, RetryAfter: "0"}, ran},
		{testservers.FaultRule{Fault: testservers.FaultUnavailable, RetryAfter: "0"}, ran},
		{testservers.FaultRule{Fault: testservers.FaultExpireSession}, ran},
		{testservers.FaultRule{Fault: testservers.FaultDropStreamNoIDs}, mayHaveRun}, // on the new session
	}
	for _, f := range outcomeFaces {
		t.Run(f.name, func(t *testing.T) {
			up := testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.InitializeOnly}})
			defer up.Close()
			conn, tool := f.dial(t, up)
			least, most := 0, 0
			for i, c := range cases {
				c.rule.Method, c.rule.Count = "tools/call", 1
				up.Inject(c.rule)
				_, err := conn.CallTool(ctxT(t), tool, map[string]any{"key": fmt.Sprint(i)})
				got := ran
				if errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
					got = mayHaveRun
				} else if err != nil {
					got = notRun
				}
				if got != c.want {
					t.Errorf("%s %q: CallTool = %v (%s), want %s", c.rule.Fault, c.rule.RetryAfter, err, got, c.want)
				}
				var rpcErr *jsonrpc.Error
				if got == notRun && !errors.As(err, &rpcErr) {
					t.Errorf("%s %q: CallTool = %v, want the server's refusal, a *jsonrpc.Error", c.rule.Fault, c.rule.RetryAfter, err)
				}
				switch c.want { // a cut stream's request may still be running, or never run
				case ran:
					least++
					most++
				case mayHaveRun:
					most++
				}
				if st := up.Server().Stats(); st.Executions < least || st.Executions > most || st.Duplicates != 0 {
					t.Errorf("%s %q: the upstream ran the tool %d times in all (%d duplicates), want %d to %d and none",
						c.rule.Fault, c.rule.RetryAfter, st.Executions, st.Duplicates, least, most)
				}
			}
		})
	}
}

// Under random faults on every request (scripts/outcomefaults, small):
// no call runs twice through the gateway, and every failed call is
// typed "may have run", as a direct client's.
func TestUpstreamRandomFaultsAsDirect(t *testing.T) {
	const calls = 150
	for _, f := range outcomeFaces {
		t.Run(f.name, func(t *testing.T) {
			up := testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.InitializeOnly},
				Faults: testservers.Faults{Seed: 7, Rules: []testservers.FaultRule{
					{Fault: testservers.FaultDropStreamNoIDs, Probability: 0.1},
					{Fault: testservers.FaultTooManyRequests, Probability: 0.1, RetryAfter: "0"},
					{Fault: testservers.FaultUnavailable, Probability: 0.1, RetryAfter: "0"},
					{Fault: testservers.FaultExpireSession, Probability: 0.1},
				}}})
			defer up.Close()
			conn, tool := f.dial(t, up)
			ok, lost := 0, 0
			for i := range calls {
				_, err := conn.CallTool(ctxT(t), tool, map[string]any{"key": fmt.Sprint(i)})
				switch {
				case err == nil:
					ok++
				case errors.Is(err, jsonrpc.ErrOutcomeUnknown):
					lost++
				default:
					t.Errorf("call %d: %v, want a result or an error matching ErrOutcomeUnknown", i, err)
				}
			}
			st := up.Server().Stats()
			if st.Duplicates != 0 || st.Executions < ok || st.Executions > calls {
				t.Errorf("the upstream ran the tool %d times (%d duplicates), want %d to %d and none", st.Executions, st.Duplicates, ok, calls)
			}
			for _, k := range []testservers.Fault{testservers.FaultDropStreamNoIDs, testservers.FaultTooManyRequests, testservers.FaultUnavailable, testservers.FaultExpireSession} {
				if st.Faults[string(k)] == 0 {
					t.Errorf("no %s fault was injected: %v", k, st.Faults)
				}
			}
			if lost == 0 || ok == 0 {
				t.Errorf("%d answered, %d lost: want some of each", ok, lost)
			}
		})
	}
}
