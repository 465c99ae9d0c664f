package client

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// instantTransport is an initialize-era server inside Send: it answers the requests
// its policy lets through before Send returns, straight to the Conn once
// the Conn takes answers (jsonrpc.AnswerTaker), through Recv before. Calls
// over it cost the protocol layer's own work and nothing else: no I/O, no
// goroutine but the caller's. The others it takes and never answers.
type instantTransport struct {
	in     chan *jsonrpc.Message
	once   sync.Once
	closed chan struct{}
	take   atomic.Pointer[func(*jsonrpc.Message) bool]
	// answers reports whether a request of this method gets an answer;
	// nil answers every one.
	answers func(method string) bool
	// result, when set, gives the result of the requests it knows (nil
	// for the others, which get the answers below): a test's own server.
	result func(m *jsonrpc.Message) json.RawMessage
	// fail, when set, gives the error a request gets instead (nil: none).
	fail func(m *jsonrpc.Message) *jsonrpc.Error
}

var (
	instantInit = json.RawMessage(`{"protocolVersion":"` + mcp.LatestInitializeVersion +
		`","capabilities":{"tools":{}},"serverInfo":{"name":"instant","version":"1"}}`)
	instantEcho = json.RawMessage(`{"content":[{"type":"text","text":"hello, benchmark"}]}`)
)

// newInstantTransport answers every request: initialize and tools/call
// with a result, any other method with "Method not found".
func newInstantTransport() *instantTransport {
	return &instantTransport{in: make(chan *jsonrpc.Message, 8), closed: make(chan struct{})}
}

// newMuteTransport answers initialize and nothing else: a Conn opens over
// it, and its calls wait out their timeouts.
func newMuteTransport() *instantTransport {
	t := newInstantTransport()
	t.answers = func(method string) bool { return method == "initialize" }
	return t
}

// newSilentTransport answers nothing, initialize included.
func newSilentTransport() *instantTransport {
	t := newInstantTransport()
	t.answers = func(string) bool { return false }
	return t
}

func (t *instantTransport) Send(ctx context.Context, m *jsonrpc.Message) error {
	if !m.IsRequest() || t.answers != nil && !t.answers(m.Method) {
		return nil
	}
	resp := &jsonrpc.Message{ID: m.ID}
	if t.fail != nil {
		resp.Error = t.fail(m)
	}
	if t.result != nil && resp.Error == nil {
		resp.Result = t.result(m)
	}
	switch {
	case resp.Error != nil, resp.Result != nil:
	case m.Method == "initialize":
		resp.Result = instantInit
	case m.Method == "tools/call":
		resp.Result = instantEcho
	default:
		resp.Error = jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found")
	}
	if f := t.take.Load(); f != nil && (*f)(resp) {
		return nil
	}
	select {
	case t.in <- resp:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *instantTransport) Recv() (*jsonrpc.Message, error) {
	select {
	case m := <-t.in:
		return m, nil
	case <-t.closed:
		return nil, jsonrpc.ErrClosed
	}
}

func (t *instantTransport) Close() error {
	t.once.Do(func() { close(t.closed) })
	return nil
}

func (t *instantTransport) TakeAnswers(f func(*jsonrpc.Message) bool) { t.take.Store(&f) }
