package testservers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

func startStatus(t *testing.T, opts StatusOptions) *StatusServer {
	s := StartStatus(opts)
	t.Cleanup(s.Close)
	return s
}

// probe POSTs initialize as a client of 2025-11-25 would and returns the
// answer with its body.
func probe(t *testing.T, hc *http.Client, u, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestStatusPost(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		header http.Header
		ct     string // PostContentType
		wantCT string
	}{
		{status: 400, body: `{"error":"bad request"}`, wantCT: "application/json"},
		{status: 404, body: "Cannot POST /mcp", wantCT: "text/plain; charset=utf-8"},
		{status: 405, header: http.Header{"Allow": {"GET"}}},
		{status: 401, header: http.Header{"Www-Authenticate": {`Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`}}},
		{status: 403, body: "<h1>Forbidden</h1>", ct: "text/html", wantCT: "text/html"},
		{status: 500, body: "boom"},
		{status: 503, header: http.Header{"Retry-After": {"2"}}},
		{status: 406},
		{status: 415},
	} {
		t.Run(http.StatusText(c.status), func(t *testing.T) {
			s := startStatus(t, StatusOptions{PostStatus: c.status, PostBody: c.body, PostHeader: c.header, PostContentType: c.ct, GETStatus: 405})
			hc := newLegacyClient(t)
			resp, body := probe(t, hc, s.URL, reqJSON(0, "initialize", initParams))
			if resp.StatusCode != c.status || body != c.body {
				t.Errorf("POST: %d %q", resp.StatusCode, body)
			}
			if c.wantCT != "" && resp.Header.Get("Content-Type") != c.wantCT {
				t.Errorf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), c.wantCT)
			}
			for k, vs := range c.header {
				if got := resp.Header.Values(k); strings.Join(got, ",") != strings.Join(vs, ",") {
					t.Errorf("header %s: %v, want %v", k, got, vs)
				}
			}
			get, err := hc.Get(s.URL)
			if err != nil {
				t.Fatal(err)
			}
			get.Body.Close()
			if get.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("GET: %d, want 405", get.StatusCode)
			}
			if hits := s.Hits(); hits["POST /mcp"] != 1 || hits["GET /mcp"] != 1 || len(hits) != 2 {
				t.Errorf("hits %v", hits)
			}
		})
	}
}

func TestStatusDefaults(t *testing.T) {
	var seen []string
	s := startStatus(t, StatusOptions{Path: "/v1/mcp", OnRequest: func(r *http.Request) { seen = append(seen, r.Method) }})
	if !strings.HasSuffix(s.URL, "/v1/mcp") {
		t.Fatalf("URL %s", s.URL)
	}
	hc := newLegacyClient(t)
	resp, body := probe(t, hc, s.URL, reqJSON(0, "initialize", initParams))
	if resp.StatusCode != http.StatusNotFound || body != "" {
		t.Errorf("POST: %d %q", resp.StatusCode, body)
	}
	get, err := hc.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != http.StatusNotFound {
		t.Errorf("GET: %d", get.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodDelete, s.URL, nil)
	del, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	del.Body.Close()
	if del.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d", del.StatusCode)
	}
	if s.Server() != nil || s.CrossOriginHits() != 0 {
		t.Error("a core without GETServesLegacy")
	}
	s.KillStreams() // nothing to kill
	if strings.Join(seen, " ") != "POST GET DELETE" {
		t.Errorf("OnRequest saw %v", seen)
	}
	if hits := s.Hits(); hits["POST /v1/mcp"] != 1 || hits["GET /v1/mcp"] != 1 || hits["DELETE /v1/mcp"] != 1 {
		t.Errorf("hits %v", hits)
	}
}

// The classic old server: POST to the URL fails, GET of the same URL is a
// working HTTP+SSE stream.
func TestStatusGETServesLegacy(t *testing.T) {
	for _, status := range []int{400, 404, 405} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			s := startStatus(t, StatusOptions{PostStatus: status, GETServesLegacy: true})
			resp, _ := probe(t, newLegacyClient(t), s.URL, reqJSON(0, "initialize", initParams))
			if resp.StatusCode != status {
				t.Fatalf("POST: %d", resp.StatusCode)
			}
			w := dialLegacy(t, s.URL)
			if !strings.HasPrefix(w.endpoint, "/message?sessionId=") {
				t.Errorf("endpoint %q", w.endpoint)
			}
			if v := result[mcp.InitializeResult](t, w.initialize(t)).ProtocolVersion; v != mcp.Version20241105 {
				t.Errorf("negotiated %s", v)
			}
			if m, _ := w.request(t, 1, "ping", ""); m.Error != nil {
				t.Errorf("ping: %v", m.Error)
			}
			if st := s.Server().Stats(); st.Initializations != 1 {
				t.Errorf("stats %+v", st)
			}
			if hits := s.Hits(); hits["POST /mcp"] != 1 || hits["GET /mcp"] != 1 || hits["POST /message"] != 3 {
				t.Errorf("hits %v", hits)
			}
			s.KillStreams()
			if _, err := w.events.next(); err != io.EOF {
				t.Errorf("after KillStreams: %v", err)
			}
		})
	}
}

