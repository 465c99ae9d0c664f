package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"
)

// DefaultMaxEventSize is the event-size limit used when none is given: 64 MiB.
const DefaultMaxEventSize = 64 << 20

// blockSize is the size of the blocks a Reader reads into and collects the
// data of an event in: the chunks it asks its source for.
const blockSize = 32 << 10

// smallRead is the size of the buffer an idle Reader waits in.
const smallRead = 512

// keepScratchLimit is the largest line buffer a Reader keeps for reuse after
// a line; a bigger one is dropped, so that one huge line does not pin its
// memory for the life of the stream.
const keepScratchLimit = 64 << 10

// A block is a read buffer or a piece of an event's data. Blocks are pooled
// and shared by all Readers, so that a stream costs no buffer allocation of
// its own (every POST answered with SSE opens one) and a big event is
// collected without doubling and copying a buffer again and again. No
// block is ever seen outside the Reader: events get their own copy.
type block [blockSize]byte

var (
	blockPool = sync.Pool{New: func() any { return new(block) }}
	smallPool = sync.Pool{New: func() any { return new([smallRead]byte) }}
)

func getBlock() *block  { return blockPool.Get().(*block) }
func putBlock(b *block) { blockPool.Put(b) }

// maxEmptyReads is how many consecutive (0, nil) reads a Reader tolerates
// before it gives up with io.ErrNoProgress.
const maxEmptyReads = 100

// Event is one dispatched event.
type Event struct {
	Type string // the event type; "message" when the stream named none
	Data []byte // the data buffer (lines joined with "\n"); allocated for this event alone, to its exact size, and owned by the caller
	ID   string // the last event ID in force when this event was dispatched
}

// ErrEventTooLarge is matched (errors.Is) by the error Next returns when an
// event or a line exceeds the size limit. The concrete error is an
// *EventTooLargeError, which carries the limit.
var ErrEventTooLarge = errors.New("SSE event too large")

// EventTooLargeError is the error Next returns when the event being read (its
// data so far plus the line being read) grows beyond the Reader's limit. It
// matches ErrEventTooLarge with errors.Is.
type EventTooLargeError struct {
	Limit int // the limit in bytes that was exceeded
}

// Error describes the error and names the limit.
func (e *EventTooLargeError) Error() string {
	return fmt.Sprintf("SSE event too large: exceeds the limit of %d bytes", e.Limit)
}

// Is reports whether target is ErrEventTooLarge.
func (e *EventTooLargeError) Is(target error) bool { return target == ErrEventTooLarge }

// States of the line being read when it does not fit in the read buffer.
const (
	lineNone    = iota // no partial line
	linePending        // raw bytes collected in r.line (field unknown, or event/id/retry)
	lineData           // a data field: the value streams straight into the data blocks
	lineSkip           // a comment or an ignored field: bytes are only counted
)

var bom = []byte{0xEF, 0xBB, 0xBF}

// Reader parses a text/event-stream into events. Create one with NewReader;
// a Reader is not safe for concurrent use.
type Reader struct {
	src io.Reader
	max int

	rblock *block // the pooled read buffer, nil while nothing is unread (idle)
	buf    []byte // rblock[:] or small[:]; unread bytes are buf[rpos:wpos]
	// small is where a Reader with nothing unread waits for the next
	// bytes (pooled too): an idle stream holds no block, and takes one only
	// when more bytes arrive than small holds.
	small  *[smallRead]byte
	rpos   int
	wpos   int
	lfPos  int // first '\n' at or after the last search start, or wpos when none
	crPos  int // first '\r' at or after the last search start, or a bound (lfPos) before which there is none
	rerr   error
	err    error // sticky error returned by Next
	empty  int   // consecutive empty reads
	begun  bool  // the byte order mark check has been done
	sawCR  bool  // the previous line ended with '\r' at the very end of the buffer
	lstate int   // lineNone, linePending, lineData or lineSkip
	known  bool  // linePending: the field name is known (event, id or retry)
	space  bool  // lineData: a leading space may still have to be removed
	lnSize int   // lineSkip: raw bytes of the line seen so far

	line    []byte   // linePending: the raw line so far
	blocks  []*block // the event's data, lines joined by '\n', without a trailing '\n'; none between events
	dlen    int      // bytes of data in blocks, filled in order
	hasData bool     // at least one data field was seen for this event
	blocks0 [1]*block

	typ       string // event type buffer
	typCache  string // the last event type string allocated, reused when it repeats
	lastID    string // the last event ID buffer
	endedID   string // the last event ID string: lastID at the last blank line
	retry     time.Duration
	haveRetry bool
}

