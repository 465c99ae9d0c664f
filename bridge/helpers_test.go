package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// testCtx bounds a test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startBridge starts a bridge in front of the upstream at url, served over
// HTTP on loopback; both end with the test.
func startBridge(t *testing.T, url string, o Options, opts ...client.Option) (*Bridge, string) {
	t.Helper()
	return startDialer(t, DialTarget(client.URL(url), opts...), o)
}

// startDialer is startBridge over any Dialer.
func startDialer(t *testing.T, dial Dialer, o Options) (*Bridge, string) {
	t.Helper()
	b, err := New(testCtx(t), dial, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(func() {
		_ = b.Close()
		srv.Close()
	})
	return b, srv.URL + "/mcp"
}

// exchange is what a stateless POST got back: the HTTP status, the
// response, and the notifications that came before it.
type exchange struct {
	status int
	header http.Header
	resp   *jsonrpc.Message
	notes  []*jsonrpc.Message
	body   string
}

// statelessCall posts a 2026-07-28 request with its _meta and headers.
// caps are the client's capabilities (nil: none).
func statelessCall(t *testing.T, url string, id any, method string, params map[string]any, caps map[string]any, hdr ...string) exchange {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if caps == nil {
		caps = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[mcp.MetaProtocolVersion] = mcp.LatestStatelessVersion
	meta[mcp.MetaClientCapabilities] = caps
	params["_meta"] = meta
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	h := http.Header{}
	h.Set("Mcp-Protocol-Version", mcp.LatestStatelessVersion)
	h.Set("Mcp-Method", method)
	switch method {
	case "tools/call", "prompts/get":
		h.Set("Mcp-Name", params["name"].(string))
	case "resources/read":
		h.Set("Mcp-Name", params["uri"].(string))
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			h.Del(hdr[i])
		} else {
			h.Set(hdr[i], hdr[i+1])
		}
	}
	return post(t, url, body, h)
}

func post(t *testing.T, url string, body []byte, h http.Header) exchange {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	ex := exchange{status: res.StatusCode, header: res.Header}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		for _, m := range readEvents(t, res.Body) {
			if m.IsResponse() {
				ex.resp = m
			} else {
				ex.notes = append(ex.notes, m)
			}
		}
		return ex
	}
	b, _ := io.ReadAll(res.Body)
	ex.body = string(b)
	if m, err := jsonrpc.DecodeMessage(b); err == nil {
		ex.resp = m
	}
	return ex
}

// readEvents reads SSE data lines as JSON-RPC messages until the body ends.
func readEvents(t *testing.T, r io.Reader) []*jsonrpc.Message {
	t.Helper()
	var out []*jsonrpc.Message
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
			m, err := jsonrpc.DecodeMessage([]byte(data))
			if err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// resultOf decodes the result of ex into a map, failing on an error.
func resultOf(t *testing.T, ex exchange) map[string]any {
	t.Helper()
	if ex.resp == nil {
		t.Fatalf("no response (status %d, body %q)", ex.status, ex.body)
	}
	if ex.resp.Error != nil {
		t.Fatalf("error %d: %s (status %d)", ex.resp.Error.Code, ex.resp.Error.Message, ex.status)
	}
	var m map[string]any
	if err := json.Unmarshal(ex.resp.Result, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// textOf is the text of the first content block of a tool result.
func textOf(t *testing.T, res map[string]any) string {
	t.Helper()
	c, _ := res["content"].([]any)
	if len(c) == 0 {
		t.Fatalf("no content in %v", res)
	}
	s, _ := c[0].(map[string]any)["text"].(string)
	return s
}
