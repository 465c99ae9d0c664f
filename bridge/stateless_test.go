package bridge

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

var elicitCaps = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}

// A stateless client calls a tool of an initialize-era upstream through
// the bridge: the result is a stateless one (resultType).
func TestStatelessCallInitializeUpstream(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	b, url := startBridge(t, up.URL, Options{})
	if b.Info().Era != mcp.EraInitialize {
		t.Fatalf("upstream era %s", b.Info().Era)
	}
	res := resultOf(t, statelessCall(t, url, 1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}, nil))
	if textOf(t, res) != "hi" || res["resultType"] != "complete" {
		t.Fatalf("result %v", res)
	}
	list := resultOf(t, statelessCall(t, url, 2, "tools/list", nil, nil))
	if _, ok := list["ttlMs"]; !ok || list["cacheScope"] != "private" {
		t.Fatalf("tools/list without caching hints: %v", list)
	}
	disc := resultOf(t, statelessCall(t, url, 3, "server/discover", nil, nil))
	if v, _ := disc["supportedVersions"].([]any); len(v) != 1 || v[0] != mcp.LatestStatelessVersion {
		t.Fatalf("discover %v", disc)
	}
}

// An initialize-era upstream's elicitation/create during a call becomes an
// input_required round; the retry with the answer completes the call,
// which ran once.
func TestStatelessRoundFromServerRequest(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{})
	params := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}}
	first := resultOf(t, statelessCall(t, url, 1, "tools/call", params, elicitCaps))
	if first["resultType"] != mcp.ResultInputRequired {
		t.Fatalf("first answer %v", first)
	}
	reqs, _ := first["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("inputRequests %v", reqs)
	}
	var key string
	for k, v := range reqs {
		key = k
		if v.(map[string]any)["method"] != "elicitation/create" {
			t.Fatalf("input request %v", v)
		}
	}
	state, _ := first["requestState"].(string)
	retry := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"},
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}},
		"requestState":   state}
	done := resultOf(t, statelessCall(t, url, 2, "tools/call", retry, elicitCaps))
	if done["resultType"] != "complete" || !strings.Contains(textOf(t, done), "Ada") {
		t.Fatalf("retry answer %v", done)
	}
	if n := up.Server().Stats().ToolCalls["elicit"]; n != 1 {
		t.Fatalf("elicit ran %d times", n)
	}
	// The same state again: the round is over.
	again := statelessCall(t, url, 3, "tools/call", retry, elicitCaps)
	if again.resp == nil || again.resp.Error == nil || again.resp.Error.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("replayed state: %+v", again.resp)
	}
}

// A stateless upstream's input_required round reaches the stateless client
// as a round of the bridge's, and back.
func TestStatelessRoundFromStatelessUpstream(t *testing.T) {
	up := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.StatelessOnly}})
	defer up.Close()
	b, url := startBridge(t, up.URL, Options{})
	if b.Info().Era != mcp.EraStateless {
		t.Fatalf("upstream era %s", b.Info().Era)
	}
	params := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}}
	first := resultOf(t, statelessCall(t, url, 1, "tools/call", params, elicitCaps))
	reqs, _ := first["inputRequests"].(map[string]any)
	if first["resultType"] != mcp.ResultInputRequired || len(reqs) != 1 {
		t.Fatalf("first answer %v", first)
	}
	answers := map[string]any{}
	for k := range reqs {
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{"name": "Grace"}}
	}
	retry := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}, "inputResponses": answers, "requestState": first["requestState"]}
	done := resultOf(t, statelessCall(t, url, 2, "tools/call", retry, elicitCaps))
	if !strings.Contains(textOf(t, done), "Grace") {
		t.Fatalf("retry answer %v", done)
	}
}

// A requestState changed by the client, sealed under another key, or for
// another request, is refused (-32602) and resumes nothing.
func TestStatelessRoundStateVerified(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{})
	params := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}}
	first := resultOf(t, statelessCall(t, url, 1, "tools/call", params, elicitCaps))
	state := first["requestState"].(string)
	other, err := newSealer(nil)
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := other.seal(roundState{Owner: "x", Kind: kindPass, Expires: 1 << 40}, "tools/call", "elicit")
	for name, s := range map[string]string{
		"tampered":    state[:len(state)-2] + "AA",
		"appended":    state + "-TAMPERED",
		"another key": forged,
	} {
		ex := statelessCall(t, url, 2, "tools/call", map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}, "requestState": s}, elicitCaps)
		if ex.resp == nil || ex.resp.Error == nil || ex.resp.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: status %d, %+v", name, ex.status, ex.resp)
		}
	}
	// Bound to the request: the state of a call of elicit does not resume a prompt.
	if _, err := (&sealer{aead: mustSealer(t).aead}).open(state, "prompts/get", "elicit", nowForTest()); err == nil {
		t.Error("a state opened for another method")
	}
}

// Two stateless clients that send the same request (same id, same
// params: ids restart at 1 in each new client, and every client of a
// bridge shows the same token, or none) are two calls: the tool runs for
// each, at once or one after the other, and neither gets the other's answer.
func TestStatelessSameRequestTwoClients(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{AuthToken: "shared"})
	params := func() map[string]any {
		return map[string]any{"name": "counter", "arguments": map[string]any{}}
	}
	var wg sync.WaitGroup
	results := make([]exchange, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = statelessCall(t, url, 1, "tools/call", params(), nil, "Authorization", "Bearer shared")
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, ex := range results {
		seen[textOf(t, resultOf(t, ex))] = true
	}
	// One after the other.
	seen[textOf(t, resultOf(t, statelessCall(t, url, 1, "tools/call", params(), nil, "Authorization", "Bearer shared")))] = true
	if n := up.Server().Stats().ToolCalls["counter"]; n != 3 || len(seen) != 3 {
		t.Fatalf("three clients' counter calls ran %d times, answered %v", n, seen)
	}
}

