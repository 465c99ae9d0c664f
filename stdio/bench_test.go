//go:build linux

package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// benchRequest is a typical small tools/call.
var benchRequest = &jsonrpc.Message{
	ID:     jsonrpc.Int(42),
	Method: "tools/call",
	Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hello, world","count":3}}`),
}

// BenchmarkRoundTrip sends a request through the transport to the echo
// server and receives the response, one at a time.
func BenchmarkRoundTrip(b *testing.B) {
	tr := start(b, fakeCommand(b, modeEcho))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := tr.Send(ctx, benchRequest); err != nil {
			b.Fatal(err)
		}
		if _, err := tr.Recv(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawPipe is the floor for BenchmarkRoundTrip: the same request
// bytes written to the same echo server over a bare pipe, and the response
// line read back, with no transport and no decoding.
func BenchmarkRawPipe(b *testing.B) {
	cmd := fakeCommand(b, modeEcho)
	c := exec.Command(cmd.Path)
	c.Env = cmd.Env
	stdin, err := c.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		c.Wait()
	})
	line, err := jsonrpc.Encode(benchRequest)
	if err != nil {
		b.Fatal(err)
	}
	line = append(line, '\n')
	r := bufio.NewReaderSize(stdout, 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stdin.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
