package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// rawServer is a bare 2025-06-18 Streamable HTTP server (JSON answers)
// that says exactly what a test tells it: tools is the tools/list result's
// "tools" array, result the answer to every tools/call. The testservers
// package builds its answers from typed values and so cannot send a tool
// schema that refers to itself, or a result of the wrong shape. calls
// counts the tools/call requests, that is how often a tool ran.
func rawServer(t *testing.T, tools, result string) (url string, calls *atomic.Int32) {
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
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &msg) != nil || msg.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		answer := `"error":{"code":-32601,"message":"method not found"}`
		switch msg.Method {
		case "initialize":
			answer = `"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			answer = `"result":{"tools":` + tools + `}`
		case "tools/call":
			calls.Add(1)
			answer = `"result":` + result
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,`+answer+`}`) //nolint:errcheck // the client reports a short answer
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", calls
}