// Two clients, one after the other, start the same call that asks for
// input (same id, same params): each gets a round of its own and completes
// it (before, the second got the first's round, already ended: -32602).
func TestStatelessSameRoundTwoClients(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{})
	for i, who := range []string{"Ada", "Kay"} {
		params := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}}
		first := resultOf(t, statelessCall(t, url, 1, "tools/call", params, elicitCaps))
		if first["resultType"] != mcp.ResultInputRequired {
			t.Fatalf("client %d: first answer %v", i, first)
		}
		answers := map[string]any{}
		for k := range first["inputRequests"].(map[string]any) {
			answers[k] = map[string]any{"action": "accept", "content": map[string]any{"name": who}}
		}
		retry := map[string]any{"name": "elicit", "arguments": map[string]any{"message": "who?"}, "inputResponses": answers, "requestState": first["requestState"]}
		done := resultOf(t, statelessCall(t, url, 2, "tools/call", retry, elicitCaps))
		if !strings.Contains(textOf(t, done), who) {
			t.Fatalf("client %d: retry answer %v", i, done)
		}
	}
	if n := up.Server().Stats().ToolCalls["elicit"]; n != 2 {
		t.Fatalf("elicit ran %d times, want 2", n)
	}
}

// Calls run at once, not one after another: every call of a slow tool is
// in the upstream before any has ended.
func TestStatelessCallsConcurrent(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{})
	const n = 6
	ctx := testCtx(t)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resultOf(t, statelessCall(t, url, i, "tools/call", map[string]any{"name": "once", "arguments": map[string]any{"key": "k" + string(rune('a'+i)), "delayMs": 3000}}, nil))
		}()
	}
	// All n executions start while the first still waits its 3 s.
	st, err := up.Server().WaitStats(ctx, func(s testservers.Stats) bool { return s.Executions == n })
	if err != nil {
		t.Fatalf("executions %d of %d started: %v", st.Executions, n, err)
	}
	wg.Wait()
}

// Headers that disagree with the body are refused with -32020 and 400.
func TestStatelessHeaderMismatch(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{})
	for name, hdr := range map[string][]string{
		"method":         {"Mcp-Method", "tools/list"},
		"missing method": {"Mcp-Method", ""},
		"name":           {"Mcp-Name", "add"},
		"missing name":   {"Mcp-Name", ""},
		"version":        {"Mcp-Protocol-Version", "2025-11-25"},
		// The server core's rules (internal/servehttp): a sentinel must
		// decode to UTF-8, raw non-ASCII is refused, Mcp-Method has no
		// sentinel.
		"name not UTF-8":     {"Mcp-Name", "=?base64?/w==?="},
		"name raw non-ASCII": {"Mcp-Name", "échø"},
		"method as sentinel": {"Mcp-Method", "=?base64?dG9vbHMvY2FsbA==?="},
	} {
		ex := statelessCall(t, url, 1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, nil, hdr...)
		if ex.status != http.StatusBadRequest || ex.resp == nil || ex.resp.Error == nil || ex.resp.Error.Code != jsonrpc.CodeHeaderMismatch {
			t.Errorf("%s: status %d, %+v", name, ex.status, ex.resp)
		}
	}
	if n := up.Server().Stats().ToolCalls["echo"]; n != 0 {
		t.Errorf("echo ran %d times", n)
	}
}

// Missing _meta members, an unknown revision and removed methods.
func TestStatelessMetaAndMethods(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": map[string]any{"_meta": map[string]any{mcp.MetaProtocolVersion: mcp.LatestStatelessVersion}}})
	h := http.Header{"Mcp-Protocol-Version": {mcp.LatestStatelessVersion}, "Mcp-Method": {"tools/list"}}
	if ex := post(t, url, body, h); ex.status != http.StatusBadRequest || ex.resp.Error == nil || ex.resp.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("no capabilities: %d %+v", ex.status, ex.resp)
	}
	body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": map[string]any{"_meta": map[string]any{mcp.MetaProtocolVersion: "2099-01-01", mcp.MetaClientCapabilities: map[string]any{}}}})
	h.Set("Mcp-Protocol-Version", "2099-01-01")
	ex := post(t, url, body, h)
	if ex.status != http.StatusBadRequest || ex.resp.Error == nil || ex.resp.Error.Code != jsonrpc.CodeUnsupportedProtocolVersion || !strings.Contains(string(ex.resp.Error.Data), mcp.LatestStatelessVersion) {
		t.Errorf("unknown revision: %d %+v", ex.status, ex.resp)
	}
	for _, m := range []string{"ping", "initialize", "logging/setLevel", "no/such"} {
		if ex := statelessCall(t, url, 1, m, nil, nil); ex.status != http.StatusNotFound || ex.resp.Error == nil || ex.resp.Error.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: %d %+v", m, ex.status, ex.resp)
		}
	}
}

// Pagination passes through: the upstream's nextCursor, and the cursor
// sent back.
func TestStatelessPagination(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{PageSize: 2}})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{})
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res := resultOf(t, statelessCall(t, url, page, "tools/list", params, nil))
		for _, tool := range res["tools"].([]any) {
			seen[tool.(map[string]any)["name"].(string)] = true
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			break
		}
		if page > 50 {
			t.Fatal("no end to the pages")
		}
		cursor = next
	}
	if len(seen) != len(testservers.ToolNames()) {
		t.Fatalf("%d tools over the pages, want %d", len(seen), len(testservers.ToolNames()))
	}
}
