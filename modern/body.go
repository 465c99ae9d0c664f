package modern

import (
	"errors"
	"fmt"
	"io"
)

var errTooLarge = errors.New("Streamable HTTP: message body exceeds the size limit")

// readBody reads all of r, up to limit bytes, into a buffer of its own that
// the caller hands over to jsonrpc.DecodeOwned: the messages keep their
// params and results in it, so it is allocated for this body alone and never
// reused. hint is the Content-Length when known (-1 if not): the buffer is
// then allocated once, at that size; otherwise it doubles as the body comes.
func readBody(r io.Reader, hint int64, limit int) ([]byte, error) {
	var b []byte
	if hint > 0 && hint <= int64(limit) {
		b = make([]byte, 0, int(hint)+1) // +1: room to see EOF without growing
	} else {
		b = make([]byte, 0, 512)
	}
	for {
		if len(b) == cap(b) {
			if len(b) > limit {
				return nil, fmt.Errorf("%w (%d bytes)", errTooLarge, limit)
			}
			nb := make([]byte, len(b), min(2*cap(b), limit+1))
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if len(b) > limit {
			return nil, fmt.Errorf("%w (%d bytes)", errTooLarge, limit)
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
