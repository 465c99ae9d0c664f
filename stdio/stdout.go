package stdio

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/anymcp/anymcp/jsonrpc"
)

const (
	// initialLineBuf is the size of the stdout read buffer (at most the
	// line limit + 1); most messages fit. It never grows: a longer line is
	// collected in pooled blocks of this size.
	initialLineBuf = 64 << 10
	// warnExcerpt bounds the part of a skipped line that goes to the log.
	warnExcerpt = 200
)

// A lineBlock holds part of a line longer than the read buffer. Blocks are
// pooled, shared by all transports: a big line is collected without
// regrowing a buffer, and the blocks go back to the pool once the line has
// been assembled, so an idle connection holds none.
type lineBlock [initialLineBuf]byte

var lineBlockPool = sync.Pool{New: func() any { return new(lineBlock) }}

// lineReader splits a stream into '\n'-terminated lines without ever
// holding more than max+1 bytes of one line: a line longer than max is an
// error as soon as max+1 bytes of it have arrived, however long it really is.
//
// Lines are read into one buffer of fixed size. A line that does not fit
// is moved to pooled blocks as the buffer fills, and assembled once, when
// its end arrives, into a slice of its exact size that is the caller's
// (owned): its bytes are copied once, never regrown.
type lineReader struct {
	r   io.Reader
	max int

	buf     []byte
	start   int   // the unconsumed data is buf[start:end]
	end     int   //
	scanned int   // buf[start:scanned] holds no '\n'
	err     error // sticky read error, returned once the data is used up

	head  []*lineBlock // the start of a line longer than buf, in order
	headN int          // bytes in head; the line goes on at buf[start:]
	owned bool         // the line next returned last is the caller's to keep
	// block is buf's memory when buf is a whole block (the line limit
	// allows one): a buffer full of a long line then joins the head as it
	// is, and a pooled block takes its place, so a long line is copied
	// once in all, when it is assembled.
	block *lineBlock
}

// next returns the next line without its '\n'. Unless lr.owned is set, the
// slice is a view of the buffer, valid until the following call; an owned
// line (one that did not fit in the buffer) has its own memory and is never
// touched again. At the end of the stream a last line without '\n' is
// returned as a line, then the read error (io.EOF).
func (lr *lineReader) next() ([]byte, error) {
	lr.owned = false
	if lr.buf == nil {
		if lr.max+1 >= initialLineBuf {
			lr.block = new(lineBlock)
			lr.buf = lr.block[:]
		} else {
			lr.buf = make([]byte, lr.max+1)
		}
	}
	for {
		if i := bytes.IndexByte(lr.buf[lr.scanned:lr.end], '\n'); i >= 0 {
			nl := lr.scanned + i
			line := lr.buf[lr.start:nl]
			lr.start, lr.scanned = nl+1, nl+1
			return lr.whole(line), nil
		}
		lr.scanned = lr.end
		pending := lr.headN + lr.end - lr.start
		if pending > lr.max {
			lr.dropHead()
			return nil, &LineTooLongError{Limit: lr.max}
		}
		if lr.err != nil {
			if pending > 0 {
				line := lr.buf[lr.start:lr.end]
				lr.start, lr.scanned = lr.end, lr.end
				return lr.whole(line), nil
			}
			return nil, lr.err
		}
		lr.makeRoom()
		// Read no more than the line may still take: max+1 bytes of it in
		// all (pending <= max, so there is room for one byte at least).
		room := lr.buf[lr.end:]
		if left := lr.max + 1 - (lr.headN + lr.end - lr.start); left < len(room) {
			room = room[:left]
		}
		n, err := lr.r.Read(room)
		lr.end += n
		if err != nil {
			lr.err = err
		}
	}
}

// whole returns the line whose last part is tail (in the buffer): tail
// itself, or, after a head in blocks, the line assembled into its own slice.
func (lr *lineReader) whole(tail []byte) []byte {
	if lr.headN == 0 {
		return tail
	}
	line := make([]byte, lr.headN+len(tail))
	off := 0
	for _, b := range lr.head {
		off += copy(line[off:lr.headN], b[:])
	}
	copy(line[off:], tail)
	lr.dropHead()
	lr.owned = true
	return line
}

// dropHead gives the blocks of the line's head back to the pool.
func (lr *lineReader) dropHead() {
	for i, b := range lr.head {
		lineBlockPool.Put(b)
		lr.head[i] = nil
	}
	lr.head, lr.headN = lr.head[:0], 0
}

