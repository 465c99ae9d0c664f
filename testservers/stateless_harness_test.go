package testservers

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// allCaps are client capabilities declaring every input kind.
var allCaps = map[string]any{
	"sampling":    map[string]any{},
	"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
	"roots":       map[string]any{},
}

// statelessMeta returns the _meta of a stateless request.
func statelessMeta(version string, caps map[string]any, extra map[string]any) map[string]any {
	meta := map[string]any{
		mcp.MetaProtocolVersion:    version,
		mcp.MetaClientInfo:         map[string]any{"name": "raw-test", "version": "0"},
		mcp.MetaClientCapabilities: caps,
	}
	maps.Copy(meta, extra)
	return meta
}

// statelessBody returns a stateless request (or, with id nil, notification)
// whose params get _meta unless they have one.
func statelessBody(id any, method string, params map[string]any, meta map[string]any) string {
	p := map[string]any{}
	maps.Copy(p, params)
	if _, ok := p["_meta"]; !ok && meta != nil {
		p["_meta"] = meta
	}
	m := map[string]any{"jsonrpc": "2.0", "method": method, "params": p}
	if id != nil {
		m["id"] = id
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// statelessWire talks to a Streamable HTTP server in the stateless era with
// hand-written requests.
type statelessWire struct {
	url      string
	hc       *http.Client
	version  string
	caps     map[string]any
	metaMore map[string]any // more _meta keys (logLevel, progressToken)
}

func newStatelessWire(t *testing.T, url string) *statelessWire {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &statelessWire{url: url, hc: &http.Client{Transport: tr, Timeout: testTimeout}, version: mcp.Version20260728, caps: map[string]any{}}
}

// headersFor returns the standard headers of a stateless request.
func (w *statelessWire) headersFor(method string, params map[string]any) map[string]string {
	h := map[string]string{HeaderProtocolVersion: w.version, HeaderMethod: method}
	for _, k := range []string{"name", "uri"} {
		if v, ok := params[k].(string); ok {
			h[HeaderName] = EncodeHeaderValue(v)
		}
	}
	return h
}

// post sends body with the transport's headers, then hdr ("" removes one).
func (w *statelessWire) post(t *testing.T, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
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

// send posts a stateless request with its headers, hdr added, and returns the
// HTTP response unread.
func (w *statelessWire) send(t *testing.T, id any, method string, params map[string]any, hdr map[string]string) *http.Response {
	t.Helper()
	h := w.headersFor(method, params)
	maps.Copy(h, hdr)
	return w.post(t, statelessBody(id, method, params, statelessMeta(w.version, w.caps, w.metaMore)), h)
}

// call sends a stateless request and reads its answer, whatever the status:
// the response, the messages before it, and the HTTP status.
func (w *statelessWire) call(t *testing.T, id any, method string, params map[string]any, hdr map[string]string) (*jsonrpc.Message, []*jsonrpc.Message, int) {
	t.Helper()
	resp := w.send(t, id, method, params, hdr)
	defer resp.Body.Close()
	m, others := readAny(t, resp)
	return m, others, resp.StatusCode
}

// readAny reads a JSON body or an SSE stream up to its response.
func readAny(t *testing.T, resp *http.Response) (*jsonrpc.Message, []*jsonrpc.Message) {
	t.Helper()
	if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") == "text/event-stream" {
		return readAnswer(t, resp, nil)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, ct, body)
	}
	return mustDecode(t, string(body)), nil
}

// ok calls and fails unless the answer is a 200 result.
func (w *statelessWire) ok(t *testing.T, id any, method string, params map[string]any) (*jsonrpc.Message, []*jsonrpc.Message) {
	t.Helper()
	m, others, status := w.call(t, id, method, params, nil)
	if status != http.StatusOK || m.Error != nil {
		t.Fatalf("%s: status %d, error %v", method, status, m.Error)
	}
	return m, others
}

// resultFields decodes a result into a map of raw fields.
func resultFields(t *testing.T, m *jsonrpc.Message) map[string]json.RawMessage {
	t.Helper()
	return result[map[string]json.RawMessage](t, m)
}

// checkStatelessResult checks what every stateless result carries, and the
// cache hints when ttl >= 0 (none when ttl < 0).
func checkStatelessResult(t *testing.T, m *jsonrpc.Message, resultType string, ttl int64) map[string]json.RawMessage {
	t.Helper()
	f := resultFields(t, m)
	if got := string(f["resultType"]); got != `"`+resultType+`"` {
		t.Errorf("resultType %s, want %q", got, resultType)
	}
	var meta map[string]json.RawMessage
	var si mcp.Implementation
	if err := json.Unmarshal(f["_meta"], &meta); err != nil {
		t.Fatalf("_meta %s: %v", f["_meta"], err)
	}
	if err := json.Unmarshal(meta[mcp.MetaServerInfo], &si); err != nil || si.Name != DefaultName || si.Version != ServerVersion {
		t.Errorf("serverInfo %s: %v", meta[mcp.MetaServerInfo], err)
	}
	if ttl < 0 {
		if _, ok := f["ttlMs"]; ok {
			t.Errorf("ttlMs on a result that is not cacheable: %s", m.Result)
		}
		return f
	}
	if got := string(f["ttlMs"]); got != fmt.Sprint(ttl) {
		t.Errorf("ttlMs %s, want %d", got, ttl)
	}
	if got := string(f["cacheScope"]); got != `"public"` {
		t.Errorf("cacheScope %s", got)
	}
	return f
}

// errorData decodes the data of an error response.
func errorData[T any](t *testing.T, m *jsonrpc.Message) T {
	t.Helper()
	var v T
	if m.Error == nil {
		t.Fatalf("no error: %s", m.Result)
	}
	if err := json.Unmarshal(m.Error.Data, &v); err != nil {
		t.Fatalf("error data %s: %v", m.Error.Data, err)
	}
	return v
}

// inputRequiredOf decodes an input_required result.
type inputRequiredResult struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState *string `json:"requestState"`
}

// startStatelessHTTP starts a server with opts and a wire to it.
func startStatelessHTTP(t *testing.T, opts HTTPOptions) (*HTTPServer, *statelessWire) {
	t.Helper()
	if opts.Eras == InitializeOnly {
		opts.Eras = StatelessOnly
	}
	s := StartStreamable(opts)
	t.Cleanup(s.Close)
	return s, newStatelessWire(t, s.URL)
}
