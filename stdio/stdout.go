package stdio

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"unicode/utf8"

	"github.com/anymcp/anymcp/jsonrpc"
)

const (
	// initialLineBuf is the size the stdout buffer starts at and shrinks
	// back to; most messages fit.
	initialLineBuf = 64 << 10
	// keepLineBuf is the largest buffer kept after a long line has been
	// consumed; a bigger one is dropped so an idle connection does not
	// hold a past 16 MiB result.
	keepLineBuf = 1 << 20
	// warnExcerpt bounds the part of a skipped line that goes to the log.
	warnExcerpt = 200
)

// lineReader splits a stream into '\n'-terminated lines without ever
// holding more than max+1 bytes: a line longer than max is an error as
// soon as max+1 bytes of it have arrived, however long it really is.
type lineReader struct {
	r   io.Reader
	max int

	buf     []byte
	start   int   // the unconsumed data is buf[start:end]
	end     int   //
	scanned int   // buf[start:scanned] holds no '\n'
	err     error // sticky read error, returned once the data is used up
}

// next returns the next line without its '\n'. The slice is valid until the
// following call. At the end of the stream a last line without '\n' is
// returned as a line, then the read error (io.EOF).
func (lr *lineReader) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.scanned:lr.end], '\n'); i >= 0 {
			nl := lr.scanned + i
			line := lr.buf[lr.start:nl]
			lr.start, lr.scanned = nl+1, nl+1
			return line, nil
		}
		lr.scanned = lr.end
		pending := lr.end - lr.start
		if pending > lr.max {
			return nil, &LineTooLongError{Limit: lr.max}
		}
		if lr.err != nil {
			if pending > 0 {
				line := lr.buf[lr.start:lr.end]
				lr.start, lr.scanned = lr.end, lr.end
				return line, nil
			}
			return nil, lr.err
		}
		lr.makeRoom()
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if err != nil {
			lr.err = err
		}
	}
}

// makeRoom ensures buf has free space after end, by moving the pending
// bytes to the front or by growing buf, never beyond max+1 bytes.
func (lr *lineReader) makeRoom() {
	pending := lr.end - lr.start
	if pending == 0 {
		lr.start, lr.end, lr.scanned = 0, 0, 0
		if lr.buf == nil || len(lr.buf) > keepLineBuf {
			lr.buf = make([]byte, min(initialLineBuf, lr.max+1))
		}
		return
	}
	if lr.end < len(lr.buf) {
		return
	}
	if lr.start > 0 && pending <= len(lr.buf)/2 {
		copy(lr.buf, lr.buf[lr.start:lr.end])
	} else {
		// pending <= max here, so len(buf) <= max and there is room to grow.
		nb := make([]byte, min(max(2*len(lr.buf), initialLineBuf), lr.max+1))
		copy(nb, lr.buf[lr.start:lr.end])
		lr.buf = nb
	}
	lr.scanned -= lr.start
	lr.start, lr.end = 0, pending
}

// seqReader counts the Read calls in progress, so the shutdown can tell a
// Read that has been waiting for a long time from a reader busy elsewhere:
// seq is odd while a Read is in progress.
type seqReader struct {
	f   *os.File
	seq *atomic.Uint64
}

func (r seqReader) Read(p []byte) (int, error) {
	r.seq.Add(1)
	n, err := r.f.Read(p)
	r.seq.Add(1)
	return n, err
}

// readStdout is the stdout goroutine: it splits stdout into lines, decodes
// them and queues the messages for Recv, in order.
func (t *Transport) readStdout() {
	defer close(t.stdoutDone) // the supervisor closes the file
	lr := lineReader{r: seqReader{t.stdout, &t.outSeq}, max: t.maxLine}
	for {
		line, err := lr.next()
		if err != nil {
			var tooLong *LineTooLongError
			switch {
			case errors.As(err, &tooLong):
				t.readErr = err
				t.log.Warn("stdio: server wrote an oversize stdout line; stopping it", slog.Int("limit", t.maxLine))
			case err == io.EOF, errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, os.ErrClosed):
				// The end of stdout, or the shutdown gave up waiting for it.
			default:
				t.readErr = &readError{err}
			}
			return
		}
		if t.closed.Load() {
			continue // keep draining so the server can finish, but deliver nothing
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		msgs, err := jsonrpc.Decode(line)
		if err != nil {
			t.log.Warn("stdio: skipped stdout line that is not JSON-RPC",
				slog.String("error", excerpt(err.Error())), slog.String("line", excerpt(string(line))))
		}
		if len(msgs) > 0 && !t.heard.Load() {
			t.heard.Store(true)
		}
		for _, m := range msgs {
			if !t.deliver(m) {
				break
			}
		}
	}
}

// deliver queues m for Recv. It waits while the queue is full, and gives up
// (reporting false) when the transport is closed.
func (t *Transport) deliver(m *jsonrpc.Message) bool {
	select {
	case t.msgs <- m:
		return true
	default:
	}
	select {
	case t.msgs <- m:
		return true
	case <-t.closeCh:
		return false
	}
}

// readError wraps a failure to read the server's stdout.
type readError struct{ err error }

func (e *readError) Error() string { return "stdio: reading server stdout: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// excerpt bounds s for a log record, cutting at a rune boundary.
func excerpt(s string) string {
	if len(s) <= warnExcerpt {
		return s
	}
	i := warnExcerpt
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
