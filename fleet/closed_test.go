package fleet

import (
	"errors"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
)

// TestErrClosedMatchesEveryClose: a fleet's calls after Close fail with
// ErrClosed, which also matches client.ErrClosed and jsonrpc.ErrClosed, so
// a host tests one sentinel for any close it made; the match goes one way
// only (a closed transport is not a closed fleet).
func TestErrClosedMatchesEveryClose(t *testing.T) {
	f, err := New([]Server{{Name: "never", Target: client.URL("http://127.0.0.1:1/mcp")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, errTools := f.Tools(ctxT(t))
	_, errCall := f.CallTool(ctxT(t), "never__x", nil)
	for name, err := range map[string]error{"Tools": errTools, "CallTool": errCall} {
		for _, target := range []error{ErrClosed, client.ErrClosed, jsonrpc.ErrClosed} {
			if !errors.Is(err, target) {
				t.Errorf("%s after Close: %v does not match %q", name, err, target)
			}
		}
	}
	if err := ErrClosed.Error(); err != "fleet closed" {
		t.Errorf("text %q", err)
	}
	for _, tc := range []struct{ err, target error }{
		{jsonrpc.ErrClosed, client.ErrClosed}, {jsonrpc.ErrClosed, ErrClosed}, {client.ErrClosed, ErrClosed},
	} {
		if errors.Is(tc.err, tc.target) {
			t.Errorf("%q matches %q", tc.err, tc.target)
		}
	}
}
