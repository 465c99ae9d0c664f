package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// An answer whose result is not valid JSON fails its call at once with a
// decoding error, whatever the caller decodes it into (nothing, raw JSON,
// a typed result): the transports leave checking the result to the decode
// that reads it, and a result nothing reads is checked alone. The Conn
// goes on serving calls.
func TestInvalidResultFailsItsCall(t *testing.T) {
	h := testservers.NewStreamableHandler(testservers.HTTPOptions{JSONResponse: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if m, err := jsonrpc.DecodeMessage(body); err == nil && m.Method == "tools/call" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"x"}],"isError":tru}}`, m.ID.Raw())
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := client.Dial(ctx, client.URL(ts.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	params := map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}
	var raw json.RawMessage
	var typed mcp.CallToolResult
	for _, target := range []struct {
		name   string
		result any
	}{{"nothing", nil}, {"raw JSON", &raw}, {"a typed result", &typed}} {
		err := conn.Call(ctx, "tools/call", params, target.result)
		var re *client.ResultError
		if !errors.As(err, &re) || re.Method != "tools/call" || !strings.Contains(err.Error(), "decoding result") || ctx.Err() != nil {
			t.Errorf("decoding into %s: %v, want a *client.ResultError at once", target.name, err)
		}
		if errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Errorf("decoding into %s: %v: the request ran, its outcome is known", target.name, err)
		}
	}
	if _, err := conn.CallTool(ctx, "echo", map[string]any{"text": "x"}); err == nil || !strings.Contains(err.Error(), "decoding result") {
		t.Errorf("CallTool: %v, want a decoding error", err)
	}
	if _, err := conn.ListTools(ctx, ""); err != nil {
		t.Errorf("the Conn after the invalid results: %v", err)
	}
}
