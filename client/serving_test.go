package client

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// TestServerRequestsBounded: a server that sends request after request the
// host is slow to answer gets maxServing of them served at once; the next
// ones are refused at once with -32603, one reusing the id of a request in
// progress with -32600, and every served one is still answered.
func TestServerRequestsBounded(t *testing.T) {
	release := make(chan struct{})
	var running, peak atomic.Int32
	started := make(chan struct{}, maxServing)
	_, p := openScripted(t, WithSampling(func(ctx context.Context, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		n := running.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		defer running.Add(-1)
		select {
		case started <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.CreateMessageResult{Role: "assistant", Content: mcp.Contents{{Type: "text", Text: "ok"}}, Model: "m"}, nil
	}))
	sample := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`, id)
	}
	for id := 1; id <= maxServing; id++ {
		p.send(sample(id))
	}
	for range maxServing {
		<-started
	}

	const extra = 10
	for id := maxServing + 1; id <= maxServing+extra; id++ {
		p.send(sample(id))
	}
	for range extra {
		m := p.next()
		if id, _ := m.ID.Int64(); id <= maxServing || m.Error == nil || m.Error.Code != jsonrpc.CodeInternalError ||
			!strings.Contains(m.Error.Message, "already") {
			t.Errorf("request past the bound answered %s %+v, want -32603", m.ID.String(), m.Error)
		}
	}
	p.send(sample(7)) // id 7 is in progress
	if m := p.next(); m.ID.Raw() != "7" || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("a request reusing an id in progress answered %s %+v, want -32600", m.ID.String(), m.Error)
	}

	close(release)
	answered := map[string]bool{}
	for range maxServing {
		m := p.next()
		if m.Error != nil || !strings.Contains(string(m.Result), `"ok"`) {
			t.Errorf("served request %s answered %+v %s", m.ID.String(), m.Error, m.Result)
		}
		answered[m.ID.Raw()] = true
	}
	if len(answered) != maxServing {
		t.Errorf("%d distinct requests answered, want %d", len(answered), maxServing)
	}
	if got := peak.Load(); got != maxServing {
		t.Errorf("at most %d handlers ran at once, want %d", got, maxServing)
	}
}

// TestServerRequestsBoundedInBytes: the params of the server's requests
// being answered are bounded in bytes as well as in number. Past
// maxServingBytes a request is refused at once with -32603, though far
// fewer than maxServing are served; one request alone is served whatever
// its size; the served ones are all answered.
func TestServerRequestsBoundedInBytes(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, maxServing)
	_, p := openScripted(t, WithSampling(func(ctx context.Context, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.CreateMessageResult{Role: "assistant", Content: mcp.Contents{{Type: "text", Text: "ok"}}, Model: "m"}, nil
	}))
	// Each request's params take a quarter of the bound and a little more,
	// so that three are served at once and the fourth is refused.
	pad := strings.Repeat("x", maxServingBytes/4+1)
	sample := func(id int, pad string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"systemPrompt":%q}}`, id, pad)
	}
	handling := func() {
		t.Helper()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("no handler started in 5s")
		}
	}
	for id := 1; id <= 3; id++ {
		p.send(sample(id, pad))
		handling()
	}
	p.send(sample(4, pad))
	if m := p.next(); m.ID.Raw() != "4" || m.Error == nil || m.Error.Code != jsonrpc.CodeInternalError || !strings.Contains(m.Error.Message, "MiB") {
		t.Fatalf("the request past the byte bound answered %s %+v, want -32603", m.ID.String(), m.Error)
	}
	p.send(sample(5, "")) // small: it fits
	handling()
	close(release)
	answered := map[string]bool{}
	for range 4 {
		m := p.next()
		if m.Error != nil || !strings.Contains(string(m.Result), `"ok"`) {
			t.Errorf("served request %s answered %+v %s", m.ID.String(), m.Error, m.Result)
		}
		answered[m.ID.Raw()] = true
	}
	if len(answered) != 4 || answered["4"] {
		t.Errorf("answered %v, want 1, 2, 3 and 5", answered)
	}

	// Alone, a request larger than the bound is served (release is
	// closed: it is answered at once).
	p.send(sample(6, strings.Repeat("y", maxServingBytes+1)))
	if m := p.next(); m.ID.Raw() != "6" || m.Error != nil {
		t.Errorf("a lone request over the bound answered %s %+v, want a result", m.ID.String(), m.Error)
	}
}
