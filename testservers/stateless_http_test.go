package testservers

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

func TestStatelessDiscover(t *testing.T) {
	for _, tt := range []struct {
		name     string
		opts     HTTPOptions
		wantCT   string
		versions []string
	}{
		{"modern SSE", HTTPOptions{Options: Options{Eras: StatelessOnly, CacheTTL: time.Hour, Instructions: "use echo"}}, "text/event-stream", []string{"2026-07-28"}},
		{"modern JSON", HTTPOptions{Options: Options{Eras: StatelessOnly, CacheTTL: time.Hour, Instructions: "use echo"}, JSONResponse: true}, "application/json", []string{"2026-07-28"}},
		{"dual-era", HTTPOptions{Options: Options{Eras: DualEra, CacheTTL: time.Hour, Instructions: "use echo"}}, "text/event-stream",
			[]string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, w := startStatelessHTTP(t, tt.opts)
			resp := w.send(t, "discover-1", "server/discover", nil, nil)
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != tt.wantCT {
				t.Errorf("Content-Type %q, want %q", ct, tt.wantCT)
			}
			if resp.Header.Get(HeaderSessionID) != "" {
				t.Errorf("a session id on a stateless answer: %q", resp.Header.Get(HeaderSessionID))
			}
			if tt.wantCT == "text/event-stream" && resp.Header.Get("X-Accel-Buffering") != "no" {
				t.Error("SSE answer without X-Accel-Buffering: no")
			}
			m, _ := readAny(t, resp)
			if m.ID.Raw() != `"discover-1"` {
				t.Errorf("id %s", m.ID.Raw())
			}
			f := checkStatelessResult(t, m, "complete", 3600000)
			var versions []string
			_ = json.Unmarshal(f["supportedVersions"], &versions)
			if !slices.Equal(versions, tt.versions) {
				t.Errorf("supportedVersions %v, want %v", versions, tt.versions)
			}
			var caps mcp.ServerCapabilities
			_ = json.Unmarshal(f["capabilities"], &caps)
			if caps.Tools == nil || !caps.Tools.ListChanged || caps.Resources == nil || caps.Prompts == nil {
				t.Errorf("capabilities %s", f["capabilities"])
			}
			if string(f["instructions"]) != `"use echo"` {
				t.Errorf("instructions %s", f["instructions"])
			}
			st := s.Server().Stats()
			if st.Requests["server/discover"] != 1 || st.VersionsSeen["2026-07-28"] != 1 || st.Sessions != 0 || st.SessionsCreated != 0 {
				t.Errorf("stats %+v", st)
			}
			if st.StatelessClientInfo.Name != "raw-test" {
				t.Errorf("StatelessClientInfo %+v", st.StatelessClientInfo)
			}
		})
	}
}