func TestStatusLegacyOnly(t *testing.T) {
	// A known-legacy URL: a test asserts that no POST probe reached it.
	s := startStatus(t, StatusOptions{PostStatus: 405, GETServesLegacy: true, Legacy: LegacyOptions{Endpoint: EndpointCrossOrigin}})
	w := dialLegacy(t, s.URL)
	if hits := s.Hits(); hits["POST /mcp"] != 0 || hits["GET /mcp"] != 1 {
		t.Errorf("hits %v", hits)
	}
	if strings.HasPrefix(w.endpoint, "/") {
		t.Fatalf("endpoint %q", w.endpoint)
	}
	w.post(t, reqJSON(0, "initialize", initParams))
	if s.CrossOriginHits() != 1 {
		t.Errorf("CrossOriginHits %d", s.CrossOriginHits())
	}
}

func TestStatusPostDelay(t *testing.T) {
	const delay = 200 * time.Millisecond
	s := startStatus(t, StatusOptions{PostStatus: 500, PostDelay: delay})
	hc := newLegacyClient(t)
	start := time.Now()
	resp, _ := probe(t, hc, s.URL, reqJSON(0, "initialize", initParams))
	if d := time.Since(start); resp.StatusCode != 500 || d < delay {
		t.Errorf("status %d after %v, want 500 after %v", resp.StatusCode, d, delay)
	}

	// A client that gives up frees the handler.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(reqJSON(0, "initialize", initParams)))
	if _, err := hc.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want a timeout", err)
	}
}

func TestStatusCloseWithHeldPost(t *testing.T) {
	s := StartStatus(StatusOptions{PostStatus: 503, PostDelay: time.Hour, GETServesLegacy: true})
	hc := newLegacyClient(t)
	held := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(reqJSON(0, "initialize", initParams)))
		resp, err := hc.Do(req)
		if err != nil {
			held <- 0
			return
		}
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	w := dialLegacy(t, s.URL)
	w.initialize(t)
	testkit.Eventually(t, testTimeout, "the POST to be held", func() bool { return s.Hits()["POST /mcp"] == 1 })

	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Close()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
	if status := <-held; status != 503 {
		t.Errorf("held POST: %d, want its status at Close", status)
	}
}

func TestNewerRevisionBodies(t *testing.T) {
	cases := []struct {
		name     string
		opts     StatusOptions
		body     string
		wantBody string
	}{
		{
			name:     "method not found",
			opts:     StatusOptions{PostStatus: 404, PostBodyFunc: MethodNotFoundBody},
			body:     reqJSON(7, "initialize", initParams),
			wantBody: `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found: initialize"}}`,
		},
		{
			name:     "method not found, string id",
			opts:     StatusOptions{PostStatus: 400, PostBodyFunc: MethodNotFoundBody},
			body:     `{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{}}`,
			wantBody: `{"jsonrpc":"2.0","id":"init-1","error":{"code":-32601,"message":"Method not found: initialize"}}`,
		},
		{
			name:     "method not found, no request",
			opts:     StatusOptions{PostStatus: 404, PostBodyFunc: MethodNotFoundBody},
			body:     `not json`,
			wantBody: `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}`,
		},
		{
			name:     "unsupported version",
			opts:     StatusOptions{PostStatus: 400, PostBodyFunc: UnsupportedVersionBody(mcp.Version20260728)},
			body:     reqJSON(3, "initialize", initParams),
			wantBody: `{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startStatus(t, c.opts)
			resp, body := probe(t, newLegacyClient(t), s.URL, c.body)
			if resp.StatusCode != c.opts.PostStatus || body != c.wantBody {
				t.Errorf("got %d %s\nwant %d %s", resp.StatusCode, body, c.opts.PostStatus, c.wantBody)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			m, err := jsonrpc.DecodeMessage([]byte(body))
			if err != nil || !m.IsResponse() || m.Error == nil {
				t.Fatalf("not a JSON-RPC error response: %v", err)
			}
			if m.Error.Code == jsonrpc.CodeUnsupportedProtocolVersion {
				var data struct {
					Supported []string `json:"supported"`
				}
				if err := json.Unmarshal(m.Error.Data, &data); err != nil || len(data.Supported) != 1 {
					t.Errorf("data %s: %v", m.Error.Data, err)
				}
			}
		})
	}
	if got := string(UnsupportedVersionBody()(nil)); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":[]}}}` {
		t.Errorf("no versions: %s", got)
	}
}
