package modern

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
)

// Buffers above this size are left to the garbage collector rather than
// pooled, so that one huge message does not pin its memory for good.
const maxPooledBuffer = 1 << 20

var bufPool = sync.Pool{New: func() any { return new(pooledBuf) }}

// pooledBuf is a byte slice shared by a request's body readers. The HTTP
// client may still be reading a request body after Do has returned (it writes
// the body and reads the response concurrently), so the buffer goes back to
// the pool only when every holder has let go: Send, the body given to the
// request, and any copy made by GetBody for a redirect.
type pooledBuf struct {
	b    []byte
	mu   sync.Mutex
	refs int
}

func getBuf() *pooledBuf {
	p := bufPool.Get().(*pooledBuf)
	p.b = p.b[:0]
	p.refs = 1
	return p
}

// acquire takes another reference; it fails once the buffer was released.
func (p *pooledBuf) acquire() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refs == 0 {
		return false
	}
	p.refs++
	return true
}

func (p *pooledBuf) release() {
	p.mu.Lock()
	p.refs--
	done := p.refs == 0
	p.mu.Unlock()
	if done && cap(p.b) <= maxPooledBuffer {
		bufPool.Put(p)
	}
}

var errBodyClosed = errors.New("modern: request body read after close")

// requestBody reads a pooledBuf it holds a reference to. Read and Close are
// serialised, so a Read racing a Close cannot see the buffer after release.
type requestBody struct {
	mu     sync.Mutex
	buf    *pooledBuf
	off    int
	closed bool
}

func newRequestBody(p *pooledBuf) (*requestBody, error) {
	if !p.acquire() {
		return nil, errBodyClosed
	}
	return &requestBody{buf: p}, nil
}

func (r *requestBody) Read(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, errBodyClosed
	}
	if r.off >= len(r.buf.b) {
		return 0, io.EOF
	}
	n := copy(b, r.buf.b[r.off:])
	r.off += n
	return n, nil
}

func (r *requestBody) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.buf.release()
	}
	return nil
}

// encodeMessage encodes m into a pooled buffer; the caller releases it.
func encodeMessage(m *jsonrpc.Message) (*pooledBuf, error) {
	p := getBuf()
	b, err := jsonrpc.Append(p.b, m)
	if err != nil {
		p.release()
		return nil, err
	}
	p.b = b
	return p, nil
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
