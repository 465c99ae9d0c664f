package testservers

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// statelessParams returns params, with stateless _meta, as JSON text.
func statelessParams(params map[string]any, caps map[string]any, more map[string]any) string {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	p["_meta"] = statelessMeta("2026-07-28", caps, more)
	b, _ := json.Marshal(p)
	return string(b)
}

func TestStdioStatelessOnly(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{Eras: StatelessOnly, CacheTTL: time.Minute})
	// The probe a dual-era client sends first.
	m, _ := w.request(t, 1, "server/discover", statelessParams(nil, map[string]any{}, nil))
	f := checkStatelessResult(t, m, "complete", 60000)
	if string(f["supportedVersions"]) != `["2026-07-28"]` {
		t.Errorf("supportedVersions %s", f["supportedVersions"])
	}
	// A legacy client is told which versions the server speaks.
	m, _ = w.request(t, 2, "initialize", initParams)
	wantErrorCode(t, m, jsonrpc.CodeUnsupportedProtocolVersion)
	if !strings.Contains(m.Error.Message, "2026-07-28") || !strings.Contains(string(m.Error.Data), `"supported":["2026-07-28"]`) {
		t.Errorf("initialize refused with %v %s", m.Error, m.Error.Data)
	}
	// No _meta: invalid params; an unsupported version: -32022.
	m, _ = w.request(t, 3, "tools/list", "")
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	m, _ = w.request(t, 4, "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}`)
	wantErrorCode(t, m, jsonrpc.CodeUnsupportedProtocolVersion)
	m, _ = w.request(t, 5, "ping", statelessParams(nil, map[string]any{}, nil))
	wantErrorCode(t, m, jsonrpc.CodeMethodNotFound)
	// No headers over stdio: a non-ASCII tool name is just a name.
	m, _ = w.request(t, 6, "tools/call", statelessParams(map[string]any{"name": NonASCIIToolName, "arguments": map[string]any{"name": "Ann"}}, map[string]any{}, nil))
	if text, _ := toolText(t, m); text != "grüße, Ann" {
		t.Errorf("text %q", text)
	}
	// MRTR over stdio.
	params := map[string]any{"name": "sample", "arguments": map[string]any{"prompt": "p"}}
	m, _ = w.request(t, 7, "tools/call", statelessParams(params, allCaps, nil))
	r := needInput(t, m)
	params["inputResponses"] = answerAll(r)
	m, _ = w.request(t, 8, "tools/call", statelessParams(params, allCaps, nil))
	if text, _ := toolText(t, m); text != "Paris" {
		t.Errorf("sample: %q", text)
	}
	st := w.srv.Stats()
	if st.InitializeRejected != 1 || st.Errors[jsonrpc.CodeUnsupportedProtocolVersion] != 2 || st.VersionsSeen["2025-11-25"] != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestStdioStatelessCancelled(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{Eras: StatelessOnly})
	w.send(t, reqJSON(1, "tools/call", statelessParams(map[string]any{"name": "slow", "arguments": map[string]any{"steps": 100000, "delayMs": 5}},
		map[string]any{}, map[string]any{"progressToken": "t"})))
	if m := w.recv(t); m.Method != "notifications/progress" {
		t.Fatalf("got %+v", m)
	}
	w.send(t, notifJSON("notifications/cancelled", `{"requestId":1,"reason":"enough"}`))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if st, err := w.srv.WaitStats(ctx, func(st Stats) bool { return st.RequestsCancelled == 1 }); err != nil || st.Cancelled != 1 {
		t.Fatalf("%v %+v", err, st)
	}
	// No response for it: the next answer is that of a later request.
	w.send(t, reqJSON(2, "tools/list", statelessParams(nil, map[string]any{}, nil)))
	for {
		m := w.recv(t)
		if m.IsResponse() {
			if m.ID.Raw() != "2" {
				t.Fatalf("answer to %s after its cancellation", m.ID)
			}
			break
		}
	}
}

