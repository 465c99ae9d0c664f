package stdio

import (
	"bytes"
	"log/slog"
	"sync"
	"unicode/utf8"
)

const (
	// tailSize is how much of the end of stderr a Transport keeps.
	tailSize = 4 << 10
	// maxLogLine cuts the stderr lines sent to Command.StderrLogger.
	maxLogLine = 4 << 10
)

// tailBuffer keeps the last tailSize bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf [tailSize]byte
	n   int64 // bytes written so far
}

func (b *tailBuffer) Write(p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(p) > tailSize {
		b.n += int64(len(p) - tailSize)
		p = p[len(p)-tailSize:]
	}
	pos := int(b.n % tailSize)
	c := copy(b.buf[pos:], p)
	copy(b.buf[:], p[c:])
	b.n += int64(len(p))
}

// String returns the kept bytes, oldest first, without a rune cut in two at
// the start.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var s []byte
	if b.n <= tailSize {
		s = append(s, b.buf[:b.n]...)
	} else {
		pos := int(b.n % tailSize)
		s = make([]byte, 0, tailSize)
		s = append(s, b.buf[pos:]...)
		s = append(s, b.buf[:pos]...)
		for i := 0; i < utf8.UTFMax-1 && len(s) > 0 && !utf8.RuneStart(s[0]); i++ {
			s = s[1:]
		}
	}
	return string(s)
}

// lineLogger turns stderr bytes into one log record per line.
type lineLogger struct {
	log     *slog.Logger
	part    []byte
	trimmed bool // the current line was longer than maxLogLine
}

func (l *lineLogger) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		room := maxLogLine - len(l.part)
		if len(seg) > room {
			seg, l.trimmed = seg[:room], true
		}
		l.part = append(l.part, seg...)
		if i < 0 {
			return
		}
		l.flush()
		p = p[i+1:]
	}
}

func (l *lineLogger) flush() {
	line := bytes.TrimRight(l.part, "\r")
	if len(line) > 0 {
		if l.trimmed {
			l.log.Info("server stderr", slog.String("stderr", string(line)), slog.Bool("truncated", true))
		} else {
			l.log.Info("server stderr", slog.String("stderr", string(line)))
		}
	}
	l.part, l.trimmed = l.part[:0], false
}

// stderrReadBuf is the size of the buffer drainStderr reads stderr into.
const stderrReadBuf = 4 << 10

// drainStderr is the stderr goroutine: it reads stderr to its end, whatever
// anyone else does, keeping the tail and feeding the optional copy and log.
func (t *Transport) drainStderr() {
	defer close(t.stderrDone) // the supervisor closes the file
	r := seqReader{t.stderr, &t.errSeq}
	// Held for the life of the process, which mostly writes nothing here:
	// small, like bufio's default. A chatty server costs more reads, not
	// more memory.
	buf := make([]byte, stderrReadBuf)
	w := t.stderrCopy
	var ll *lineLogger
	if t.stderrLog != nil {
		ll = &lineLogger{log: t.stderrLog}
	}
	for {
		n, err := r.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			t.tail.Write(chunk)
			if w != nil {
				if _, werr := w.Write(chunk); werr != nil {
					t.log.Warn("stdio: copying server stderr failed; no longer copying", slog.String("error", werr.Error()))
					w = nil
				}
			}
			if ll != nil {
				ll.write(chunk)
			}
		}
		if err != nil {
			if ll != nil {
				ll.flush()
			}
			return
		}
	}
}
