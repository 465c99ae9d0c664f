package bridge

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// A 2024-11-05 client reaches a stateless upstream over /sse: the endpoint
// event, POSTs, answers on the stream.
func TestLegacySSEClient(t *testing.T) {
	up := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.StatelessOnly}})
	defer up.Close()
	_, url := startBridge(t, up.URL, Options{})
	sseURL := strings.TrimSuffix(url, "/mcp") + "/sse"
	conn, err := client.Dial(testCtx(t), client.URL(sseURL), client.WithTransportPolicy(negotiate.SSEOnly),
		client.WithEra(negotiate.InitializeOnly), client.WithProtocolVersion(mcp.Version20241105))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if info := conn.Info(); info.Transport != client.TransportSSE || info.ProtocolVersion != mcp.Version20241105 {
		t.Fatalf("negotiated %s %s", info.Transport, info.ProtocolVersion)
	}
	res, err := conn.CallTool(testCtx(t), "echo", map[string]any{"text": "old"})
	if err != nil || res.Content[0].Text != "old" {
		t.Fatalf("%+v, %v", res, err)
	}
}

// The endpoint event names Options.MessagePath, so that a bridge served
// under other paths (a gateway's views) gets its clients' POSTs back.
func TestLegacyEndpointMessagePath(t *testing.T) {
	up := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.StatelessOnly}})
	defer up.Close()
	for _, tc := range []struct{ path, want string }{{"", "/message?sessionId="}, {"/message/team", "/message/team?sessionId="}} {
		_, url := startBridge(t, up.URL, Options{MessagePath: tc.path})
		ctx, cancel := context.WithCancel(testCtx(t))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/mcp")+"/sse", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(res.Body)
		var data string
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = d
				break
			}
		}
		cancel()
		res.Body.Close()
		if !strings.HasPrefix(data, tc.want) {
			t.Errorf("MessagePath %q: endpoint %q, want %s…", tc.path, data, tc.want)
		}
	}
}
