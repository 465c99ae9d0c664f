package fleet

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// rawServer is a bare Streamable HTTP server (JSON answers) whose
// tools/list result carries tools, a JSON array, byte for byte: the
// testservers package builds its answers from typed values, so it cannot
// send members in an order of its own choosing or members mcp.Tool lacks.
// stateless makes it a 2026-07-28 server (server/discover, and a listing
// kept for an hour), else a 2025-06-18 one (initialize).
func rawServer(t testing.TB, stateless bool, tools string) string {
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
		switch {
		case msg.Method == "server/discover" && stateless:
			answer = `"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case msg.Method == "initialize" && !stateless:
			answer = `"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case msg.Method == "tools/list" && stateless:
			answer = `"result":{"resultType":"complete","ttlMs":3600000,"cacheScope":"public","tools":` + tools + `}`
		case msg.Method == "tools/list":
			answer = `"result":{"tools":` + tools + `}`
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,`+answer+`}`) //nolint:errcheck // the client reports a short answer
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// manyTools is a tools array of n tools shaped as real servers list
// theirs: a description, an input schema of a few parameters, all four
// annotations, and a little _meta (about 900 bytes each).
func manyTools(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"read_file_%d","title":"Read file %d","description":"Read the complete contents of a file from the file system. Handles various text encodings and provides detailed error messages if the file cannot be read. Only works within allowed directories.",`+
			`"inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"The file to read"},"tail":{"type":"number","description":"If provided, returns only the last N lines of the file"},"head":{"type":"number","description":"If provided, returns only the first N lines of the file"}},"required":["path"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"},`+
			`"annotations":{"readOnlyHint":true,"idempotentHint":true,"destructiveHint":false,"openWorldHint":false},"_meta":{"vendor/build":"%d","vendor/area":"files"}}`, i, i, i)
	}
	b.WriteByte(']')
	return b.String()
}
