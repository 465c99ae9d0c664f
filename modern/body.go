package modern

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// Buffers above this size are left to the garbage collector rather than
// pooled, so that one huge message does not pin its memory for good.
const maxPooledBuffer = 1 << 20

// bufPool holds the buffers answers are read into. A request body is not
// pooled: net/http writes only *bytes.Reader-like bodies in one go with the
// headers (for any other reader type it flushes the headers first, which
// costs a round of syscalls and wake-ups per request), and it may still be
// reading a request body after Do has returned, with no signal when it is
// done, so a pooled request buffer could not be safely reused.
var bufPool = sync.Pool{New: func() any { return new(pooledBuf) }}

// pooledBuf is a byte slice from bufPool.
type pooledBuf struct {
	b []byte
}

func getBuf() *pooledBuf {
	p := bufPool.Get().(*pooledBuf)
	p.b = p.b[:0]
	return p
}

// release gives the buffer back; nothing may use it afterwards.
func (p *pooledBuf) release() {
	if cap(p.b) <= maxPooledBuffer {
		bufPool.Put(p)
	}
}

var errTooLarge = errors.New("modern: message body exceeds the size limit")

// readBody reads all of r into a pooled buffer, up to limit bytes; hint is
// the Content-Length when known (-1 if not). The caller releases the buffer.
func readBody(r io.Reader, hint int64, limit int) (*pooledBuf, error) {
	p := getBuf()
	if hint > 0 && hint <= int64(limit) && int(hint) > cap(p.b) {
		p.b = make([]byte, 0, int(hint)+1) // +1: room to see EOF without growing
	}
	if cap(p.b) < 512 {
		p.b = make([]byte, 0, 512)
	}
	for {
		if len(p.b) == cap(p.b) {
			if len(p.b) > limit {
				p.release()
				return nil, fmt.Errorf("%w (%d bytes)", errTooLarge, limit)
			}
			p.b = append(p.b, 0)[:len(p.b)]
		}
		n, err := r.Read(p.b[len(p.b):cap(p.b)])
		p.b = p.b[:len(p.b)+n]
		if len(p.b) > limit {
			p.release()
			return nil, fmt.Errorf("%w (%d bytes)", errTooLarge, limit)
		}
		if err == io.EOF {
			return p, nil
		}
		if err != nil {
			p.release()
			return nil, err
		}
	}
}
