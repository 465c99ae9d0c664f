package testservers

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

func startHTTP(t *testing.T, opts HTTPOptions) (*HTTPServer, *httpWire) {
	t.Helper()
	s := StartStreamable(opts)
	t.Cleanup(s.Close)
	return s, newHTTPWire(t, s.URL)
}

// status sends one request and returns its status and body.
func status(t *testing.T, w *httpWire, method, body string, hdr map[string]string) (int, string) {
	t.Helper()
	resp := w.do(t, method, body, hdr)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestStreamableInitialize(t *testing.T) {
	var seen []string
	s, w := startHTTP(t, HTTPOptions{OnRequest: func(r *http.Request) {
		seen = append(seen, r.Method+" "+r.Header.Get(HeaderProtocolVersion))
	}})
	if !strings.HasSuffix(s.URL, "/mcp") || !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL %q", s.URL)
	}
	resp := w.do(t, http.MethodPost, reqJSON(1, "initialize", initParams), nil)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	id := resp.Header.Get(HeaderSessionID)
	if id == "" {
		t.Fatal("no Mcp-Session-Id")
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("session id %q has a non-visible character", id)
		}
	}
	m, _ := readAnswer(t, resp, nil)
	r := result[mcp.InitializeResult](t, m)
	if r.ProtocolVersion != mcp.Version20251125 || r.ServerInfo.Name != DefaultName || r.ServerInfo.Version != ServerVersion {
		t.Errorf("initialize result %+v", r)
	}
	w.session, w.version = id, r.ProtocolVersion
	w.send(t, notifJSON("notifications/initialized", ""))
	if st := s.Server().Stats(); st.Initialized != 1 || st.Sessions != 1 {
		t.Errorf("stats %+v", st)
	}
	if got := s.Handler().SessionIDs(); len(got) != 1 || got[0] != id {
		t.Errorf("SessionIDs %v", got)
	}
	if want := []string{"POST ", "POST 2025-11-25"}; strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("OnRequest saw %q", seen)
	}
	// Another initialize opens another session.
	w2 := newHTTPWire(t, s.URL)
	w2.initialize(t)
	if w2.session == w.session || len(s.Handler().SessionIDs()) != 2 {
		t.Errorf("second session %q", w2.session)
	}
	if code, _ := status(t, w, http.MethodGet, "", map[string]string{"Accept": ""}); code != http.StatusNotAcceptable {
		t.Errorf("GET without Accept: %d", code)
	}
}

func TestStreamableHTTPErrors(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{})
	w.initialize(t)
	ping := reqJSON(5, "ping", "")
	tests := []struct {
		name   string
		method string
		body   string
		hdr    map[string]string
		want   int
	}{
		{"no session", http.MethodPost, ping, map[string]string{HeaderSessionID: ""}, http.StatusBadRequest},
		{"unknown session", http.MethodPost, ping, map[string]string{HeaderSessionID: "nope"}, http.StatusNotFound},
		{"unknown session GET", http.MethodGet, "", map[string]string{HeaderSessionID: "nope"}, http.StatusNotFound},
		{"unknown session DELETE", http.MethodDelete, "", map[string]string{HeaderSessionID: "nope"}, http.StatusNotFound},
		{"unsupported version", http.MethodPost, ping, map[string]string{HeaderProtocolVersion: "1999-01-01"}, http.StatusBadRequest},
		{"other version than negotiated", http.MethodPost, ping, map[string]string{HeaderProtocolVersion: "2025-06-18"}, http.StatusBadRequest},
		{"no version header", http.MethodPost, ping, map[string]string{HeaderProtocolVersion: ""}, http.StatusOK},
		{"Accept json only", http.MethodPost, ping, map[string]string{"Accept": "application/json"}, http.StatusNotAcceptable},
		{"Accept sse only", http.MethodPost, ping, map[string]string{"Accept": "text/event-stream"}, http.StatusNotAcceptable},
		{"Accept missing", http.MethodPost, ping, map[string]string{"Accept": ""}, http.StatusNotAcceptable},
		{"Accept wildcard", http.MethodPost, ping, map[string]string{"Accept": "*/*"}, http.StatusOK},
		{"Content-Type text", http.MethodPost, ping, map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
		{"Content-Type missing", http.MethodPost, ping, map[string]string{"Content-Type": ""}, http.StatusUnsupportedMediaType},
		{"Content-Type with charset", http.MethodPost, ping, map[string]string{"Content-Type": "application/json; charset=utf-8"}, http.StatusOK},
		{"not JSON", http.MethodPost, "{nope", nil, http.StatusBadRequest},
		{"not JSON-RPC", http.MethodPost, `{"id":1}`, nil, http.StatusBadRequest},
		{"batch in 2025-11-25", http.MethodPost, "[" + ping + "]", nil, http.StatusBadRequest},
		{"PUT", http.MethodPut, ping, nil, http.StatusMethodNotAllowed},
		{"bad Origin", http.MethodPost, ping, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"loopback Origin", http.MethodPost, ping, map[string]string{"Origin": "http://localhost:3000"}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := status(t, w, tt.method, tt.body, tt.hdr)
			if code != tt.want {
				t.Fatalf("status %d, want %d: %s", code, tt.want, body)
			}
			if code >= 400 {
				m := mustDecode(t, body)
				if m.Error == nil || !m.ID.IsZero() {
					t.Errorf("error body %s", body)
				}
			}
		})
	}
	if code, _ := status(t, newHTTPWire(t, strings.TrimSuffix(s.URL, "/mcp")+"/other"), http.MethodPost, ping, nil); code != http.StatusNotFound {
		t.Errorf("other path: %d", code)
	}
}

