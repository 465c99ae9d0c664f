package client

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

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
