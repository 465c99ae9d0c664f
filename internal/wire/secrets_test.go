package wire

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// An error body that echoes the request hides the values of its headers,
// but for the library's own.
func TestHideRequestSecrets(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://h/mcp", nil)
	req.Header.Set("Authorization", "Bearer tok_123456")
	req.Header.Set("X-Api-Key", "key-abcdef")
	req.Header.Set("Mcp-Session-Id", "sess-123456")
	req.Header.Set("X-Short", "yes")
	req.Header.Set("Accept", "application/json, text/event-stream")
	echo := "Authorization: Bearer tok_123456; token tok_123456; X-Api-Key: key-abcdef; session sess-123456; X-Short: yes; Accept: application/json, text/event-stream"
	got := HideRequestSecrets(echo, req)
	for _, secret := range []string{"tok_123456", "key-abcdef", "sess-123456"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q shows %s", got, secret)
		}
	}
	for _, kept := range []string{"X-Short: yes", "Accept: application/json, text/event-stream"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q lost %q", got, kept)
		}
	}

	// Through NewHTTPError: the body and the JSON-RPC error it holds.
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"bad key key-abcdef","data":{"header":"Bearer tok_123456"}}}`
	resp := &http.Response{StatusCode: 401, Body: io.NopCloser(strings.NewReader(body)), Request: req}
	e := NewHTTPError(resp, http.MethodPost, "http://h/mcp")
	if strings.Contains(e.Body, "tok_123456") || strings.Contains(e.Body, "key-abcdef") {
		t.Errorf("Body %q shows a secret", e.Body)
	}
	if e.RPCError == nil || e.RPCError.Code != -32001 || strings.Contains(e.RPCError.Message, "key-abcdef") ||
		strings.Contains(string(e.RPCError.Data), "tok_123456") || !json.Valid(e.RPCError.Data) {
		t.Errorf("RPCError %+v (data %s)", e.RPCError, e.RPCError.Data)
	}
	if strings.Contains(e.Error(), "key-abcdef") {
		t.Errorf("the error shows the key: %v", e)
	}
}
