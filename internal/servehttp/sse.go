package servehttp

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The SSE writer: every id:, event:, data: and retry: line a server of
// this module sends is written here. Each function writes whole events
// with one Write and does not flush (Flush does).

// ErrEventField: an event id or name holds CR, LF or NUL, which no SSE
// field may carry.
var ErrEventField = errors.New("an SSE id or event name holds CR, LF or NUL")

// StartStream writes the header of an event stream and status 200:
// Content-Type text/event-stream, Cache-Control no-cache and, when
// noBuffering (revision 2026-07-28 asks for it), X-Accel-Buffering no.
func StartStream(w http.ResponseWriter, noBuffering bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	if noBuffering {
		h.Set("X-Accel-Buffering", "no")
	}
	w.WriteHeader(http.StatusOK)
}

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooled bounds the buffers kept for reuse.
const maxPooled = 64 << 10

// write hands fill a pooled buffer and writes what it appended.
func write(w io.Writer, fill func([]byte) []byte) error {
	bp := bufs.Get().(*[]byte)
	b := fill((*bp)[:0])
	_, err := w.Write(b)
	if cap(b) <= maxPooled {
		*bp = b[:0]
		bufs.Put(bp)
	}
	return err
}

func badField(s string) bool { return strings.ContainsAny(s, "\r\n\x00") }

// WriteEvent writes one event: "id:" when id is not empty, "event:" when
// name is not empty, then data as one "data:" line per line of it (lines
// end at CR, LF or CRLF; empty data is one empty data line), then the
// blank line that dispatches it.
func WriteEvent(w io.Writer, id, name string, data []byte) error {
	if badField(id) || badField(name) {
		return ErrEventField
	}
	return write(w, func(b []byte) []byte {
		if id != "" {
			b = append(append(append(b, "id: "...), id...), '\n')
		}
		if name != "" {
			b = append(append(append(b, "event: "...), name...), '\n')
		}
		return append(appendData(b, data), '\n')
	})
}

// appendData appends data as data: lines.
func appendData(b, data []byte) []byte {
	for {
		i := 0
		for i < len(data) && data[i] != '\n' && data[i] != '\r' {
			i++
		}
		b = append(append(append(b, "data: "...), data[:i]...), '\n')
		if i == len(data) {
			return b
		}
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

// WritePrime writes a priming event: an id and empty data, which tells a
// client where to resume from; with retry > 0 it also says how soon to
// come back (retry:, in milliseconds).
func WritePrime(w io.Writer, id string, retry time.Duration) error {
	if badField(id) {
		return ErrEventField
	}
	return write(w, func(b []byte) []byte {
		b = append(append(append(b, "id: "...), id...), '\n')
		if retry > 0 {
			b = append(strconv.AppendInt(append(b, "retry: "...), retry.Milliseconds(), 10), '\n')
		}
		return append(b, "data:\n\n"...)
	})
}

// WriteRetry writes "retry:" alone, in milliseconds: how long a client
// waits before it reconnects after this stream ends.
func WriteRetry(w io.Writer, retry time.Duration) error {
	return write(w, func(b []byte) []byte {
		return append(strconv.AppendInt(append(b, "retry: "...), retry.Milliseconds(), 10), "\n\n"...)
	})
}

// WriteComment writes an empty comment, a keep-alive a client ignores.
func WriteComment(w io.Writer) error {
	_, err := io.WriteString(w, ":\n\n")
	return err
}

// Flush sends what is buffered of w's response to the client.
func Flush(w http.ResponseWriter) error {
	return http.NewResponseController(w).Flush()
}
