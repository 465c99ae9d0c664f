package testservers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	RunFromEnv()
	goleak.VerifyTestMain(m)
}

// testTimeout bounds every wait in these tests.
const testTimeout = 10 * time.Second

// wire is a raw JSON-RPC client of one front-end, written for tests.
type wire interface {
	// request sends a request and returns its response and the other
	// messages the server sent before it (on its stream, for HTTP).
	request(t *testing.T, id int, method, params string) (*jsonrpc.Message, []*jsonrpc.Message)
	// notify sends a notification (or, with raw, any message).
	send(t *testing.T, raw string)
}

func reqJSON(id int, method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

func notifJSON(method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
}

const initParams = `{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{"form":{}},"roots":{"listChanged":true}},"clientInfo":{"name":"raw-test","version":"0"}}`

// ---- HTTP ----

// httpWire talks to a Streamable HTTP server with hand-written requests.
type httpWire struct {
	url     string
	hc      *http.Client
	session string
	version string // MCP-Protocol-Version sent after initialize
}

func newHTTPWire(t *testing.T, url string) *httpWire {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &httpWire{url: url, hc: &http.Client{Transport: tr, Timeout: testTimeout}}
}

// do sends one HTTP request with the usual headers, which hdr may
// override ("" removes one).
func (w *httpWire) do(t *testing.T, method, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, w.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	if w.session != "" {
		req.Header.Set(HeaderSessionID, w.session)
	}
	if w.version != "" {
		req.Header.Set(HeaderProtocolVersion, w.version)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (w *httpWire) send(t *testing.T, raw string) {
	t.Helper()
	resp := w.do(t, http.MethodPost, raw, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s: status %d, want 202: %s", raw, resp.StatusCode, body)
	}
	if len(body) != 0 {
		t.Fatalf("POST %s: 202 with a body: %q", raw, body)
	}
}

func (w *httpWire) request(t *testing.T, id int, method, params string) (*jsonrpc.Message, []*jsonrpc.Message) {
	t.Helper()
	resp := w.do(t, http.MethodPost, reqJSON(id, method, params), nil)
	defer resp.Body.Close()
	return readAnswer(t, resp, nil)
}

// readAnswer reads the answer to a POSTed request: one JSON body or an
// SSE stream up to the response. onMsg, when set, sees each message that
// is not the response as it arrives (to answer server requests).
func readAnswer(t *testing.T, resp *http.Response, onMsg func(*jsonrpc.Message)) (*jsonrpc.Message, []*jsonrpc.Message) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	switch ct := resp.Header.Get("Content-Type"); ct {
	case "application/json":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return mustDecode(t, string(body)), nil
	case "text/event-stream":
		var others []*jsonrpc.Message
		events := newSSEReader(resp.Body)
		for {
			ev, err := events.next()
			if err != nil {
				t.Fatalf("SSE stream ended before the response: %v", err)
			}
			if ev.data == "" {
				continue // priming
			}
			m := mustDecode(t, ev.data)
			if m.IsResponse() {
				return m, others
			}
			others = append(others, m)
			if onMsg != nil {
				onMsg(m)
			}
		}
	default:
		t.Fatalf("Content-Type %q", ct)
		return nil, nil
	}
}

func mustDecode(t *testing.T, s string) *jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(s))
	if err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return m
}

// initialize opens a session and sends notifications/initialized.
func (w *httpWire) initialize(t *testing.T) *jsonrpc.Message {
	t.Helper()
	return w.initializeWith(t, initParams)
}

// initializeWith is initialize with other params.
func (w *httpWire) initializeWith(t *testing.T, params string) *jsonrpc.Message {
	t.Helper()
	resp := w.do(t, http.MethodPost, reqJSON(0, "initialize", params), nil)
	defer resp.Body.Close()
	m, _ := readAnswer(t, resp, nil)
	if m.Error != nil {
		t.Fatalf("initialize: %v", m.Error)
	}
	w.session = resp.Header.Get(HeaderSessionID)
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	w.version = r.ProtocolVersion
	w.send(t, notifJSON("notifications/initialized", ""))
	return m
}

// sseEvent is one server-sent event.
type sseEvent struct {
	id, event, data, retry string
	hasID                  bool
}