func TestStreamableJSONResponse(t *testing.T) {
	_, w := startHTTP(t, HTTPOptions{JSONResponse: true})
	w.initialize(t)
	resp := w.do(t, http.MethodPost, reqJSON(1, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`), nil)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	m, _ := readAnswer(t, resp, nil)
	if text, _ := toolText(t, m); text != "hi" || m.ID.Raw() != "1" {
		t.Errorf("echo: %q id %s", text, m.ID)
	}
}

func TestStreamableProgressOnPOSTStream(t *testing.T) {
	for _, priming := range []bool{false, true} {
		t.Run(fmt.Sprint("priming=", priming), func(t *testing.T) {
			_, w := startHTTP(t, HTTPOptions{Priming: priming})
			w.initialize(t)
			resp := w.do(t, http.MethodPost, reqJSON(7, "tools/call", `{"name":"slow","arguments":{"steps":3,"delayMs":5},"_meta":{"progressToken":"tok-1"}}`), nil)
			defer resp.Body.Close()
			events := newSSEReader(resp.Body)
			ids := map[string]bool{}
			var got []string
			for {
				ev, err := events.next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if ev.hasID != priming {
					t.Errorf("event %+v: id present %v", ev, ev.hasID)
				}
				if priming {
					if ids[ev.id] {
						t.Errorf("event id %q repeated", ev.id)
					}
					ids[ev.id] = true
				}
				if ev.data == "" {
					if !priming || len(got) > 0 || len(ids) != 1 {
						t.Errorf("unexpected empty event %+v", ev)
					}
					continue
				}
				m := mustDecode(t, ev.data)
				if m.IsResponse() {
					text, _ := toolText(t, m)
					got = append(got, "response "+text)
					continue
				}
				var p mcp.ProgressParams
				if err := json.Unmarshal(m.Params, &p); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s %v %v/%v %s", m.Method, p.ProgressToken, p.Progress, p.Total, p.Message))
			}
			want := []string{
				"notifications/progress tok-1 1/3 step 1 of 3",
				"notifications/progress tok-1 2/3 step 2 of 3",
				"notifications/progress tok-1 3/3 step 3 of 3",
				"response done 3 steps",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("stream:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	t.Run("numeric token, no token", func(t *testing.T) {
		_, w := startHTTP(t, HTTPOptions{})
		w.initialize(t)
		_, others := w.request(t, 1, "tools/call", `{"name":"slow","arguments":{"steps":2,"delayMs":1},"_meta":{"progressToken":42}}`)
		if len(others) != 2 || !strings.Contains(string(others[0].Params), `"progressToken":42`) {
			t.Errorf("progress with a numeric token: %d messages", len(others))
		}
		_, others = w.request(t, 2, "tools/call", `{"name":"slow","arguments":{"steps":2,"delayMs":1}}`)
		if len(others) != 0 {
			t.Errorf("progress without a token: %d messages", len(others))
		}
	})
}

// answerer answers server→client requests by POST, as a client would.
func answerer(t *testing.T, w *httpWire, answers map[string]string) func(*jsonrpc.Message) {
	return func(m *jsonrpc.Message) {
		if !m.IsRequest() {
			return
		}
		res, ok := answers[m.Method]
		if !ok {
			t.Errorf("unexpected server request %s", m.Method)
			return
		}
		w.send(t, `{"jsonrpc":"2.0","id":`+m.ID.Raw()+`,"result":`+res+`}`)
	}
}

var clientAnswers = map[string]string{
	"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"sampled!"},"model":"m"}`,
	"elicitation/create":     `{"action":"accept","content":{"name":"Ann"}}`,
	"roots/list":             `{"roots":[{"uri":"file:///a"},{"uri":"file:///b","name":"b"}]}`,
}

func TestStreamableServerRequests(t *testing.T) {
	tests := []struct{ tool, args, method, want string }{
		{"sample", `{"prompt":"hi"}`, "sampling/createMessage", "sampled!"},
		{"elicit", `{"message":"who?"}`, "elicitation/create", `accept {"name":"Ann"}`},
		{"roots", `{}`, "roots/list", "file:///a\nfile:///b"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			s, w := startHTTP(t, HTTPOptions{})
			w.initialize(t)
			resp := w.do(t, http.MethodPost, reqJSON(3, "tools/call", `{"name":"`+tt.tool+`","arguments":`+tt.args+`}`), nil)
			defer resp.Body.Close()
			m, others := readAnswer(t, resp, answerer(t, w, clientAnswers))
			if text, isErr := toolText(t, m); text != tt.want || isErr {
				t.Errorf("%s: %q %v", tt.tool, text, isErr)
			}
			if len(others) != 1 || others[0].Method != tt.method {
				t.Fatalf("messages on the POST stream: %v", others)
			}
			if tt.method == "elicitation/create" {
				var p mcp.ElicitParams
				if err := json.Unmarshal(others[0].Params, &p); err != nil || p.Mode != "form" || p.Message != "who?" || !strings.Contains(string(p.RequestedSchema), `"name"`) {
					t.Errorf("elicitation params %s", others[0].Params)
				}
			}
			if s.Server().Stats().ToolCalls[tt.tool] != 1 {
				t.Error("tool not counted")
			}
		})
	}
	t.Run("client error", func(t *testing.T) {
		_, w := startHTTP(t, HTTPOptions{})
		w.initialize(t)
		resp := w.do(t, http.MethodPost, reqJSON(3, "tools/call", `{"name":"sample","arguments":{"prompt":"x"}}`), nil)
		defer resp.Body.Close()
		m, _ := readAnswer(t, resp, func(m *jsonrpc.Message) {
			w.send(t, `{"jsonrpc":"2.0","id":`+m.ID.Raw()+`,"error":{"code":-1,"message":"user rejected"}}`)
		})
		if text, isErr := toolText(t, m); !isErr || !strings.Contains(text, "user rejected") {
			t.Errorf("%q %v", text, isErr)
		}
	})
	t.Run("no capability", func(t *testing.T) {
		_, w := startHTTP(t, HTTPOptions{})
		w.initializeWith(t, `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
		for i, tool := range []string{"sample", "elicit", "roots"} {
			m, others := w.request(t, i+1, "tools/call", `{"name":"`+tool+`","arguments":{"prompt":"p","message":"m"}}`)
			if text, isErr := toolText(t, m); !isErr || !strings.Contains(text, "capability") || len(others) != 0 {
				t.Errorf("%s: %q %v %v", tool, text, isErr, others)
			}
		}
	})
}

func TestStreamableServerRequestJSONMode(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{JSONResponse: true})
	w.initialize(t)

	// No GET stream: nothing can carry the request.
	m, _ := w.request(t, 1, "tools/call", `{"name":"sample","arguments":{"prompt":"hi"}}`)
	if text, isErr := toolText(t, m); !isErr || !strings.Contains(text, "no channel") {
		t.Errorf("without GET stream: %q %v", text, isErr)
	}

	// With a GET stream, the request goes there and the answer is a POST.
	get := w.do(t, http.MethodGet, "", nil)
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK || get.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %q", get.StatusCode, get.Header.Get("Content-Type"))
	}
	done := make(chan *jsonrpc.Message, 1)
	go func() {
		m, _ := w.request(t, 2, "tools/call", `{"name":"sample","arguments":{"prompt":"hi"}}`)
		done <- m
	}()
	getEvents := newSSEReader(get.Body)
	ev, err := getEvents.next()
	if err != nil {
		t.Fatal(err)
	}
	req := mustDecode(t, ev.data)
	if req.Method != "sampling/createMessage" || !req.IsRequest() {
		t.Fatalf("on the GET stream: %s", ev.data)
	}
	answerer(t, w, clientAnswers)(req)
	select {
	case m := <-done:
		if text, isErr := toolText(t, m); text != "sampled!" || isErr {
			t.Errorf("with GET stream: %q %v", text, isErr)
		}
	case <-time.After(testTimeout):
		t.Fatal("no answer")
	}
	if st := s.Server().Stats(); st.ToolCalls["sample"] != 2 {
		t.Errorf("stats %v", st.ToolCalls)
	}

	// Notifications sent during a request in JSON mode go on the GET
	// stream too.
	m, _ = w.request(t, 3, "tools/call", `{"name":"slow","arguments":{"steps":1,"delayMs":1},"_meta":{"progressToken":"j"}}`)
	if text, _ := toolText(t, m); text != "done 1 steps" {
		t.Errorf("slow: %q", text)
	}
	ev, err = getEvents.next()
	if err != nil {
		t.Fatal(err)
	}
	if p := mustDecode(t, ev.data); p.Method != "notifications/progress" || !strings.Contains(string(p.Params), `"progressToken":"j"`) {
		t.Errorf("on the GET stream: %s", ev.data)
	}
}
