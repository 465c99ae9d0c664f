package scaleout

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Outcome
	}{
		{nil, Succeeded},
		{fmt.Errorf("tools/call: %w", jsonrpc.ErrOutcomeUnknown), MayHaveRun},
		{&client.LostError{Method: "tools/call", Err: errors.New("reset")}, MayHaveRun},
		{&client.TimeoutError{Method: "tools/call", MayHaveRun: true}, MayHaveRun},
		{&client.TimeoutError{Method: "tools/call"}, DidNotRun},
		{&jsonrpc.Error{Code: -32603, Message: "internal"}, DidNotRun},
		{fmt.Errorf("x: %w", client.ErrClosed), DidNotRun},
		{errors.New("something broke"), Untyped},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestHAProxyConfig(t *testing.T) {
	cfg := HAProxyConfig("127.0.0.1:4000", []string{"127.0.0.1:4001", "127.0.0.1:4002"})
	for _, want := range []string{"bind 127.0.0.1:4000", "balance roundrobin", "retry-on conn-failure",
		"server b0 127.0.0.1:4001", "server b1 127.0.0.1:4002", "set-header " + ReplicaHeader + " %[srv_name]",
		"stick on req.hdr(Mcp-Session-Id)", "stick store-response res.hdr(Mcp-Session-Id)", "use_backend bridges_sse if legacy"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
}
