package bridge

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/testservers"
)

// A ping is the one request a client may send before initialize
// (2025-11-25, basic/lifecycle): every face answers it with an empty
// result, and still refuses any other request before initialize.
func TestPingBeforeInitialize(t *testing.T) {
	const (
		ping = `{"jsonrpc":"2.0","id":7,"method":"ping"}`
		pong = `{"jsonrpc":"2.0","id":7,"result":{}}`
		list = `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`
	)
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	b, url := startBridge(t, up.URL, Options{})
	refused := func(t *testing.T, line string) {
		t.Helper()
		if !strings.Contains(line, `"id":8,"error":{"code":-32600,`) {
			t.Errorf("tools/list before initialize: %s, want -32600", line)
		}
	}

	t.Run("stdio", func(t *testing.T) {
		tr, _ := serveStdio(t, b)
		for _, req := range []string{ping, list} {
			if _, err := tr.In.Write([]byte(req + "\n")); err != nil {
				t.Fatal(err)
			}
			line, err := tr.Out.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line = strings.TrimSpace(line); req == ping && line != pong {
				t.Errorf("ping: %s, want %s", line, pong)
			} else if req == list {
				refused(t, line)
			}
		}
	})

	t.Run("sse", func(t *testing.T) {
		base := strings.TrimSuffix(url, "/mcp")
		req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, base+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		data := func() string {
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					return d
				}
			}
			t.Fatalf("the stream ended: %v", sc.Err())
			return ""
		}
		endpoint := data()
		for _, body := range []string{ping, list} {
			r, _ := rawPost(t, base+endpoint, body, nil)
			if r.StatusCode != http.StatusAccepted {
				t.Fatalf("POST %s: %d", body, r.StatusCode)
			}
			if got := data(); body == ping && got != pong {
				t.Errorf("ping: %s, want %s", got, pong)
			} else if body == list {
				refused(t, got)
			}
		}
	})

	t.Run("mcp", func(t *testing.T) {
		res, body := rawPost(t, url, ping, nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" || body != pong {
			t.Errorf("ping: %d %s %s, want 200 application/json %s", res.StatusCode, res.Header.Get("Content-Type"), body, pong)
		}
		if res.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("a ping opened a session")
		}
		res, body = rawPost(t, url, list, nil)
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("tools/list before initialize: %d", res.StatusCode)
		}
		refused(t, body)
	})
}