// makeRoom ensures buf has free space after end: by moving the pending
// bytes to the front when the line started after it, else (the line fills
// the buffer) by moving them to the line's head in blocks.
func (lr *lineReader) makeRoom() {
	pending := lr.end - lr.start
	switch {
	case pending == 0:
		lr.start, lr.end, lr.scanned = 0, 0, 0
		return
	case lr.end < len(lr.buf):
		return
	case lr.start > 0:
		copy(lr.buf, lr.buf[lr.start:lr.end])
	case lr.block != nil && lr.headN%len(lineBlock{}) == 0:
		// The buffer is all line: it joins the head as it is.
		lr.head = append(lr.head, lr.block)
		lr.headN += len(lr.buf)
		lr.block = lineBlockPool.Get().(*lineBlock)
		lr.buf = lr.block[:]
		pending = 0
	default:
		for p := lr.buf[lr.start:lr.end]; len(p) > 0; {
			if lr.headN == len(lr.head)*len(lineBlock{}) {
				lr.head = append(lr.head, lineBlockPool.Get().(*lineBlock))
			}
			n := copy(lr.head[len(lr.head)-1][lr.headN%len(lineBlock{}):], p)
			lr.headN += n
			p = p[n:]
		}
		pending = 0
	}
	lr.start, lr.end, lr.scanned = 0, pending, pending
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
		if !lr.owned {
			line = bytes.Clone(line) // the buffer is reused; the messages keep their own copy
		}
		msgs, err := jsonrpc.DecodeOwned(line) // line is not written to again
		if err != nil {
			t.log.Warn("stdio: skipped stdout line that is not JSON-RPC",
				slog.String("error", excerpt(err.Error())), slog.String("line", excerpt(string(line[:min(len(line), warnExcerpt+utf8.UTFMax)]))))
		}
		if f := t.sh.answered; f != nil {
			for _, m := range msgs {
				if !(m.IsResponse() && f(t, m.ID)) && !t.useful.Load() {
					t.useful.Store(true)
				}
			}
		}
		if len(msgs) == 0 || len(msgs) == 1 && t.handOver(msgs[0]) || !t.reserve(len(line)) {
			continue
		}
		for i, m := range msgs {
			q := queued{m: m}
			if i == len(msgs)-1 {
				q.size = len(line) // the line's bytes are freed with its last message
			}
			if !t.deliver(q) {
				break
			}
		}
	}
}

// handOver gives m, a response, straight to the protocol layer's take
// function (jsonrpc.AnswerTaker) when Recv waits with every message queued
// before it received: nothing is overtaken, and the answer skips the queue
// and the read loop. It reports whether m was taken.
func (t *Transport) handOver(m *jsonrpc.Message) bool {
	return m.IsResponse() && t.waitingAt.Load() == t.sent.Load() && t.sh.take.Offer(m)
}

// queued is a message waiting for Recv, with the bytes it frees once
// received.
type queued struct {
	m    *jsonrpc.Message
	size int
}

// reserve counts n more bytes as queued, first waiting while queueBytes are
// (a line of any size goes into an empty queue); it gives up, reporting
// false, when the transport is closed. Only the stdout goroutine calls it.
func (t *Transport) reserve(n int) bool {
	for {
		if cur := t.queuedBytes.Load(); cur == 0 || cur+int64(n) <= queueBytes {
			t.queuedBytes.Add(int64(n))
			return true
		}
		select {
		case <-t.room:
		case <-t.closeCh:
			return false
		}
	}
}

// release counts n bytes as no longer queued, and wakes reserve.
func (t *Transport) release(n int) {
	if n == 0 {
		return
	}
	t.queuedBytes.Add(-int64(n))
	select {
	case t.room <- struct{}{}:
	default:
	}
}

// deliver queues q for Recv. It waits while the queue is full, and gives up
// (reporting false) when the transport is closed.
func (t *Transport) deliver(q queued) bool {
	t.sent.Add(1) // first: Recv may take it at once
	select {
	case t.msgs <- q:
		return true
	default:
	}
	select {
	case t.msgs <- q:
		return true
	case <-t.closeCh:
		t.sent.Add(-1)
		return false
	}
}

// readError wraps a failure to read the server's stdout.
type readError struct{ err error }

func (e *readError) Error() string { return "stdio transport: reading server stdout: " + e.err.Error() }
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
