package client_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
)

// TestHeaderMismatchListsAgain: a tool whose parameters go into
// Mcp-Param-* headers (x-mcp-header), called before any listing told the
// Conn so, is refused with -32020 before it runs; the Conn then lists the
// tools and sends the call once more with the headers the listing gives
// (2026-07-28, Streamable HTTP, custom headers: the client SHOULD call
// tools/list and retry), where the call failed with the -32020 and every
// later call to the tool did too until the host listed the tools itself.
// The tool runs once; the next call goes out with its headers at once.
func TestHeaderMismatchListsAgain(t *testing.T) {
	hs := testservers.StartStateless(testservers.HTTPOptions{})
	defer hs.Close()
	c := dialT(t, client.URL(hs.URL))
	args := map[string]any{"region": "eu-west-1", "priority": 3, "query": "SELECT 1"}
	for i := range 2 {
		res, err := c.CallTool(ctxT(t), testservers.HeaderToolName, args)
		if err != nil || res.IsError {
			t.Fatalf("call %d: %+v %v", i+1, res, err)
		}
	}
	st := hs.Server().Stats()
	if st.ToolCalls[testservers.HeaderToolName] != 2 || st.Refused["tools/call"] != 1 || st.Requests["tools/list"] != 1 {
		t.Errorf("tool ran %d times, %d calls refused, %d listings; want 2, 1 (the first call, before the listing), 1",
			st.ToolCalls[testservers.HeaderToolName], st.Refused["tools/call"], st.Requests["tools/list"])
	}
}

// TestHeaderMismatchOnce: a server that refuses a call with -32020 though
// the listing gives the call no other headers is not sent the call again:
// the listing happens once, the refusal reaches the caller.
func TestHeaderMismatchOnce(t *testing.T) {
	h := testservers.NewStreamableHandler(testservers.HTTPOptions{Options: testservers.Options{Eras: testservers.StatelessOnly}})
	defer h.Close()
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if m, err := jsonrpc.DecodeMessage(body); err == nil && m.Method == "tools/call" {
				calls.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"Header mismatch"}}`, m.ID.Raw())
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c := dialT(t, client.URL(ts.URL))
	_, err := c.CallTool(ctxT(t), "echo", map[string]any{"text": "x"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeHeaderMismatch {
		t.Fatalf("err = %v, want the -32020", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("tools/call sent %d times, want once", n)
	}
}