// stdioNote reads messages until one of method comes, and returns it.
func stdioNote(t *testing.T, w *stdioWire, method string) *jsonrpc.Message {
	t.Helper()
	for {
		m := w.recv(t)
		if m.Method == method {
			return m
		}
	}
}

func TestStdioStatelessListen(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		name := "result"
		if cancelled {
			name = "cancelled"
		}
		t.Run(name, func(t *testing.T) {
			w := newStdioWire(t, context.Background(), Options{Eras: StatelessOnly, ListenEndWithCancelled: cancelled})
			w.send(t, reqJSON(1, "subscriptions/listen", statelessParams(map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, map[string]any{}, nil)))
			w.send(t, reqJSON(2, "subscriptions/listen", statelessParams(map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{StaticTextURI}}}, map[string]any{}, nil)))
			acks := map[string]bool{}
			for len(acks) < 2 {
				m := stdioNote(t, w, "notifications/subscriptions/acknowledged")
				acks[subscriptionID(t, m.Params)] = true
			}
			if !acks["1"] || !acks["2"] {
				t.Fatalf("acks %v", acks)
			}
			if n := w.srv.NotifyToolsChanged(); n != 1 {
				t.Errorf("tools: %d", n)
			}
			if got := subscriptionID(t, stdioNote(t, w, "notifications/tools/list_changed").Params); got != "1" {
				t.Errorf("tools list_changed tagged %s", got)
			}
			if n := w.srv.NotifyResourceUpdated(StaticTextURI); n != 1 {
				t.Errorf("updated: %d", n)
			}
			if got := subscriptionID(t, stdioNote(t, w, "notifications/resources/updated").Params); got != "2" {
				t.Errorf("resources/updated tagged %s", got)
			}
			// The client cancels subscription 2.
			w.send(t, notifJSON("notifications/cancelled", `{"requestId":2}`))
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if _, err := w.srv.WaitStats(ctx, func(st Stats) bool { return st.ListenActive == 1 }); err != nil {
				t.Fatal(err)
			}
			// EOF of stdin: subscription 1 ends gracefully.
			if err := w.shutdown(t); err != nil {
				t.Fatal(err)
			}
			var rest []*jsonrpc.Message
			for m := range w.msgs {
				rest = append(rest, m)
			}
			if len(rest) != 1 {
				t.Fatalf("after EOF: %d messages", len(rest))
			}
			end := rest[0]
			if cancelled {
				if end.Method != "notifications/cancelled" || !strings.Contains(string(end.Params), `"requestId":1`) {
					t.Errorf("end %s %s", end.Method, end.Params)
				}
			} else {
				if !end.IsResponse() || end.ID.Raw() != "1" || subscriptionID(t, end.Result) != "1" {
					t.Errorf("end %+v %s", end, end.Result)
				}
				checkStatelessResult(t, end, "complete", -1)
			}
			if st := w.srv.Stats(); st.ListenStreams != 2 || st.ListenEnded != 1 || st.RequestsCancelled != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestStdioDualEra: one process serves a legacy session and stateless
// requests.
func TestStdioDualEra(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{Eras: DualEra})
	m, _ := w.request(t, 1, "server/discover", statelessParams(nil, map[string]any{}, nil))
	f := checkStatelessResult(t, m, "complete", 0)
	if !strings.HasPrefix(string(f["supportedVersions"]), `["2026-07-28","2025-11-25"`) {
		t.Errorf("supportedVersions %s", f["supportedVersions"])
	}
	init := result[mcp.InitializeResult](t, w.initialize(t))
	if init.ProtocolVersion != "2025-11-25" {
		t.Errorf("initialize %+v", init)
	}
	legacy, _ := w.request(t, 2, "tools/list", "")
	if strings.Contains(string(legacy.Result), "resultType") || strings.Contains(string(legacy.Result), "multi_round") {
		t.Errorf("legacy tools/list %s", legacy.Result)
	}
	stateless, _ := w.request(t, 3, "tools/list", statelessParams(nil, map[string]any{}, nil))
	checkStatelessResult(t, stateless, "complete", 0)
	if !strings.Contains(string(stateless.Result), "multi_round") {
		t.Errorf("stateless tools/list lacks the stateless tools")
	}
	if p, _ := w.request(t, 4, "ping", ""); p.Error != nil {
		t.Errorf("legacy ping: %v", p.Error)
	}
	// An initialize-era server request (sampling) still works for the legacy session.
	w.send(t, reqJSON(5, "tools/call", `{"name":"sample","arguments":{"prompt":"p"}}`))
	req := w.recv(t)
	if req.Method != "sampling/createMessage" || !req.IsRequest() {
		t.Fatalf("got %+v", req)
	}
	w.send(t, `{"jsonrpc":"2.0","id":`+req.ID.Raw()+`,"result":`+clientAnswers["sampling/createMessage"]+`}`)
	if text, _ := toolText(t, w.recv(t)); text != "sampled!" {
		t.Errorf("legacy sample: %q", text)
	}
}

