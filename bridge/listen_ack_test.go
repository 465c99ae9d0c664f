package bridge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// A client's subscriptions/listen is acknowledged only once the bridge's
// own upstream stream of changes is live: a change the upstream makes
// right after the acknowledgement reaches the client, on either face, in
// front of an upstream of either era, with the client listening as soon
// as the bridge is up.
func TestListenAckedOnceUpstreamListens(t *testing.T) {
	upstreams := []struct {
		name  string
		start func(testservers.HTTPOptions) *testservers.HTTPServer
	}{
		{"stateless upstream", testservers.StartStateless},
		{"initialize-era upstream", testservers.StartStreamable},
	}
	for _, up := range upstreams {
		t.Run(up.name+"/http", func(t *testing.T) {
			s := up.start(testservers.HTTPOptions{})
			defer s.Close()
			_, url := startBridge(t, s.URL, Options{})
			next := openListen(t, url, "sub-1")
			wantNote(t, next(), "notifications/subscriptions/acknowledged", `"sub-1"`)
			if n := s.Server().NotifyToolsChanged(); n == 0 {
				t.Fatal("after the acknowledgement, the upstream had no one to tell of its change")
			}
			wantNote(t, next(), "notifications/tools/list_changed", `"sub-1"`)
		})
		t.Run(up.name+"/stdio", func(t *testing.T) {
			s := up.start(testservers.HTTPOptions{})
			defer s.Close()
			b, _ := startBridge(t, s.URL, Options{})
			tr, _ := serveStdio(t, b)
			ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
			defer cancel()
			msgs := make(chan *jsonrpc.Message, 16)
			go func() { // ends when the pipes close, at the test's end
				defer close(msgs)
				for {
					m, err := tr.Recv()
					if err != nil {
						return
					}
					msgs <- m
				}
			}()
			recv := func() *jsonrpc.Message {
				select {
				case m := <-msgs:
					return m
				case <-ctx.Done():
					t.Fatal("nothing more came within the test's time")
				}
				return nil
			}
			raw, _ := json.Marshal(map[string]any{
				"notifications": map[string]any{"toolsListChanged": true},
				"_meta":         map[string]any{mcp.MetaProtocolVersion: mcp.LatestStatelessVersion, mcp.MetaClientCapabilities: map[string]any{}},
			})
			if err := tr.Send(ctx, &jsonrpc.Message{ID: jsonrpc.String("sub-1"), Method: "subscriptions/listen", Params: raw}); err != nil {
				t.Fatal(err)
			}
			wantNote(t, recv(), "notifications/subscriptions/acknowledged", `"sub-1"`)
			if n := s.Server().NotifyToolsChanged(); n == 0 {
				t.Fatal("after the acknowledgement, the upstream had no one to tell of its change")
			}
			wantNote(t, recv(), "notifications/tools/list_changed", `"sub-1"`)
		})
	}
}

// An upstream that refuses subscriptions/listen: the client's listen
// stream is refused too, not acknowledged and left silent.
func TestListenRefusedWhenUpstreamRefuses(t *testing.T) {
	s := testservers.StartStateless(testservers.HTTPOptions{})
	defer s.Close()
	u, _ := url.Parse(s.URL)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Method") != "subscriptions/listen" {
			proxy.ServeHTTP(w, r)
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
			"error": map[string]any{"code": -32601, "message": "subscriptions/listen is not served here"}})
	}))
	defer gate.Close()
	_, burl := startBridge(t, gate.URL+u.Path, Options{})
	ex := statelessCall(t, burl, "sub-1", "subscriptions/listen",
		map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil)
	if ex.status != http.StatusBadGateway || ex.resp == nil || ex.resp.Error == nil {
		t.Fatalf("listen with an upstream that refuses to listen: %d %s", ex.status, ex.body)
	}
}
