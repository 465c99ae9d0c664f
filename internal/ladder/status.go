package ladder

import (
	"errors"
	"io"
	"syscall"

	"github.com/anymcp/anymcp/jsonrpc"
)

// droppedConnection reports whether err is a connection the server closed
// or reset without an answer.
func droppedConnection(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

func isFallbackStatus(code int) bool { return code == 400 || code == 404 || code == 405 }

func statusOf(err error) int {
	var he *jsonrpc.HTTPError
	if errors.As(err, &he) {
		return he.StatusCode
	}
	return 0
}
