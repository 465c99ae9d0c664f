package testkit

import (
	"bufio"
	"context"
	"io"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// ServeOverPipes runs serve (a ServeStdio of a bridge or a gateway) over
// pipes, as a process's stdin and stdout, and returns a client's
// transport to it and serve's result, sent once serve returns. Closing
// the transport is the client's EOF; the test's cleanup closes both
// pipes and waits for serve to return.
func ServeOverPipes(t testing.TB, serve func(ctx context.Context, r io.Reader, w io.Writer) error) (*Pipe, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		err := serve(context.Background(), inR, outW)
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		<-finished
		inR.Close()
	})
	return NewPipe(inW, outR), done
}

// Pipe is a client's end of newline-delimited JSON-RPC over pipes: a
// jsonrpc.Transport, whose In and Out a test may also write and read
// raw (not while the transport is in use).
type Pipe struct {
	In  *io.PipeWriter // the server's stdin
	Out *bufio.Reader  // the server's stdout
	rc  *io.PipeReader
	mu  sync.Mutex
	one sync.Once
}

var _ jsonrpc.Transport = (*Pipe)(nil)

// NewPipe is the client's end of a server that reads in's other end and
// writes out's.
func NewPipe(in *io.PipeWriter, out *io.PipeReader) *Pipe {
	return &Pipe{In: in, Out: bufio.NewReader(out), rc: out}
}

// Send writes m and a newline to In.
func (p *Pipe) Send(_ context.Context, m *jsonrpc.Message) error {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err = p.In.Write(append(b, '\n'))
	return err
}

// Recv reads a line of Out; jsonrpc.ErrClosed once Out has ended.
func (p *Pipe) Recv() (*jsonrpc.Message, error) {
	line, err := p.Out.ReadBytes('\n')
	if err != nil {
		return nil, jsonrpc.ErrClosed
	}
	return jsonrpc.DecodeMessage(line)
}

// Close closes In (the server's EOF) and Out.
func (p *Pipe) Close() error {
	p.one.Do(func() {
		p.In.Close()
		p.rc.Close()
	})
	return nil
}
