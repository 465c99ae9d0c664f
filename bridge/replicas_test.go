package bridge

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

var sharedKey = []byte("0123456789abcdef0123456789abcdef")

// Behind a load balancer: a stateless upstream's round, begun on one
// replica, completes on another that shares the key (the upstream's state
// rides sealed in the bridge's); an initialize-era upstream's round, which
// waits in its replica's process, fails typed on another.
func TestRoundsAcrossReplicas(t *testing.T) {
	elicit := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}}
	answer := func(first map[string]any) map[string]any {
		answers := map[string]any{}
		for k := range first["inputRequests"].(map[string]any) {
			answers[k] = map[string]any{"action": "accept", "content": map[string]any{"name": "Ola"}}
		}
		return map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}, "inputResponses": answers, "requestState": first["requestState"]}
	}

	stateless := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.StatelessOnly}})
	defer stateless.Close()
	_, a := startBridge(t, stateless.URL, Options{StateKey: sharedKey, ReplicaID: "a"})
	_, b := startBridge(t, stateless.URL, Options{StateKey: sharedKey, ReplicaID: "b"})
	first := resultOf(t, statelessCall(t, a, 1, "tools/call", elicit, elicitCaps))
	if first["resultType"] != mcp.ResultInputRequired {
		t.Fatalf("first %v", first)
	}
	done := resultOf(t, statelessCall(t, b, 2, "tools/call", answer(first), elicitCaps))
	if !strings.Contains(textOf(t, done), "Ola") {
		t.Fatalf("on the other replica: %v", done)
	}

	initialize := testservers.StartStreamable(testservers.HTTPOptions{})
	defer initialize.Close()
	_, c := startBridge(t, initialize.URL, Options{StateKey: sharedKey, ReplicaID: "c"})
	_, d := startBridge(t, initialize.URL, Options{StateKey: sharedKey, ReplicaID: "d"})
	first = resultOf(t, statelessCall(t, c, 3, "tools/call", elicit, elicitCaps))
	ex := statelessCall(t, d, 4, "tools/call", answer(first), elicitCaps)
	// The call runs there: its outcome is unknown to a client that
	// cannot reach that replica.
	if ex.resp == nil || ex.resp.Error == nil || ex.resp.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(ex.resp.Error.Message, "another bridge replica") ||
		outcomeMember(t, ex.resp.Error) != jsonrpc.OutcomeUnknown {
		t.Fatalf("pending round on another replica: %+v", ex.resp)
	}
	// On its own replica it still completes.
	done = resultOf(t, statelessCall(t, c, 5, "tools/call", answer(first), elicitCaps))
	if !strings.Contains(textOf(t, done), "Ola") {
		t.Fatalf("on its replica: %v", done)
	}
}

// A client that closes its stream gives the call up: the upstream call is
// cancelled too.
func TestStatelessClosedStreamCancels(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{})
	ctx := testCtx(t)
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		// Wait until the call runs upstream, then let the client go.
		_, _ = up.Server().WaitStats(ctx, func(s testservers.Stats) bool { return s.Executions == 1 })
		cancel()
	}()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"once","arguments":{"key":"c1","delayMs":20000},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequestWithContext(cctx, http.MethodPost, url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "once"} {
		req.Header.Set(k, v)
	}
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("answered: %d", res.StatusCode)
	}
	if _, err := up.Server().WaitStats(ctx, func(s testservers.Stats) bool { return s.Cancelled >= 1 || s.RequestsCancelled >= 1 }); err != nil {
		t.Fatalf("the upstream call was not cancelled: %+v", up.Server().Stats())
	}
}

// Rounds waiting in the process are bounded: past MaxRounds a call that
// would wait is refused, not held; the waiting one still completes.
func TestRoundsBounded(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{MaxRounds: 1})
	elicit := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}}
	first := resultOf(t, statelessCall(t, url, 1, "tools/call", elicit, elicitCaps))
	if first["resultType"] != mcp.ResultInputRequired {
		t.Fatalf("first %v", first)
	}
	ex := statelessCall(t, url, 2, "tools/call", map[string]any{"name": "elicit", "arguments": map[string]any{"message": "again?"}}, elicitCaps)
	if ex.resp == nil || ex.resp.Error == nil || !strings.Contains(ex.resp.Error.Message, "too many calls waiting") {
		t.Fatalf("second waiting call: %+v", ex.resp)
	}
	answers := map[string]any{}
	for k := range first["inputRequests"].(map[string]any) {
		answers[k] = map[string]any{"action": "decline"}
	}
	done := resultOf(t, statelessCall(t, url, 3, "tools/call", map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}, "inputResponses": answers, "requestState": first["requestState"]}, elicitCaps))
	if done["resultType"] != "complete" {
		t.Fatalf("the waiting round: %v", done)
	}
}