func TestStdioEnvEras(t *testing.T) {
	opts := Options{Eras: DualEra, StatelessVersions: []string{"2026-07-28", "2027-01-01"}, StatelessInitialize: InitializeMethodNotFound, SilentBeforeInitialize: true,
		CacheTTL: 90 * time.Second, CacheScope: mcp.CachePrivate, InvalidHeaderTools: true}
	for _, kv := range StdioEnv(opts) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	got, err := OptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if got.Eras != DualEra || !slices.Equal(got.StatelessVersions, opts.StatelessVersions) || got.StatelessInitialize != InitializeMethodNotFound ||
		got.CacheTTL != opts.CacheTTL || got.CacheScope != mcp.CachePrivate || !got.InvalidHeaderTools || !got.SilentBeforeInitialize {
		t.Errorf("OptionsFromEnv: %+v", got)
	}
	t.Setenv(EnvEras, "future")
	if _, err := OptionsFromEnv(); err == nil {
		t.Error("bad eras accepted")
	}
	if Eras(7).String() != "eras(7)" || StatelessOnly.String() != "stateless-only" {
		t.Error("Eras.String")
	}
}

// TestStdioStatelessSubprocess runs this test binary as a stateless-only stdio
// server.
func TestStdioStatelessSubprocess(t *testing.T) {
	path, args, env := StdioCommand()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(append(os.Environ(), env...), StdioEnv(Options{Eras: StatelessOnly, Name: "modern-child"})[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	roundTrip := func(line string) *jsonrpc.Message {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		b, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		return mustDecode(t, string(b))
	}
	m := roundTrip(reqJSON(1, "server/discover", statelessParams(nil, map[string]any{}, nil)))
	f := resultFields(t, m)
	if !strings.Contains(string(f["_meta"]), `"name":"modern-child"`) || string(f["supportedVersions"]) != `["2026-07-28"]` {
		t.Errorf("discover %s", m.Result)
	}
	wantErrorCode(t, roundTrip(reqJSON(2, "initialize", initParams)), jsonrpc.CodeUnsupportedProtocolVersion)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("child exit: %v", err)
	}
}

// TestStdioInitializeProbe: what a stdio client's server/discover probe
// meets at initialize-era servers: -32601, or (SilentBeforeInitialize) nothing
// until initialize.
func TestStdioInitializeProbe(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{})
	m, _ := w.request(t, 1, "server/discover", statelessParams(nil, map[string]any{}, nil))
	wantErrorCode(t, m, jsonrpc.CodeMethodNotFound)

	w = newStdioWire(t, context.Background(), Options{SilentBeforeInitialize: true})
	w.send(t, reqJSON(1, "server/discover", statelessParams(nil, map[string]any{}, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := w.srv.WaitStats(ctx, func(st Stats) bool { return st.Unanswered == 1 }); err != nil {
		t.Fatal(err)
	}
	// The first message out is the answer to initialize: discover got none.
	init := w.initialize(t)
	if init.ID.Raw() != "0" {
		t.Errorf("first answer %s", init.ID.Raw())
	}
	if m, _ := w.request(t, 2, "tools/list", ""); m.Error != nil {
		t.Errorf("after initialize: %v", m.Error)
	}
}
