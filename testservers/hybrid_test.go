package testservers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/mcp"
)

func startHybrid(t *testing.T, opts HybridOptions) *HybridServer {
	s := StartHybrid(opts)
	t.Cleanup(s.Close)
	return s
}

func TestHybridBothPaths(t *testing.T) {
	s := startHybrid(t, HybridOptions{})
	if !strings.HasSuffix(s.URL, "/mcp") || !strings.HasSuffix(s.SSEURL, "/sse") ||
		strings.TrimSuffix(s.URL, "/mcp") != strings.TrimSuffix(s.SSEURL, "/sse") {
		t.Fatalf("URL %s, SSEURL %s", s.URL, s.SSEURL)
	}

	stateless := newHTTPWire(t, s.URL)
	if v := result[mcp.InitializeResult](t, stateless.initialize(t)).ProtocolVersion; v != mcp.Version20251125 {
		t.Errorf("Streamable HTTP negotiated %s", v)
	}
	legacy := dialLegacy(t, s.SSEURL)
	if !strings.HasPrefix(legacy.endpoint, "/message?sessionId=") {
		t.Errorf("endpoint %q", legacy.endpoint)
	}
	if v := result[mcp.InitializeResult](t, legacy.initialize(t)).ProtocolVersion; v != mcp.Version20241105 {
		t.Errorf("HTTP+SSE negotiated %s", v)
	}
	m, _ := stateless.request(t, 1, "tools/call", `{"name":"echo","arguments":{"text":"modern"}}`)
	if text, _ := toolText(t, m); text != "modern" {
		t.Errorf("modern echo %q", text)
	}
	m, _ = legacy.request(t, 1, "tools/call", `{"name":"echo","arguments":{"text":"legacy"}}`)
	if text, _ := toolText(t, m); text != "legacy" {
		t.Errorf("legacy echo %q", text)
	}

	// Each front-end has its own core, so a test sees which one was used.
	if a, b := s.Streamable().Stats(), s.Legacy().Stats(); a.Initializations != 1 || b.Initializations != 1 ||
		a.ToolCalls["echo"] != 1 || b.ToolCalls["echo"] != 1 {
		t.Errorf("streamable %+v, legacy %+v", a, b)
	}
	if ids := s.StreamableHandler().SessionIDs(); len(ids) != 1 || ids[0] != stateless.session {
		t.Errorf("session ids %v", ids)
	}
	hits := s.Hits()
	if hits["GET /sse"] != 1 || hits["POST /mcp"] != 3 || hits["POST /message"] != 3 {
		t.Errorf("hits %v", hits)
	}

	s.KillStreams()
	if status, _ := legacy.post(t, reqJSON(9, "ping", "")); status != http.StatusNotFound {
		t.Errorf("legacy POST after KillStreams: %d", status)
	}
	if m, _ := stateless.request(t, 9, "ping", ""); m.Error != nil {
		t.Errorf("KillStreams touched Streamable HTTP: %v", m.Error)
	}
}

func TestHybridSamePath(t *testing.T) {
	s := startHybrid(t, HybridOptions{SamePath: true, Legacy: LegacyOptions{Endpoint: EndpointAbsolute}})
	if s.SSEURL != s.URL {
		t.Fatalf("SSEURL %s, URL %s", s.SSEURL, s.URL)
	}
	legacy := dialLegacy(t, s.URL)
	if !strings.HasPrefix(legacy.endpoint, s.URL+"/message?sessionId=") {
		t.Errorf("endpoint %q", legacy.endpoint)
	}
	legacy.initialize(t)

	stateless := newHTTPWire(t, s.URL)
	stateless.initialize(t)
	// GET with a session id is Streamable HTTP's standalone stream.
	resp := stateless.do(t, http.MethodGet, "", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("Streamable GET: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if a, b := s.Streamable().Stats(), s.Legacy().Stats(); a.Initializations != 1 || b.Initializations != 1 {
		t.Errorf("streamable %+v, legacy %+v", a, b)
	}
	hits := s.Hits()
	if hits["GET /mcp"] != 2 || hits["POST /mcp/message"] != 2 || hits["GET /sse"] != 0 {
		t.Errorf("hits %v", hits)
	}
	// /sse is not served on this shape.
	hc := newLegacyClient(t)
	r, err := hc.Get(strings.TrimSuffix(s.URL, "/mcp") + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("GET /sse: %d", r.StatusCode)
	}
}

func TestHybridCrossOrigin(t *testing.T) {
	s := startHybrid(t, HybridOptions{Legacy: LegacyOptions{Endpoint: EndpointCrossOrigin}})
	w := dialLegacy(t, s.SSEURL)
	if strings.HasPrefix(w.endpoint, strings.TrimSuffix(s.URL, "/mcp")) {
		t.Fatalf("endpoint %q is on the server's origin", w.endpoint)
	}
	if s.CrossOriginHits() != 0 {
		t.Fatal("hits before any POST")
	}
	w.post(t, reqJSON(0, "initialize", initParams))
	if s.CrossOriginHits() != 1 {
		t.Errorf("CrossOriginHits %d", s.CrossOriginHits())
	}
}

func TestHybridCloseWithOpenStreams(t *testing.T) {
	for _, same := range []bool{false, true} {
		s := StartHybrid(HybridOptions{SamePath: same})
		stateless := newHTTPWire(t, s.URL)
		stateless.initialize(t)
		get := stateless.do(t, http.MethodGet, "", nil)
		defer get.Body.Close()
		post := stateless.do(t, http.MethodPost, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":100000,"delayMs":1}}`), nil)
		defer post.Body.Close()
		legacy := dialLegacy(t, s.SSEURL)
		legacy.initialize(t)
		legacy.send(t, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":100000,"delayMs":1}}`))

		done := make(chan struct{})
		go func() {
			defer close(done)
			s.Close()
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("SamePath %v: Close hangs", same)
		}
	}
}