// NewReader returns a Reader that reads events from r. maxEventSize bounds the
// memory one event may take: the data of the event plus the line being read
// must not exceed it, or Next fails with an error matching ErrEventTooLarge.
// maxEventSize <= 0 means DefaultMaxEventSize.
func NewReader(r io.Reader, maxEventSize int) *Reader {
	if maxEventSize <= 0 {
		maxEventSize = DefaultMaxEventSize
	}
	rd := &Reader{src: r, max: maxEventSize, lfPos: -1, crPos: -1}
	rd.blocks = rd.blocks0[:0]
	return rd
}

// errReleased is what Next returns after Release.
var errReleased = errors.New("SSE reader: Next after Release")

// Release gives the Reader's buffers back for other Readers to use. Call it
// once the stream is no longer read (a Reader releases them by itself when
// Next returns an error, io.EOF included); a Reader that is simply dropped
// leaves them to the garbage collector. After Release, Next returns an
// error; LastEventID and Retry still report the stream's cursor. Events
// already returned are not affected: their Data never shares memory with
// the Reader's buffers. Release must not be called concurrently with Next.
func (r *Reader) Release() {
	if r.err == nil {
		r.err = errReleased
	}
	r.releaseBuffers()
}

// releaseBuffers puts the read buffer and the data blocks back in the pool.
func (r *Reader) releaseBuffers() {
	if r.rblock != nil {
		putBlock(r.rblock)
		r.rblock = nil
	}
	if r.small != nil {
		smallPool.Put(r.small)
		r.small = nil
	}
	r.buf = nil
	for i, b := range r.blocks {
		putBlock(b)
		r.blocks[i] = nil
	}
	r.blocks, r.dlen = r.blocks[:0], 0
	r.line = nil
	r.rpos, r.wpos = 0, 0
}

// LastEventID returns the last event ID buffer. Every valid "id" field updates
// it, including those of events that are never dispatched (such as a priming
// event that carries an id and empty data) and that of an event the stream
// ended in the middle of; it is not reset when an event is dispatched. To
// resume a stream, use ResumeID.
func (r *Reader) LastEventID() string { return r.lastID }

// ResumeID returns the last event ID string, as an EventSource keeps it and
// sends in Last-Event-ID when it reconnects: the last event ID buffer as it
// stood at the last blank line, the end of an event. An event without data
// (a priming event) counts, since its blank line ends it; an id field of an
// event the stream stopped in the middle of does not, cleanly or not:
// resuming after that id would skip the event, which was never received.
func (r *Reader) ResumeID() string { return r.endedID }

// Retry returns the reconnection time of the last valid "retry" field (a value
// of ASCII digits only, in milliseconds) and whether one has been seen. A value
// too large for a time.Duration is clamped to the largest one.
func (r *Reader) Retry() (time.Duration, bool) { return r.retry, r.haveRetry }

// Next returns the next dispatched event. It returns io.EOF when the stream
// ends; an event not terminated by a blank line before the end is discarded,
// as the WHATWG rules require. Errors from the underlying reader other than
// io.EOF are returned as they are. Once Next has returned an error it returns
// the same error on every later call.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for {
		if !r.begun {
			if r.wpos-r.rpos < len(bom) && r.rerr == nil {
				r.fill()
				continue
			}
			if bytes.HasPrefix(r.buf[r.rpos:r.wpos], bom) {
				r.rpos += len(bom)
			}
			r.begun = true
		}
		if r.rpos == r.wpos {
			if r.rerr != nil {
				return Event{}, r.fail(r.rerr)
			}
			r.fill()
			continue
		}
		if r.sawCR {
			r.sawCR = false
			if r.buf[r.rpos] == '\n' {
				r.rpos++
				continue
			}
		}
		end := r.lineEnd()
		if end < 0 {
			// No line ending in the buffer: keep what we have of the line
			// and read more.
			if err := r.feed(r.buf[r.rpos:r.wpos]); err != nil {
				return Event{}, r.fail(err)
			}
			r.rpos = r.wpos
			continue
		}
		line := r.buf[r.rpos:end]
		r.rpos = end + 1
		if r.buf[end] == '\r' {
			if r.rpos < r.wpos {
				if r.buf[r.rpos] == '\n' {
					r.rpos++
				}
			} else {
				r.sawCR = true
			}
		}
		var err error
		switch {
		case r.lstate != lineNone:
			err = r.finish(line)
		case len(line) == 0:
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
		default:
			err = r.processLine(line)
		}
		if err != nil {
			return Event{}, r.fail(err)
		}
	}
}

