package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// scriptedPeer is a server the test drives message by message, joined to
// the Conn by an in-memory transport. It covers what no real test server
// does on purpose: garbage, unknown ids, odd versions, dying mid-call.
type scriptedPeer struct {
	t        *testing.T
	toServer chan *jsonrpc.Message
	toClient chan *jsonrpc.Message
	closed   chan struct{}
	dead     chan struct{}
	deadErr  error
	once     sync.Once
	dieOnce  sync.Once
	version  string // answered to initialize
	lost     chan error
	// stateless passes server/discover to the test like any request; by
	// default the peer refuses it at once, as an initialize-era server does
	// (-32601), and the test sees initialize first.
	modern bool

	mu       sync.Mutex
	expired  bool   // refuse all but initialize, as a transport whose session is gone
	expireOn string // expire (once) right after a message of this method goes out
}

func newScriptedPeer(t *testing.T) *scriptedPeer {
	return &scriptedPeer{
		t:        t,
		toServer: make(chan *jsonrpc.Message, 64),
		toClient: make(chan *jsonrpc.Message, 64),
		closed:   make(chan struct{}),
		dead:     make(chan struct{}),
		version:  mcp.LatestInitializeVersion,
		lost:     make(chan error, 4),
	}
}

// expire makes the peer behave as a transport whose session is gone.
func (p *scriptedPeer) expire() {
	p.mu.Lock()
	p.expired = true
	p.mu.Unlock()
}

// loseSession expires the session and tells the Conn through Recv.
func (p *scriptedPeer) loseSession() {
	p.expire()
	p.lost <- &jsonrpc.SessionLostError{Cause: errors.New("stream dropped")}
}

func (p *scriptedPeer) Send(ctx context.Context, m *jsonrpc.Message) error {
	p.mu.Lock()
	if p.expired {
		if m.Method != "initialize" {
			p.mu.Unlock()
			return fmt.Errorf("scripted: %w", jsonrpc.ErrSessionExpired)
		}
		p.expired = false
	}
	if p.expireOn != "" && m.Method == p.expireOn {
		p.expired, p.expireOn = true, ""
	}
	legacyProbe := m.Method == "server/discover" && !p.modern
	p.mu.Unlock()
	if legacyProbe {
		p.toClient <- &jsonrpc.Message{ID: m.ID, Error: jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found")}
		return nil
	}
	// Round-trip through the wire format, as a real transport would.
	b, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	m2, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return err
	}
	select {
	case p.toServer <- m2:
		return nil
	case <-p.closed:
		return jsonrpc.ErrClosed
	case <-p.dead:
		return p.deadErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *scriptedPeer) Recv() (*jsonrpc.Message, error) {
	select {
	case m := <-p.toClient:
		return m, nil
	case err := <-p.lost:
		return nil, err
	case <-p.closed:
		return nil, jsonrpc.ErrClosed
	case <-p.dead:
		return nil, p.deadErr
	}
}

func (p *scriptedPeer) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

func (p *scriptedPeer) die(err error) {
	p.dieOnce.Do(func() { p.deadErr = err; close(p.dead) })
}

// send delivers raw JSON to the client as if the server wrote it.
func (p *scriptedPeer) send(raw string) {
	p.t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(raw))
	if err != nil {
		p.t.Fatalf("bad test message %s: %v", raw, err)
	}
	p.toClient <- m
}

// next returns the next message the client sent.
func (p *scriptedPeer) next() *jsonrpc.Message {
	p.t.Helper()
	select {
	case m := <-p.toServer:
		return m
	case <-time.After(5 * time.Second):
		p.t.Fatal("the client sent nothing for 5s")
		return nil
	}
}

// expect returns the next message, which must be of method.
func (p *scriptedPeer) expect(method string) *jsonrpc.Message {
	p.t.Helper()
	m := p.next()
	if m.Method != method {
		p.t.Fatalf("client sent %q, want %q", m.Method, method)
	}
	return m
}

func (p *scriptedPeer) reply(id jsonrpc.ID, result string) {
	p.toClient <- &jsonrpc.Message{ID: id, Result: json.RawMessage(result)}
}

// handshake answers initialize and swallows notifications/initialized.
func (p *scriptedPeer) handshake() {
	p.t.Helper()
	m := p.expect("initialize")
	p.reply(m.ID, `{"protocolVersion":"`+p.version+`","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"},"instructions":"be nice","ttlMs":5}`)
	if p.version == mcp.LatestInitializeVersion || mcp.IsInitializeVersion(p.version) {
		p.expect("notifications/initialized")
	}
}

// openScripted returns a Conn joined to a fresh scripted peer.
func openScripted(t *testing.T, opts ...Option) (*Conn, *scriptedPeer) {
	t.Helper()
	p := newScriptedPeer(t)
	done := make(chan struct{})
	go func() { defer close(done); p.handshake() }()
	c, err := Open(context.Background(), p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	t.Cleanup(func() { c.Close() })
	return c, p
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

var errPeerDied = errors.New("peer died")
