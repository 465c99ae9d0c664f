package ladder

import (
	"fmt"
	"log/slog"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
)

const (
	// maxEarly bounds how many messages the server sent before its answer
	// to initialize are kept for the caller: a server sends a handful at
	// most (log records, a ping); the same bound as the transports' queues.
	maxEarly = 256
	// maxEarlyBytes bounds the bytes those messages hold; one bigger
	// message is still kept when it is the first.
	maxEarlyBytes = 4 << 20
)

// early holds, within bounds, the messages that came before the answer to
// initialize. Past the bounds it drops notifications (the oldest kept one
// first, to make room for a request), never a request.
type early struct {
	log     *slog.Logger
	msgs    []*jsonrpc.Message
	bytes   int
	dropped int
}

// add keeps m, dropping a notification if need be; it fails only when the
// bounds are full of requests and m is one more.
func (e *early) add(m *jsonrpc.Message) error {
	size := messageSize(m)
	for len(e.msgs) > 0 && (len(e.msgs) >= maxEarly || e.bytes+size > maxEarlyBytes) {
		if !m.IsRequest() {
			e.drop(m)
			return nil
		}
		i := 0
		for i < len(e.msgs) && e.msgs[i].IsRequest() {
			i++
		}
		if i == len(e.msgs) {
			return fmt.Errorf("%w: more than %d, or more than %d bytes", negotiate.ErrTooManyEarlyRequests, maxEarly, maxEarlyBytes)
		}
		e.bytes -= messageSize(e.msgs[i])
		e.drop(e.msgs[i])
		e.msgs = append(e.msgs[:i], e.msgs[i+1:]...)
	}
	e.msgs = append(e.msgs, m)
	e.bytes += size
	return nil
}

func (e *early) drop(m *jsonrpc.Message) {
	e.dropped++
	if e.dropped == 1 || e.dropped%1000 == 0 {
		e.log.Warn("negotiate: the server sent too much before answering initialize; dropped notifications",
			"method", m.Method, "dropped", e.dropped)
	}
}

// messageSize is about how many bytes of server input m holds.
func messageSize(m *jsonrpc.Message) int {
	n := len(m.Method) + len(m.ID.Raw()) + len(m.Params) + len(m.Result)
	if m.Error != nil {
		n += len(m.Error.Message) + len(m.Error.Data)
	}
	return n
}