// fill reads more input into the buffer. It must only be called when the
// buffer is empty or, before the byte order mark check, not yet full.
func (r *Reader) fill() {
	if r.rpos == r.wpos && r.rblock != nil && r.lstate != lineNone {
		// Nothing unread, in the middle of a line longer than the reads so
		// far: the rest of it is on its way, so read on in the block — a
		// large event is read up to a block at a time, not a small buffer
		// at a time. (A stream that stops in the middle of a line holds
		// its block until the line ends.)
		r.rpos, r.wpos = 0, 0
	} else if r.rpos == r.wpos {
		// Nothing unread: give the block back and wait for bytes in the
		// small buffer, so that a quiet stream holds no block.
		r.rpos, r.wpos = 0, 0
		if r.rblock != nil {
			putBlock(r.rblock)
			r.rblock = nil
		}
		if r.small == nil {
			r.small = smallPool.Get().(*[smallRead]byte)
		}
		r.buf = r.small[:]
	} else if r.rblock == nil {
		// Unread bytes in the small buffer and more to come: move them
		// into a block and read on there.
		b := getBlock()
		r.wpos = copy(b[:], r.buf[r.rpos:r.wpos])
		r.rpos = 0
		r.rblock, r.buf = b, b[:]
	}
	r.lfPos, r.crPos = -1, -1
	n, err := r.src.Read(r.buf[r.wpos:])
	if n < 0 || n > len(r.buf)-r.wpos {
		r.rerr = errors.New("SSE stream: the underlying reader returned an invalid byte count")
		return
	}
	r.wpos += n
	if r.rblock == nil && n == len(r.small) {
		// A full small read: more is likely waiting; read on in a block.
		b := getBlock()
		r.wpos = copy(b[:], r.buf[:r.wpos])
		r.rblock, r.buf = b, b[:]
	}
	switch {
	case err != nil:
		r.rerr = err
	case n == 0:
		r.empty++
		if r.empty >= maxEmptyReads {
			r.rerr = io.ErrNoProgress
		}
	default:
		r.empty = 0
	}
}

// lineEnd returns the buffer index of the first '\r' or '\n' in the unread
// bytes, or -1 if there is none. Earlier search results are remembered, so a
// buffer is never scanned more than once for each byte value, whatever the
// mix of line endings.
func (r *Reader) lineEnd() int {
	if r.lfPos < r.rpos {
		if i := bytes.IndexByte(r.buf[r.rpos:r.wpos], '\n'); i >= 0 {
			r.lfPos = r.rpos + i
		} else {
			r.lfPos = r.wpos
		}
	}
	if r.crPos < r.rpos {
		if i := bytes.IndexByte(r.buf[r.rpos:r.lfPos], '\r'); i >= 0 {
			r.crPos = r.rpos + i
		} else {
			r.crPos = r.lfPos
		}
	}
	end := min(r.lfPos, r.crPos)
	if end >= r.wpos {
		return -1
	}
	return end
}

// fail records err as the sticky error and releases the buffers.
func (r *Reader) fail(err error) error {
	r.err = err
	r.releaseBuffers()
	return err
}

// tooLarge returns the error for an event that outgrew the limit.
func (r *Reader) tooLarge() error { return &EventTooLargeError{Limit: r.max} }

// feed takes the bytes of a line whose end has not been read yet.
func (r *Reader) feed(chunk []byte) error {
	switch r.lstate {
	case lineNone:
		r.line = r.line[:0]
		r.known = false
		if chunk[0] == ':' { // a comment
			r.lstate, r.lnSize = lineSkip, 0
			return r.feedSkip(chunk)
		}
		r.lstate = linePending
		return r.feedPending(chunk)
	case linePending:
		return r.feedPending(chunk)
	case lineData:
		return r.feedData(chunk)
	default:
		return r.feedSkip(chunk)
	}
}

// feedPending collects a line whose field is not known yet or whose value is
// needed whole (event, id, retry). As soon as the field name is complete, a
// data field switches to streaming and an ignored field to counting.
func (r *Reader) feedPending(chunk []byte) error {
	if r.dlen+len(r.line)+len(chunk) > r.max {
		return r.tooLarge()
	}
	if r.known {
		r.line = append(r.line, chunk...)
		return nil
	}
	c := bytes.IndexByte(chunk, ':')
	if c < 0 {
		r.line = append(r.line, chunk...)
		return nil
	}
	r.line = append(r.line, chunk[:c]...)
	rest := chunk[c+1:]
	switch string(r.line) {
	case "data":
		r.lstate = lineData
		r.space = true
		if err := r.startData(); err != nil {
			return err
		}
		return r.feedData(rest)
	case "event", "id", "retry":
		r.known = true
		r.line = append(r.line, ':')
		r.line = append(r.line, rest...)
		return nil
	default:
		r.lstate, r.lnSize = lineSkip, len(r.line)
		return r.feedSkip(chunk[c:])
	}
}

