package testservers

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// legacyWire is a raw HTTP+SSE client written for tests: one GET stream
// and POSTs to the endpoint it names.
type legacyWire struct {
	hc       *http.Client
	sseURL   string
	resp     *http.Response // the GET stream
	events   *sseReader
	endpoint string // as sent in the endpoint event
	postURL  string // endpoint resolved against the SSE URL
}

func newLegacyClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: testTimeout}
}

// openStream GETs the SSE URL and returns the response, checked to be an
// event stream.
func openStream(t *testing.T, hc *http.Client, sseURL string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, sseURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %q: %s", sseURL, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return resp
}

// dialLegacy opens the stream and reads its endpoint event.
func dialLegacy(t *testing.T, sseURL string) *legacyWire {
	t.Helper()
	w := &legacyWire{hc: newLegacyClient(t), sseURL: sseURL}
	w.resp = openStream(t, w.hc, sseURL)
	w.events = newSSEReader(w.resp.Body)
	ev, err := w.events.next()
	if err != nil {
		t.Fatalf("reading the endpoint event: %v", err)
	}
	if ev.event != "endpoint" {
		t.Fatalf("first event %q (%q), want endpoint", ev.event, ev.data)
	}
	w.endpoint = ev.data
	base, _ := url.Parse(sseURL)
	ref, err := url.Parse(ev.data)
	if err != nil {
		t.Fatalf("endpoint %q: %v", ev.data, err)
	}
	w.postURL = base.ResolveReference(ref).String()
	return w
}

// post sends raw to the endpoint and returns the status and body.
func (w *legacyWire) post(t *testing.T, raw string) (int, string) {
	t.Helper()
	return postJSON(t, w.hc, w.postURL, raw)
}

