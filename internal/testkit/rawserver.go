package testkit

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// RawServer is what a StartRaw server answers, byte for byte. The test
// servers build their answers from typed values, so they cannot send
// members in an order of their own choosing, members mcp.Tool lacks, a
// schema that refers to itself, or a result of the wrong shape.
type RawServer struct {
	// Tools is the tools/list result's "tools" array, as JSON.
	Tools string
	// CallResult answers every tools/call; "" answers -32601.
	CallResult string
	// Stateless makes it a 2026-07-28 server (server/discover, a listing
	// kept for an hour), else a 2025-06-18 one (initialize).
	Stateless bool
}

// StartRaw starts a bare Streamable HTTP server (JSON answers) that says
// exactly what rs holds, closed when the test ends. It returns its URL and
// the count of tools/call requests: how often a tool ran.
func StartRaw(t testing.TB, rs RawServer) (url string, calls *atomic.Int32) {
	calls = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if json.Unmarshal(body, &msg) != nil || msg.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		answer := `"error":{"code":-32601,"message":"method not found"}`
		switch {
		case msg.Method == "server/discover" && rs.Stateless:
			answer = `"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case msg.Method == "initialize" && !rs.Stateless:
			answer = `"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case msg.Method == "tools/list" && rs.Stateless:
			answer = `"result":{"resultType":"complete","ttlMs":3600000,"cacheScope":"public","tools":` + rs.Tools + `}`
		case msg.Method == "tools/list":
			answer = `"result":{"tools":` + rs.Tools + `}`
		case msg.Method == "tools/call" && rs.CallResult != "":
			calls.Add(1)
			answer = `"result":` + rs.CallResult
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,`+answer+`}`) //nolint:errcheck // the client reports a short answer
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", calls
}