// sseReader parses an event stream (enough of the WHATWG rules for these
// tests: fields, comments, multi-line data).
type sseReader struct{ r *bufio.Reader }

func newSSEReader(r io.Reader) *sseReader { return &sseReader{bufio.NewReader(r)} }

func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data []string
	seen := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if !seen {
				continue
			}
			ev.data = strings.Join(data, "\n")
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		seen = true
		switch field {
		case "id":
			ev.id, ev.hasID = value, true
		case "event":
			ev.event = value
		case "data":
			data = append(data, value)
		case "retry":
			ev.retry = value
		}
	}
}

// ---- stdio ----

// stdioWire runs ServeStdio over pipes and reads its output lines.
type stdioWire struct {
	srv   *Server
	in    *io.PipeWriter
	msgs  chan *jsonrpc.Message
	done  chan error // ServeStdio's result
	read  sync.WaitGroup
	close sync.Once
}

func newStdioWire(t *testing.T, ctx context.Context, opts Options) *stdioWire {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := &stdioWire{srv: NewServer(opts), in: inW, msgs: make(chan *jsonrpc.Message, 1000), done: make(chan error, 1)}
	go func() {
		w.done <- w.srv.ServeStdio(ctx, inR, outW)
		outW.Close()
		inR.Close()
	}()
	w.read.Add(1)
	go func() {
		defer w.read.Done()
		defer close(w.msgs)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				m, derr := jsonrpc.DecodeMessage(line)
				if derr != nil {
					t.Errorf("server wrote an invalid line %q: %v", line, derr)
				} else {
					w.msgs <- m
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		w.shutdown(t)
		go func() {
			for range w.msgs {
			}
		}()
		w.read.Wait()
	})
	return w
}

// shutdown closes stdin and returns ServeStdio's result. The messages
// the server wrote stay readable from msgs, which is then closed.
func (w *stdioWire) shutdown(t *testing.T) error {
	var err error
	w.close.Do(func() {
		w.in.Close()
		select {
		case err = <-w.done:
		case <-time.After(testTimeout):
			t.Error("ServeStdio did not return after EOF")
		}
	})
	return err
}

func (w *stdioWire) send(t *testing.T, raw string) {
	t.Helper()
	if _, err := io.WriteString(w.in, raw+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (w *stdioWire) recv(t *testing.T) *jsonrpc.Message {
	t.Helper()
	select {
	case m, ok := <-w.msgs:
		if !ok {
			t.Fatal("server output ended")
		}
		return m
	case <-time.After(testTimeout):
		t.Fatal("timed out waiting for a message")
		return nil
	}
}

func (w *stdioWire) request(t *testing.T, id int, method, params string) (*jsonrpc.Message, []*jsonrpc.Message) {
	t.Helper()
	w.send(t, reqJSON(id, method, params))
	var others []*jsonrpc.Message
	for {
		m := w.recv(t)
		if m.IsResponse() && m.ID.Raw() == fmt.Sprint(id) {
			return m, others
		}
		others = append(others, m)
	}
}

func (w *stdioWire) initialize(t *testing.T) *jsonrpc.Message {
	t.Helper()
	m, _ := w.request(t, 0, "initialize", initParams)
	if m.Error != nil {
		t.Fatalf("initialize: %v", m.Error)
	}
	w.send(t, notifJSON("notifications/initialized", ""))
	return m
}

// ---- results ----

// toolText returns the concatenated text of a tools/call result and
// whether it is an error result.
func toolText(t *testing.T, m *jsonrpc.Message) (string, bool) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("tools/call: protocol error %v", m.Error)
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String(), r.IsError
}

// field decodes the result's field at the dotted path into v.
func result[T any](t *testing.T, m *jsonrpc.Message) T {
	t.Helper()
	var v T
	if m.Error != nil {
		t.Fatalf("unexpected error %v", m.Error)
	}
	if err := json.Unmarshal(m.Result, &v); err != nil {
		t.Fatalf("decoding %s: %v", m.Result, err)
	}
	return v
}

func wantErrorCode(t *testing.T, m *jsonrpc.Message, code int64) {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("got result %s, want error %d", m.Result, code)
	}
	if m.Error.Code != code {
		t.Fatalf("error %v, want code %d", m.Error, code)
	}
}