func postJSON(t *testing.T, hc *http.Client, u, raw string) (int, string) {
	t.Helper()
	resp, err := hc.Post(u, "application/json", strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func (w *legacyWire) send(t *testing.T, raw string) {
	t.Helper()
	if status, body := w.post(t, raw); status != http.StatusAccepted || body != "" {
		t.Fatalf("POST %s: %d %q, want 202 without a body", raw, status, body)
	}
}

// next reads the next message event.
func (w *legacyWire) next(t *testing.T) *jsonrpc.Message {
	t.Helper()
	ev, err := w.events.next()
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	if ev.event != "message" {
		t.Fatalf("event %q (%q), want message", ev.event, ev.data)
	}
	return mustDecode(t, ev.data)
}

// request POSTs a request and reads the stream up to its response,
// returning the other messages seen before it.
func (w *legacyWire) request(t *testing.T, id int, method, params string) (*jsonrpc.Message, []*jsonrpc.Message) {
	t.Helper()
	w.send(t, reqJSON(id, method, params))
	var others []*jsonrpc.Message
	for {
		m := w.next(t)
		if m.IsResponse() && m.ID.Raw() == jsonrpc.Int(int64(id)).Raw() {
			return m, others
		}
		others = append(others, m)
	}
}

func (w *legacyWire) initialize(t *testing.T) *jsonrpc.Message {
	t.Helper()
	m, _ := w.request(t, 0, "initialize", initParams)
	if m.Error != nil {
		t.Fatalf("initialize: %v", m.Error)
	}
	w.send(t, notifJSON("notifications/initialized", ""))
	return m
}

func startLegacy(t *testing.T, opts LegacyOptions) *LegacyServer {
	s := StartLegacy(opts)
	t.Cleanup(s.Close)
	return s
}

func TestLegacyHandshake(t *testing.T) {
	s := startLegacy(t, LegacyOptions{})
	if !strings.HasSuffix(s.URL, "/sse") {
		t.Fatalf("URL %s", s.URL)
	}
	w := dialLegacy(t, s.URL)
	if !strings.HasPrefix(w.endpoint, "/message?sessionId=") {
		t.Fatalf("endpoint %q", w.endpoint)
	}
	init := result[mcp.InitializeResult](t, w.initialize(t))
	if init.ProtocolVersion != mcp.Version20241105 || init.ServerInfo.Name != DefaultName {
		t.Errorf("initialize result %+v", init)
	}
	m, _ := w.request(t, 1, "tools/call", `{"name":"echo","arguments":{"text":"over SSE"}}`)
	if text, isErr := toolText(t, m); text != "over SSE" || isErr {
		t.Errorf("echo: %q %v", text, isErr)
	}
	// Progress notifications come on the same stream, before the answer.
	m, others := w.request(t, 2, "tools/call", `{"name":"slow","arguments":{"steps":3,"delayMs":1},"_meta":{"progressToken":"p"}}`)
	if _, isErr := toolText(t, m); isErr || len(others) != 3 || others[0].Method != "notifications/progress" {
		t.Errorf("slow: %s after %d messages", m.Result, len(others))
	}
	st := s.Server().Stats()
	if st.Initializations != 1 || st.Initialized != 1 || st.Sessions != 1 || st.RequestedVersion != mcp.Version20251125 {
		t.Errorf("stats %+v", st)
	}
	hits := s.Hits()
	if hits["GET /sse"] != 1 || hits["POST /message"] != 4 || hits["POST /sse"] != 0 {
		t.Errorf("hits %v", hits)
	}
}

func TestLegacyServerRequest(t *testing.T) {
	s := startLegacy(t, LegacyOptions{})
	w := dialLegacy(t, s.URL)
	w.initialize(t)
	w.send(t, reqJSON(5, "tools/call", `{"name":"sample","arguments":{"prompt":"hello"}}`))
	sreq := w.next(t)
	if sreq.Method != "sampling/createMessage" || sreq.ID.IsZero() {
		t.Fatalf("got %+v, want a sampling request", sreq)
	}
	w.send(t, `{"jsonrpc":"2.0","id":`+sreq.ID.Raw()+`,"result":{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}}`)
	m := w.next(t)
	if text, isErr := toolText(t, m); !strings.Contains(text, "sampled") || isErr || m.ID.Raw() != "5" {
		t.Errorf("sample: %q %v", text, isErr)
	}
}

func TestLegacyVersions(t *testing.T) {
	s := startLegacy(t, LegacyOptions{Options: Options{Versions: []string{mcp.Version20250326, mcp.Version20241105}}})
	w := dialLegacy(t, s.URL)
	m, _ := w.request(t, 1, "initialize", strings.Replace(initParams, mcp.Version20251125, mcp.Version20241105, 1))
	if v := result[mcp.InitializeResult](t, m).ProtocolVersion; v != mcp.Version20241105 {
		t.Errorf("asked 2024-11-05, got %s", v)
	}
	w = dialLegacy(t, s.URL)
	m, _ = w.request(t, 1, "initialize", initParams)
	if v := result[mcp.InitializeResult](t, m).ProtocolVersion; v != mcp.Version20250326 {
		t.Errorf("asked 2025-11-25, got %s, want the first of Versions", v)
	}
}

func TestLegacyEndpointModes(t *testing.T) {
	for _, mode := range []EndpointMode{EndpointRelative, EndpointAbsolute, EndpointCrossOrigin} {
		t.Run(mode.String(), func(t *testing.T) {
			s := startLegacy(t, LegacyOptions{Endpoint: mode})
			origin := strings.TrimSuffix(s.URL, "/sse")
			w := dialLegacy(t, s.URL)
			u, err := url.Parse(w.endpoint)
			if err != nil {
				t.Fatal(err)
			}
			if u.Path != "/message" || u.Query().Get(DefaultSessionParam) == "" {
				t.Fatalf("endpoint %q", w.endpoint)
			}
			switch mode {
			case EndpointRelative:
				if u.IsAbs() || u.Host != "" {
					t.Fatalf("endpoint %q is not relative", w.endpoint)
				}
			case EndpointAbsolute:
				if !strings.HasPrefix(w.endpoint, origin+"/message?") {
					t.Fatalf("endpoint %q is not on %s", w.endpoint, origin)
				}
			case EndpointCrossOrigin:
				if !u.IsAbs() || strings.HasPrefix(w.endpoint, origin+"/") || u.Hostname() != "127.0.0.1" {
					t.Fatalf("endpoint %q is not on another loopback origin than %s", w.endpoint, origin)
				}
				if n := s.CrossOriginHits(); n != 0 {
					t.Fatalf("CrossOriginHits %d before any POST", n)
				}
				// A client that follows the endpoint is refused and counted.
				if status, _ := w.post(t, reqJSON(0, "initialize", initParams)); status != http.StatusForbidden {
					t.Errorf("POST to the other origin: %d, want 403", status)
				}
				if n := s.CrossOriginHits(); n != 1 {
					t.Errorf("CrossOriginHits %d, want 1", n)
				}
				if st := s.Server().Stats(); st.Requests["initialize"] != 0 {
					t.Errorf("the other origin reached the core: %+v", st)
				}
				return
			}
			w.initialize(t)
			if s.CrossOriginHits() != 0 {
				t.Errorf("CrossOriginHits %d", s.CrossOriginHits())
			}
		})
	}
}

func TestLegacyEndpointDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	s := startLegacy(t, LegacyOptions{EndpointDelay: delay})
	hc := newLegacyClient(t)
	start := time.Now()
	resp := openStream(t, hc, s.URL)
	if d := time.Since(start); d >= delay {
		t.Errorf("the response header took %v: only the event should wait", d)
	}
	ev, err := newSSEReader(resp.Body).next()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < delay || ev.event != "endpoint" {
		t.Errorf("event %q after %v, want endpoint after %v", ev.event, d, delay)
	}
	// A client that gives up during the delay leaves no session behind.
	resp2 := openStream(t, hc, s.URL)
	resp2.Body.Close()
	testkit.Eventually(t, testTimeout, "the abandoned session to end", func() bool { return s.Server().Stats().Sessions == 1 })
}

func TestLegacyRefusals(t *testing.T) {
	s := startLegacy(t, LegacyOptions{})
	w := dialLegacy(t, s.URL)
	origin := strings.TrimSuffix(s.URL, "/sse")
	hc := w.hc
	do := func(method, u, ct, accept, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	ping := reqJSON(1, "ping", "")
	for _, c := range []struct {
		name                      string
		method, u, ct, accept, in string
		want                      int
	}{
		{"unknown session", "POST", origin + "/message?sessionId=nope", "application/json", "", ping, 404},
		{"no session", "POST", origin + "/message", "application/json", "", ping, 400},
		{"bad JSON", "POST", w.postURL, "application/json", "", `{"jsonrpc":`, 400},
		{"not JSON-RPC", "POST", w.postURL, "application/json", "", `{"hello":1}`, 400},
		{"batch", "POST", w.postURL, "application/json", "", "[" + ping + "]", 400},
		{"content type", "POST", w.postURL, "text/plain", "", ping, 415},
		{"GET message", "GET", w.postURL, "", "", "", 405},
		{"POST sse", "POST", s.URL, "application/json", "application/json, text/event-stream", reqJSON(0, "initialize", initParams), 405},
		{"GET sse without Accept", "GET", s.URL, "", "application/json", "", 406},
		{"other path", "GET", origin + "/mcp", "", "text/event-stream", "", 404},
	} {
		if got := do(c.method, c.u, c.ct, c.accept, c.in); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// The session survives bad messages.
	if m, _ := w.request(t, 1, "ping", ""); m.Error != nil {
		t.Errorf("ping: %v", m.Error)
	}
	if n := s.Server().Stats().Sessions; n != 1 {
		t.Errorf("%d sessions", n)
	}
}

func TestLegacyForeignOrigin(t *testing.T) {
	s := startLegacy(t, LegacyOptions{})
	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := newLegacyClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("status %d, want 403", resp.StatusCode)
	}
}

func TestLegacyOptionKnobs(t *testing.T) {
	s := startLegacy(t, LegacyOptions{SessionParam: "session_id", AcceptStatus: http.StatusOK, AcceptBody: "Accepted"})
	w := dialLegacy(t, s.URL)
	if !strings.HasPrefix(w.endpoint, "/message?session_id=") {
		t.Fatalf("endpoint %q", w.endpoint)
	}
	if status, body := w.post(t, reqJSON(1, "ping", "")); status != http.StatusOK || body != "Accepted" {
		t.Errorf("POST: %d %q", status, body)
	}
	if m := w.next(t); !m.IsResponse() || m.ID.Raw() != "1" {
		t.Errorf("answer %+v", m)
	}
}

func TestLegacySessionEndsWithStream(t *testing.T) {
	s := startLegacy(t, LegacyOptions{})
	w := dialLegacy(t, s.URL)
	w.initialize(t)
	// A long tool call is running when the client goes away.
	w.send(t, reqJSON(3, "tools/call", `{"name":"slow","arguments":{"steps":1000,"delayMs":10}}`))
	w.resp.Body.Close()
	testkit.Eventually(t, testTimeout, "the session to end", func() bool { return s.Server().Stats().Sessions == 0 })
	if status, _ := w.post(t, reqJSON(4, "ping", "")); status != http.StatusNotFound {
		t.Errorf("POST after the stream ended: %d, want 404", status)
	}
}

func TestLegacyKillStreams(t *testing.T) {
	s := startLegacy(t, LegacyOptions{})
	a, b := dialLegacy(t, s.URL), dialLegacy(t, s.URL)
	a.initialize(t)
	b.initialize(t)
	s.KillStreams()
	for _, w := range []*legacyWire{a, b} {
		if _, err := w.events.next(); err != io.EOF {
			t.Errorf("stream after KillStreams: %v, want EOF", err)
		}
		if status, _ := w.post(t, reqJSON(9, "ping", "")); status != http.StatusNotFound {
			t.Errorf("POST after KillStreams: %d, want 404", status)
		}
	}
	if n := s.Server().Stats().Sessions; n != 0 {
		t.Errorf("%d sessions after KillStreams", n)
	}
	// A new stream works.
	c := dialLegacy(t, s.URL)
	c.initialize(t)
	if m, _ := c.request(t, 1, "ping", ""); m.Error != nil {
		t.Errorf("ping: %v", m.Error)
	}
}

func TestLegacyNotifyOutsideRequests(t *testing.T) {
	s := startLegacy(t, LegacyOptions{EndpointDelay: 50 * time.Millisecond})
	// A session whose endpoint event is not out yet gets nothing.
	hc := newLegacyClient(t)
	pending := openStream(t, hc, s.URL)
	testkit.Eventually(t, testTimeout, "the pending session", func() bool { return s.Server().Stats().Sessions == 1 })
	s.Server().NotifyListChanged()
	ev, err := newSSEReader(pending.Body).next()
	if err != nil || ev.event != "endpoint" {
		t.Fatalf("first event %+v %v, want endpoint", ev, err)
	}
	w := dialLegacy(t, s.URL)
	w.initialize(t)
	s.Server().NotifyListChanged()
	for _, want := range listChangedMethods {
		if m := w.next(t); m.Method != want {
			t.Errorf("got %s, want %s", m.Method, want)
		}
	}
}

func TestLegacyCloseWithOpenStreams(t *testing.T) {
	s := StartLegacy(LegacyOptions{EndpointDelay: 20 * time.Millisecond})
	busy := dialLegacy(t, s.URL)
	busy.initialize(t)
	busy.send(t, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":100000,"delayMs":1}}`))
	// A client that never reads its stream, flooded with big messages.
	stuck := dialLegacy(t, s.URL)
	stuck.initialize(t)
	for i := range 4 {
		stuck.send(t, reqJSON(10+i, "tools/call", `{"name":"big","arguments":{"mib":4}}`))
	}
	openStream(t, newLegacyClient(t), s.URL) // its endpoint event is not out yet
	testkit.Eventually(t, testTimeout, "three sessions", func() bool { return s.Server().Stats().Sessions == 3 })

	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		s.Close()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
	t.Logf("Close took %v", time.Since(start))
	s.Close() // idempotent
	// The busy stream ends (after what was already on its way).
	for {
		if _, err := busy.events.next(); err != nil {
			break
		}
	}
}

func TestLegacyConcurrentSessions(t *testing.T) {
	s := startLegacy(t, LegacyOptions{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			w := dialLegacy(t, s.URL)
			w.initialize(t)
			text := "client " + string(rune('a'+i))
			args, _ := json.Marshal(map[string]any{"name": "echo", "arguments": map[string]string{"text": text}})
			m, _ := w.request(t, 1, "tools/call", string(args))
			if got, _ := toolText(t, m); got != text {
				t.Errorf("got %q, want %q", got, text)
			}
		})
	}
	wg.Wait()
	if st := s.Server().Stats(); st.Initializations != 8 || st.ToolCalls["echo"] != 8 {
		t.Errorf("stats %+v", st)
	}
}
