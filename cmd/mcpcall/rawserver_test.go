package main

import (
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/internal/testkit"
)

// rawServer is a bare 2025-06-18 Streamable HTTP server that says exactly
// what a test tells it (testkit.StartRaw): tools is the tools/list
// result's "tools" array, result the answer to every tools/call; calls
// counts the tools/call requests, that is how often a tool ran.
func rawServer(t *testing.T, tools, result string) (url string, calls *atomic.Int32) {
	return testkit.StartRaw(t, testkit.RawServer{Tools: tools, CallResult: result})
}
