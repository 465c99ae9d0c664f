package testservers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// TestDualEraHTTP: one endpoint serves a legacy session (initialize, GET
// stream, server requests) and stateless requests side by side.
func TestDualEraHTTP(t *testing.T) {
	s := StartDualEra(HTTPOptions{})
	t.Cleanup(s.Close)
	initialize := newHTTPWire(t, s.URL)
	stateless := newStatelessWire(t, s.URL)

	init := result[mcp.InitializeResult](t, initialize.initialize(t))
	if init.ProtocolVersion != "2025-11-25" || initialize.session == "" {
		t.Fatalf("initialize %+v, session %q", init, initialize.session)
	}
	m, _ := initialize.request(t, 1, "tools/list", "")
	if strings.Contains(string(m.Result), "resultType") || strings.Contains(string(m.Result), "multi_round") {
		t.Errorf("legacy tools/list %s", m.Result)
	}
	if m, _ := initialize.request(t, 2, "ping", ""); m.Error != nil {
		t.Errorf("ping: %v", m.Error)
	}
	m, _ = stateless.ok(t, 3, "tools/list", nil)
	checkStatelessResult(t, m, "complete", 0)
	if !strings.Contains(string(m.Result), "multi_round") {
		t.Error("stateless tools/list lacks the stateless tools")
	}
	// A stateless request that carries the legacy session id is stateless all
	// the same, and mints no session.
	resp := stateless.send(t, 4, "server/discover", nil, map[string]string{HeaderSessionID: initialize.session})
	m, _ = readAny(t, resp)
	resp.Body.Close()
	f := checkStatelessResult(t, m, "complete", 0)
	var versions []string
	_ = json.Unmarshal(f["supportedVersions"], &versions)
	if len(versions) != 5 || versions[0] != "2026-07-28" || versions[1] != "2025-11-25" {
		t.Errorf("supportedVersions %v", versions)
	}
	if resp.Header.Get(HeaderSessionID) != "" {
		t.Error("a session id on a stateless answer")
	}
	// Stateless headers without _meta: refused as a stateless request.
	m, _, code := stateless.call(t, 5, "tools/list", map[string]any{"_meta": map[string]any{}}, nil)
	if code != http.StatusBadRequest {
		t.Errorf("status %d", code)
	}
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	// Neither stateless nor in a session: the legacy refusal, no stateless error.
	code, body := status(t, newHTTPWire(t, s.URL), http.MethodPost, reqJSON(6, "tools/list", ""), nil)
	if code != http.StatusBadRequest || strings.Contains(body, "-3202") {
		t.Errorf("status %d %s", code, body)
	}

	// A change reaches the legacy GET stream and the stateless subscription.
	get := initialize.do(t, http.MethodGet, "", nil)
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET %d", get.StatusCode)
	}
	getEvents := newSSEReader(get.Body)
	l := openListen(t, stateless, "l", map[string]any{"toolsListChanged": true})
	l.wantNote(t, "notifications/subscriptions/acknowledged", `"l"`)
	if n := s.Server().NotifyToolsChanged(); n != 2 {
		t.Errorf("NotifyToolsChanged reached %d", n)
	}
	l.wantNote(t, "notifications/tools/list_changed", `"l"`)
	for {
		ev, err := getEvents.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.data == "" {
			continue
		}
		if m := mustDecode(t, ev.data); m.Method != "notifications/tools/list_changed" || strings.Contains(ev.data, mcp.MetaSubscriptionID) {
			t.Errorf("GET stream: %s", ev.data)
		}
		break
	}
	st := s.Server().Stats()
	if st.Sessions != 1 || st.Initializations != 1 || st.VersionsSeen["2026-07-28"] != 3 || st.ListenStreams != 1 {
		t.Errorf("stats sessions %d inits %d versions %v listens %d", st.Sessions, st.Initializations, st.VersionsSeen, st.ListenStreams)
	}
}

// TestDualEraStateless: a stateless legacy front-end with the stateless era.
func TestDualEraStateless(t *testing.T) {
	s := StartDualEra(HTTPOptions{Stateless: true, JSONResponse: true})
	t.Cleanup(s.Close)
	initialize := newHTTPWire(t, s.URL)
	initialize.initialize(t)
	if m, _ := initialize.request(t, 1, "ping", ""); m.Error != nil {
		t.Error(m.Error)
	}
	stateless := newStatelessWire(t, s.URL)
	m, _ := stateless.ok(t, 2, "server/discover", nil)
	checkStatelessResult(t, m, "complete", 0)
}