// feedSkip counts the bytes of a line that is ignored.
func (r *Reader) feedSkip(chunk []byte) error {
	r.lnSize += len(chunk)
	if r.dlen+r.lnSize > r.max {
		return r.tooLarge()
	}
	return nil
}

// startData begins a new line of the data buffer.
func (r *Reader) startData() error {
	if r.hasData {
		if r.dlen+1 > r.max {
			return r.tooLarge()
		}
		r.appendData([]byte{'\n'})
	}
	r.hasData = true
	return nil
}

// feedData appends part of a data value to the data buffer.
func (r *Reader) feedData(chunk []byte) error {
	if r.space && len(chunk) > 0 {
		r.space = false
		if chunk[0] == ' ' {
			chunk = chunk[1:]
		}
	}
	if r.dlen+len(chunk) > r.max {
		return r.tooLarge()
	}
	r.appendData(chunk)
	return nil
}

// finish takes the last bytes of a line that began in an earlier read and
// processes the line.
func (r *Reader) finish(tail []byte) error {
	state := r.lstate
	r.lstate = lineNone
	switch state {
	case linePending:
		if r.dlen+len(r.line)+len(tail) > r.max {
			return r.tooLarge()
		}
		r.line = append(r.line, tail...)
		err := r.processLine(r.line)
		if cap(r.line) > keepScratchLimit {
			r.line = nil
		}
		return err
	case lineData:
		return r.feedData(tail)
	default:
		return r.feedSkip(tail)
	}
}

// processLine interprets one complete, non-empty line.
func (r *Reader) processLine(line []byte) error {
	if line[0] == ':' { // a comment
		if r.dlen+len(line) > r.max {
			return r.tooLarge()
		}
		return nil
	}
	name, value := line, []byte(nil)
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		name, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	if string(name) == "data" {
		if err := r.startData(); err != nil {
			return err
		}
		r.space = false
		return r.feedData(value)
	}
	if r.dlen+len(line) > r.max {
		return r.tooLarge()
	}
	switch string(name) {
	case "event":
		switch {
		case len(value) == 0:
			r.typ = ""
		case string(value) == r.typCache:
			r.typ = r.typCache
		default:
			r.typCache = string(value)
			r.typ = r.typCache
		}
	case "id":
		if bytes.IndexByte(value, 0) < 0 && string(value) != r.lastID {
			r.lastID = string(value)
		}
	case "retry":
		if d, ok := parseRetry(value); ok {
			r.retry, r.haveRetry = d, true
		}
	}
	return nil
}

// parseRetry interprets a retry value: one or more ASCII digits, a number of
// milliseconds. Values beyond the range of time.Duration are clamped.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	const maxMillis = math.MaxInt64 / int64(time.Millisecond)
	var ms int64
	clamped := false
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if !clamped {
			ms = ms*10 + int64(c-'0')
			if ms > maxMillis {
				clamped = true
			}
		}
	}
	if clamped {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(ms) * time.Millisecond, true
}

// appendData appends p to the event's data, taking blocks as needed.
func (r *Reader) appendData(p []byte) {
	for len(p) > 0 {
		if r.dlen == len(r.blocks)*blockSize {
			r.blocks = append(r.blocks, getBlock())
		}
		n := copy(r.blocks[len(r.blocks)-1][r.dlen%blockSize:], p)
		r.dlen += n
		p = p[n:]
	}
}

// dispatch handles a blank line: it returns the event if the data buffer is
// not empty and resets the per-event buffers either way.
func (r *Reader) dispatch() (Event, bool) {
	r.endedID = r.lastID
	typ := r.typ
	r.typ = ""
	if !r.hasData {
		return Event{}, false
	}
	r.hasData = false
	// The event's own copy, of its exact size; the blocks go back to
	// the pool.
	data := make([]byte, r.dlen)
	off := 0
	for i, b := range r.blocks {
		off += copy(data[off:], b[:])
		putBlock(b)
		r.blocks[i] = nil
	}
	r.blocks, r.dlen = r.blocks[:0], 0
	if typ == "" {
		typ = "message"
	}
	return Event{Type: typ, Data: data, ID: r.lastID}, true
}
