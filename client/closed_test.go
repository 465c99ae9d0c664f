package client

import (
	"context"
	"errors"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// TestErrClosedMatchesTransportClose: calls on a closed Conn fail with
// ErrClosed, which also matches jsonrpc.ErrClosed (a transport closed by
// its owner), so a host tests one sentinel; a closed transport is not a
// closed Conn.
func TestErrClosedMatchesTransportClose(t *testing.T) {
	c, _ := openScripted(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	err := c.Ping(context.Background())
	if !errors.Is(err, ErrClosed) || !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed and jsonrpc.ErrClosed", err)
	}
	if errors.Is(jsonrpc.ErrClosed, ErrClosed) {
		t.Error("jsonrpc.ErrClosed matches client.ErrClosed")
	}
	if got := ErrClosed.Error(); got != "anymcp: connection closed" {
		t.Errorf("text %q", got)
	}
}