// TestStatelessValidation covers every refusal of a stateless request over
// HTTP, in the order the server checks.
func TestStatelessValidation(t *testing.T) {
	meta := statelessMeta("2026-07-28", map[string]any{}, nil)
	std := func(method string) map[string]string {
		return map[string]string{HeaderProtocolVersion: "2026-07-28", HeaderMethod: method}
	}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{}
		for a, b := range h {
			out[a] = b
		}
		out[k] = v
		return out
	}
	call := func(name string) string {
		return statelessBody(7, "tools/call", map[string]any{"name": name, "arguments": map[string]any{"text": "x"}}, meta)
	}
	callHdr := with(std("tools/call"), HeaderName, "echo")
	for _, tt := range []struct {
		name      string
		body      string
		hdr       map[string]string
		status    int
		code      int64
		rejectKey string // Stats.HeaderRejects key, when -32020
		check     func(t *testing.T, m *jsonrpc.Message)
	}{
		{"no MCP-Protocol-Version", statelessBody(7, "tools/list", nil, meta), map[string]string{HeaderMethod: "tools/list"},
			400, jsonrpc.CodeHeaderMismatch, "MCP-Protocol-Version", nil},
		{"unsupported version", statelessBody(7, "tools/list", nil, statelessMeta("2027-01-01", map[string]any{}, nil)),
			with(std("tools/list"), HeaderProtocolVersion, "2027-01-01"), 400, jsonrpc.CodeUnsupportedProtocolVersion, "",
			func(t *testing.T, m *jsonrpc.Message) {
				d := errorData[struct {
					Supported []string `json:"supported"`
					Requested string   `json:"requested"`
				}](t, m)
				if !slices.Equal(d.Supported, []string{"2026-07-28"}) || d.Requested != "2027-01-01" {
					t.Errorf("data %+v", d)
				}
			}},
		{"header and _meta differ", statelessBody(7, "tools/list", nil, statelessMeta("2027-01-01", map[string]any{}, nil)), std("tools/list"),
			400, jsonrpc.CodeHeaderMismatch, "MCP-Protocol-Version", nil},
		{"no _meta", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`, std("tools/list"), 400, jsonrpc.CodeInvalidParams, "", nil},
		{"no clientCapabilities", statelessBody(7, "tools/list", map[string]any{"_meta": map[string]any{mcp.MetaProtocolVersion: "2026-07-28"}}, nil),
			std("tools/list"), 400, jsonrpc.CodeInvalidParams, "", nil},
		{"unknown logLevel", statelessBody(7, "tools/list", nil, statelessMeta("2026-07-28", map[string]any{}, map[string]any{mcp.MetaLogLevel: "loud"})),
			std("tools/list"), 400, jsonrpc.CodeInvalidParams, "", nil},
		{"no Mcp-Method", statelessBody(7, "tools/list", nil, meta), map[string]string{HeaderProtocolVersion: "2026-07-28"},
			400, jsonrpc.CodeHeaderMismatch, "Mcp-Method", nil},
		{"Mcp-Method differs", statelessBody(7, "tools/list", nil, meta), std("prompts/list"), 400, jsonrpc.CodeHeaderMismatch, "Mcp-Method", nil},
		{"unknown method", statelessBody(7, "nope/nothing", nil, meta), std("nope/nothing"), 404, jsonrpc.CodeMethodNotFound, "", nil},
		{"ping is gone", statelessBody(7, "ping", nil, meta), std("ping"), 404, jsonrpc.CodeMethodNotFound, "", nil},
		{"logging/setLevel is gone", statelessBody(7, "logging/setLevel", map[string]any{"level": "debug"}, meta), std("logging/setLevel"),
			404, jsonrpc.CodeMethodNotFound, "", nil},
		{"resources/subscribe is gone", statelessBody(7, "resources/subscribe", map[string]any{"uri": StaticTextURI}, meta),
			std("resources/subscribe"), 404, jsonrpc.CodeMethodNotFound, "", nil},
		{"no Mcp-Name", call("echo"), std("tools/call"), 400, jsonrpc.CodeHeaderMismatch, "Mcp-Name", nil},
		{"Mcp-Name differs", call("echo"), with(std("tools/call"), HeaderName, "add"), 400, jsonrpc.CodeHeaderMismatch, "Mcp-Name", nil},
		{"Mcp-Name raw non-ASCII", call(NonASCIIToolName), with(std("tools/call"), HeaderName, NonASCIIToolName),
			400, jsonrpc.CodeHeaderMismatch, "Mcp-Name", nil},
		{"Mcp-Name bad Base64", call("echo"), with(std("tools/call"), HeaderName, "=?base64?!!!?="), 400, jsonrpc.CodeHeaderMismatch, "Mcp-Name", nil},
		{"Mcp-Name of resources/read", statelessBody(7, "resources/read", map[string]any{"uri": StaticTextURI}, meta),
			with(std("resources/read"), HeaderName, StaticBlobURI), 400, jsonrpc.CodeHeaderMismatch, "Mcp-Name", nil},
		{"Mcp-Name of prompts/get", statelessBody(7, "prompts/get", map[string]any{"name": "simple"}, meta),
			std("prompts/get"), 400, jsonrpc.CodeHeaderMismatch, "Mcp-Name", nil},
		{"batch", "[" + statelessBody(7, "tools/list", nil, meta) + "]", std("tools/list"), 400, jsonrpc.CodeInvalidRequest, "", nil},
		{"a response", `{"jsonrpc":"2.0","id":7,"result":{}}`, std("tools/list"), 400, jsonrpc.CodeInvalidRequest, "", nil},
		// Accepted:
		{"echo", call("echo"), callHdr, 200, 0, "", nil},
		{"Mcp-Name Base64 for a plain name", call("echo"), with(std("tools/call"), HeaderName, "=?base64?ZWNobw==?="),
			200, 0, "", nil},
		{"non-ASCII tool name in the sentinel", call(NonASCIIToolName), with(std("tools/call"), HeaderName, EncodeHeaderValue(NonASCIIToolName)),
			200, 0, "", func(t *testing.T, m *jsonrpc.Message) {
				if text, _ := toolText(t, m); text != "grüße, " {
					t.Errorf("text %q", text)
				}
			}},
		{"non-ASCII resource URI", statelessBody(7, "resources/read", map[string]any{"uri": NonASCIIResourceURI}, meta),
			with(std("resources/read"), HeaderName, EncodeHeaderValue(NonASCIIResourceURI)), 200, 0, "", nil},
		{"session id and Last-Event-ID ignored", call("echo"), with(with(callHdr, HeaderSessionID, "no-such-session"), "Last-Event-ID", "1-1"),
			200, 0, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, w := startStatelessHTTP(t, HTTPOptions{JSONResponse: true})
			resp := w.post(t, tt.body, tt.hdr)
			defer resp.Body.Close()
			m, _ := readAny(t, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %v %s", resp.StatusCode, tt.status, m.Error, m.Result)
			}
			if resp.Header.Get(HeaderSessionID) != "" {
				t.Errorf("Mcp-Session-Id %q", resp.Header.Get(HeaderSessionID))
			}
			if tt.code == 0 {
				if m.Error != nil {
					t.Fatalf("error %v", m.Error)
				}
			} else {
				wantErrorCode(t, m, tt.code)
				if tt.body[0] == '{' && m.ID.Raw() != "7" {
					t.Errorf("error response id %q, want 7", m.ID.Raw())
				}
			}
			if tt.check != nil {
				tt.check(t, m)
			}
			st := s.Server().Stats()
			if tt.code != 0 && st.Errors[tt.code] != 1 {
				t.Errorf("Stats.Errors %v", st.Errors)
			}
			// A refused request never reached the core; an accepted one
			// did; a batch or a response is no request.
			switch request := tt.body[0] == '{' && !strings.Contains(tt.body, `"result"`); {
			case !request && sum(st.Refused)+sum(st.Requests) != 0,
				request && tt.code != 0 && (sum(st.Refused) != 1 || sum(st.Requests) != 0),
				request && tt.code == 0 && (sum(st.Refused) != 0 || sum(st.Requests) != 1):
				t.Errorf("Refused %v, Requests %v", st.Refused, st.Requests)
			}
			if tt.rejectKey != "" && st.HeaderRejects[tt.rejectKey] != 1 {
				t.Errorf("Stats.HeaderRejects %v, want %s counted", st.HeaderRejects, tt.rejectKey)
			}
			if tt.rejectKey == "" && len(st.HeaderRejects) != 0 {
				t.Errorf("Stats.HeaderRejects %v", st.HeaderRejects)
			}
		})
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestStatelessNotificationAccepted(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{})
	resp := w.post(t, statelessBody(nil, "notifications/cancelled", map[string]any{"requestId": 1}, nil), nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || len(body) != 0 {
		t.Errorf("status %d, body %q", resp.StatusCode, body)
	}
	if st := s.Server().Stats(); len(st.Requests) != 0 || len(st.Errors) != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestStatelessOnlyRefusesGETAndDELETE(t *testing.T) {
	s, _ := startStatelessHTTP(t, HTTPOptions{})
	w := newHTTPWire(t, s.URL)
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		code, _ := status(t, w, method, "", map[string]string{HeaderSessionID: "x"})
		if code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", method, code)
		}
	}
}

func TestStatelessOnlyInitialize(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer InitializeAnswer
		status int
		code   int64
	}{
		{"unsupported version", InitializeUnsupportedVersion, 400, jsonrpc.CodeUnsupportedProtocolVersion},
		{"method not found", InitializeMethodNotFound, 404, jsonrpc.CodeMethodNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := startStatelessHTTP(t, HTTPOptions{Options: Options{StatelessInitialize: tt.answer}})
			w := newHTTPWire(t, s.URL)
			resp := w.do(t, http.MethodPost, reqJSON(1, "initialize", initParams), nil)
			defer resp.Body.Close()
			m, _ := readAny(t, resp)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			wantErrorCode(t, m, tt.code)
			if !strings.Contains(m.Error.Message, "2026-07-28") {
				t.Errorf("the message does not name the supported versions: %q", m.Error.Message)
			}
			if tt.code == jsonrpc.CodeUnsupportedProtocolVersion {
				d := errorData[struct {
					Supported []string `json:"supported"`
					Requested string   `json:"requested"`
				}](t, m)
				if !slices.Equal(d.Supported, []string{"2026-07-28"}) || d.Requested != "2025-11-25" {
					t.Errorf("data %+v", d)
				}
			}
			if st := s.Server().Stats(); st.InitializeRejected != 1 || st.Initializations != 0 || st.Refused["initialize"] != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestStatelessGoSDKMimic: the double of a go-sdk v1.8 stateless-only server.
func TestStatelessGoSDKMimic(t *testing.T) {
	s, mw := startStatelessHTTP(t, HTTPOptions{Options: Options{StatelessInitialize: InitializeLikeGoSDK}})
	w := newHTTPWire(t, s.URL)
	resp := w.do(t, http.MethodPost, reqJSON(1, "initialize", initParams), nil)
	if resp.Header.Get(HeaderSessionID) != "" {
		t.Errorf("session id %q", resp.Header.Get(HeaderSessionID))
	}
	m, _ := readAnswer(t, resp, nil)
	resp.Body.Close()
	if r := result[mcp.InitializeResult](t, m); r.ProtocolVersion != "2025-11-25" || r.ServerInfo.Name != DefaultName {
		t.Errorf("initialize result %+v", r)
	}
	w.version = "2025-11-25"
	const want = "Bad Request: Unsupported protocol version (supported versions: 2026-07-28)\n"
	for _, body := range []string{notifJSON("notifications/initialized", ""), reqJSON(2, "tools/list", "")} {
		resp := w.do(t, http.MethodPost, body, nil)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || string(got) != want || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("%s: status %d, %q %q", body, resp.StatusCode, resp.Header.Get("Content-Type"), got)
		}
	}
	// Stateless requests are served.
	if m, _ := mw.ok(t, 3, "tools/list", nil); !strings.Contains(string(m.Result), `"resultType":"complete"`) {
		t.Errorf("tools/list %s", m.Result)
	}
	if st := s.Server().Stats(); st.InitializeRejected != 2 || st.Initializations != 1 {
		t.Errorf("stats InitializeRejected %d Initializations %d", st.InitializeRejected, st.Initializations)
	}
}

func TestStatelessResults(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{Options: Options{
		CacheTTL:  30 * time.Second,
		CacheTTLs: map[string]time.Duration{"resources/read": 5 * time.Second},
	}})
	_ = s
	m, _ := w.ok(t, 1, "tools/list", nil)
	f := checkStatelessResult(t, m, "complete", 30000)
	var tl struct {
		Tools []mcp.Tool `json:"tools"`
	}
	_ = json.Unmarshal(m.Result, &tl)
	var names []string
	for _, tool := range tl.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, StatelessToolNames()) {
		t.Errorf("tools %v, want %v", names, StatelessToolNames())
	}
	if !slices.Equal(names[:len(ToolNames())], ToolNames()) || !slices.Contains(names, NonASCIIToolName) || slices.Contains(names, "bad_header_number") {
		t.Errorf("stateless tools %v", names)
	}
	_ = f

	m, _ = w.ok(t, 2, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}})
	f = checkStatelessResult(t, m, "complete", -1)
	if string(f["structuredContent"]) != `{"sum":5}` {
		t.Errorf("structuredContent %s", f["structuredContent"])
	}
	m, _ = w.ok(t, 3, "resources/read", map[string]any{"uri": StaticTextURI})
	checkStatelessResult(t, m, "complete", 5000)
	for _, method := range []string{"resources/list", "resources/templates/list", "prompts/list"} {
		m, _ = w.ok(t, 4, method, nil)
		checkStatelessResult(t, m, "complete", 30000)
	}
	m, _ = w.ok(t, 5, "resources/list", nil)
	var rl struct {
		Resources []mcp.Resource `json:"resources"`
	}
	_ = json.Unmarshal(m.Result, &rl)
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Equal(uris, StatelessResourceURIs()) {
		t.Errorf("resources %v", uris)
	}
	m, _ = w.ok(t, 6, "prompts/get", map[string]any{"name": NonASCIIPromptName})
	checkStatelessResult(t, m, "complete", -1)
	m, _ = w.ok(t, 7, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "style", "value": "f"}})
	checkStatelessResult(t, m, "complete", -1)

	// An unknown resource is -32602 since 2026-07-28 (-32002 before).
	m, _, code := w.call(t, 8, "resources/read", map[string]any{"uri": "test://nope"}, nil)
	if code != http.StatusOK {
		t.Errorf("status %d", code)
	}
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	// An unknown tool is a JSON-RPC error; a failing tool a result.
	m, _, _ = w.call(t, 9, "tools/call", map[string]any{"name": "nope"}, nil)
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	m, _ = w.ok(t, 10, "tools/call", map[string]any{"name": "fail", "arguments": map[string]any{"message": "no"}})
	if text, isErr := toolText(t, m); text != "no" || !isErr {
		t.Errorf("fail: %q %v", text, isErr)
	}
}
