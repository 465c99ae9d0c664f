package bridge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
)

// ErrSlowClient ends ServeStdio when the client left QueueLen messages
// unread: it is cut off rather than buffered for.
var ErrSlowClient = errors.New("the client did not read what the bridge sent it")

// ServeStdio serves one client over r and w (newline-delimited JSON-RPC,
// either era) until r ends, ctx is done or the client falls QueueLen
// messages behind. It returns nil when r ends.
//
// When r ends, nothing more is read and the requests already read are
// finished: their answers are written before ServeStdio returns (so
// `printf … | mcpcall bridge URL` gets every answer), for at most
// Options.EOFGrace (1.5 s by default, under the 2 s stdio clients wait
// after closing stdin before SIGTERM). A request still running then is
// cancelled upstream and answered with an error that says the bridge
// stopped it at the end of its input and that it may have run. Listens
// end at once. With nothing in flight, ServeStdio returns at once.
func (b *Bridge) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := newQueueSink(b.o.QueueLen)
	ch := newChannel(ctx, b, out, client.TransportStdio)
	writeErr := make(chan error, 1)
	go func() { writeErr <- writeLines(ctx, w, out) }()

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() { readErr <- readLines(ctx, r, b.o.MaxBodyBytes, lines) }()

	var err error
	ended := false      // r ended: the requests already read are finished first
	writerDone := false // writeErr was received
loop:
	for {
		select {
		case line := <-lines:
			msg, derr := jsonrpc.DecodeMessage(line)
			if derr != nil {
				out.send(&jsonrpc.Message{Error: jsonrpc.NewError(jsonrpc.CodeParseError, "a line is not one JSON-RPC message")})
				continue
			}
			ch.dispatch(msg, client.TraceContext{})
		case err = <-readErr:
			ended = true
			break loop
		case <-out.gone:
			err = ErrSlowClient
			break loop
		case err = <-writeErr:
			writerDone = true
			break loop
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		case <-b.ctx.Done():
			err = errClosed
			break loop
		}
	}
	if ended {
		idle := ch.inputEnded()
		grace := time.NewTimer(b.o.EOFGrace)
		select {
		case <-idle:
		case <-grace.C:
			ch.stop(errInputEnded)
			select { // each ends at once, its upstream call cancelled before ch.end closes the session
			case <-idle:
			case <-ctx.Done():
			case <-b.ctx.Done():
			}
		case <-out.gone:
			err = ErrSlowClient
		case err = <-writeErr:
			writerDone = true
		case <-ctx.Done():
			err = ctx.Err()
		case <-b.ctx.Done():
			err = errClosed
		}
		grace.Stop()
	}
	ch.end()
	cancel()
	out.cut()
	if !writerDone && !errors.Is(err, ErrSlowClient) {
		<-writeErr // a writer blocked on a client that does not read ends when w fails
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	// The reader may be blocked in r.Read; it ends when r does (the
	// process's stdin closes at exit), and sends nowhere after cancel.
	return err
}

// readLines sends each line of r (without its newline) until r ends; a
// line longer than max is an error.
func readLines(ctx context.Context, r io.Reader, max int64, lines chan<- []byte) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for {
		part, isPrefix, err := br.ReadLine()
		if err != nil {
			return err
		}
		buf = append(buf, part...)
		if int64(len(buf)) > max {
			return fmt.Errorf("a message longer than %d bytes", max)
		}
		if isPrefix {
			continue
		}
		line := bytes.TrimSpace(buf)
		buf = nil
		if len(line) == 0 {
			continue
		}
		select {
		case lines <- append([]byte(nil), line...):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// writeLines writes each queued message as one line until ctx ends and
// the queue is drained, or the sink is cut.
func writeLines(ctx context.Context, w io.Writer, out *queueSink) error {
	write := func(m *jsonrpc.Message) error {
		b, err := jsonrpc.Encode(m)
		if err != nil {
			return nil
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	for {
		select {
		case m := <-out.q:
			if err := write(m); err != nil {
				return err
			}
		case <-ctx.Done():
			for {
				select {
				case m := <-out.q:
					if err := write(m); err != nil {
						return err
					}
				default:
					return nil
				}
			}
		}
	}
}
