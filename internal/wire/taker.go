package wire

import (
	"sync/atomic"

	"github.com/anymcp/anymcp/jsonrpc"
)

// Taker holds a transport's jsonrpc.AnswerTaker function: Set stores what
// the protocol layer gives (TakeAnswers), Offer hands it a response from
// whatever goroutine read it. The zero Taker holds none. Every transport
// decides on its own when a response may be offered (see
// jsonrpc.AnswerTaker); this is only where the function lives.
type Taker struct {
	f atomic.Pointer[func(*jsonrpc.Message) bool]
}

// Set stores take, replacing the one before.
func (k *Taker) Set(take func(*jsonrpc.Message) bool) { k.f.Store(&take) }

// Offer gives m to the take function and reports whether it took m; false
// when there is none yet.
func (k *Taker) Offer(m *jsonrpc.Message) bool {
	if f := k.f.Load(); f != nil {
		return (*f)(m)
	}
	return false
}
