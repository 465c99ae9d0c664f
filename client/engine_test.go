package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

func TestInfoAfterHandshake(t *testing.T) {
	c, _ := openScripted(t)
	info := c.Info()
	if info.ProtocolVersion != mcp.LatestInitializeVersion || info.ServerInfo.Name != "scripted" || info.Instructions != "be nice" || info.Capabilities.Tools == nil {
		t.Errorf("info = %+v", info)
	}
	if info.Transport != "custom" {
		t.Errorf("transport = %q", info.Transport)
	}
}

func TestInitializeOffersLatestAndDeclaresHandlers(t *testing.T) {
	p := newScriptedPeer(t)
	got := make(chan mcp.InitializeParams, 1)
	go func() {
		m := p.expect("initialize")
		var ip mcp.InitializeParams
		json.Unmarshal(m.Params, &ip)
		got <- ip
		p.reply(m.ID, `{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"old","version":"0"}}`)
		p.expect("notifications/initialized")
	}()
	c, err := Open(context.Background(), p,
		WithRoots(func(context.Context) ([]mcp.Root, error) { return nil, nil }),
		WithSampling(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) { return nil, nil }),
		WithURLElicitation(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, nil }),
		WithClientInfo("host", "9"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ip := <-got
	if ip.ProtocolVersion != "2025-11-25" || ip.ClientInfo.Name != "host" {
		t.Errorf("initialize params = %+v", ip)
	}
	caps := ip.Capabilities
	if caps.Roots == nil || !caps.Roots.ListChanged || caps.Sampling == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil || caps.Elicitation.Form != nil {
		t.Errorf("capabilities = %+v", caps)
	}
	if c.Info().ProtocolVersion != "2024-11-05" {
		t.Errorf("an older supported revision must be accepted, got %q", c.Info().ProtocolVersion)
	}
}

func TestNoHandlersNoCapabilities(t *testing.T) {
	p := newScriptedPeer(t)
	got := make(chan json.RawMessage, 1)
	go func() {
		m := p.expect("initialize")
		got <- m.Params
		p.reply(m.ID, `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"0"}}`)
		p.expect("notifications/initialized")
	}()
	c, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if s := string(<-got); !strings.Contains(s, `"capabilities":{}`) {
		t.Errorf("no handler set, no capability declared: %s", s)
	}
}

func TestUnsupportedVersionClosesConn(t *testing.T) {
	p := newScriptedPeer(t)
	p.version = "2099-01-01"
	go p.handshake()
	_, err := Open(context.Background(), p)
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Got != "2099-01-01" || ve.Offered != "2025-11-25" {
		t.Fatalf("want VersionError naming both versions, got %v", err)
	}
	if !strings.Contains(err.Error(), "2099-01-01") || !strings.Contains(err.Error(), "2025-11-25") {
		t.Errorf("message must name both versions: %v", err)
	}
	select {
	case <-p.closed:
	default:
		t.Error("the transport must be closed")
	}
}

func TestGarbageAndUnknownIDsAreDropped(t *testing.T) {
	c, p := openScripted(t)
	res := make(chan error, 1)
	go func() { res <- c.Ping(context.Background()) }()
	m := p.expect("ping")
	p.send(`{"jsonrpc":"2.0","id":999,"result":{}}`)
	p.send(`{"jsonrpc":"2.0","id":"not-ours","result":{}}`)
	p.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
	p.reply(m.ID, `{}`)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
}

func TestServerPingAndUnknownMethod(t *testing.T) {
	_, p := openScripted(t)
	p.send(`{"jsonrpc":"2.0","id":"s1","method":"ping"}`)
	m := p.next()
	if m.ID.Raw() != `"s1"` || m.Error != nil || string(m.Result) != `{}` {
		t.Errorf("ping answer: id=%s result=%s err=%v", m.ID, m.Result, m.Error)
	}
	for _, method := range []string{"bogus/method", "sampling/createMessage", "roots/list", "elicitation/create"} {
		p.send(`{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{}}`)
		m = p.next()
		if m.ID.Raw() != "7" || m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s without a handler: want -32601, got %+v", method, m.Error)
		}
	}
}

func TestServerRequestHandlerError(t *testing.T) {
	_, p := openScripted(t, WithSampling(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		return nil, errors.New("no model here")
	}), WithRoots(func(context.Context) ([]mcp.Root, error) {
		return nil, jsonrpc.NewError(-32001, "custom")
	}))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`)
	m := p.next()
	if m.Error == nil || m.Error.Code != jsonrpc.CodeInternalError || !strings.Contains(m.Error.Message, "no model here") {
		t.Errorf("plain error → -32603 with its text, got %+v", m.Error)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"roots/list"}`)
	m = p.next()
	if m.Error == nil || m.Error.Code != -32001 {
		t.Errorf("a *jsonrpc.Error passes through, got %+v", m.Error)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":"nope"}`)
	m = p.next()
	if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("bad params → -32602, got %+v", m.Error)
	}
}

func TestServerCancelsItsRequest(t *testing.T) {
	started := make(chan struct{})
	handlerDone := make(chan error, 1)
	cancelled := make(chan mcp.CancelledParams, 1)
	_, p := openScripted(t, WithSampling(func(ctx context.Context, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		close(started)
		<-ctx.Done()
		handlerDone <- ctx.Err()
		return nil, ctx.Err()
	}), OnCancelled(func(cp mcp.CancelledParams) { cancelled <- cp }))
	p.send(`{"jsonrpc":"2.0","id":"x","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`)
	<-started
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x","reason":"user"}}`)
	if err := <-handlerDone; err == nil {
		t.Fatal("handler context not cancelled")
	}
	if cp := <-cancelled; cp.Reason != "user" {
		t.Errorf("OnCancelled got %+v", cp)
	}
	select {
	case m := <-p.toServer:
		t.Errorf("no answer may follow a cancelled request, got %+v", m)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestCancelSendsNotification(t *testing.T) {
	c, p := openScripted(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { _, err := c.CallTool(ctx, "slow", nil); res <- err }()
	req := p.expect("tools/call")
	cancel()
	select {
	case err := <-res:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("want context.Canceled, got %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("a cancelled call must return at once")
	}
	n := p.expect("notifications/cancelled")
	var cp mcp.CancelledParams
	json.Unmarshal(n.Params, &cp)
	if string(cp.RequestID) != req.ID.Raw() || cp.Reason == "" {
		t.Errorf("cancelled params %s for request %s", n.Params, req.ID)
	}
	p.reply(req.ID, `{"content":[]}`) // a late answer is dropped quietly
	go func() { m := p.expect("ping"); p.reply(m.ID, `{}`) }()
	if err := c.Ping(context.Background()); err != nil {
		t.Errorf("the Conn must go on after a cancelled call: %v", err)
	}
}

func TestTimeoutResetByProgress(t *testing.T) {
	const timeout = 400 * time.Millisecond
	c, p := openScripted(t, WithDefaultTimeout(timeout))
	var got atomic.Int32
	res := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "slow", nil, WithProgress(func(mcp.ProgressParams) { got.Add(1) }))
		res <- err
	}()
	req := p.expect("tools/call")
	var params struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(req.Params, &params)
	tok := string(params.Meta.ProgressToken)
	if tok == "" {
		t.Fatalf("no progress token in %s", req.Params)
	}
	// Progress every 10 ms, each waited for until the Conn has taken it,
	// for three times the timeout: only a stall of the machine of almost
	// the whole timeout between two could let the call time out (the
	// test used gaps of half the timeout, which a busy machine stretched
	// past it).
	start := time.Now()
	sent := int32(0)
	for time.Since(start) < 3*timeout {
		sent++
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d}}`, tok, sent))
		waitFor(t, "the progress callback", func() bool { return got.Load() == sent })
		time.Sleep(timeout / 40)
	}
	p.reply(req.ID, `{"content":[{"type":"text","text":"done"}]}`)
	if err := <-res; err != nil {
		t.Fatalf("progress must keep the call alive: %v", err)
	}
	if got.Load() != sent {
		t.Errorf("progress callbacks: %d, want %d", got.Load(), sent)
	}

	// Without progress the same call times out and cancels.
	go func() { _, err := c.CallTool(context.Background(), "slow", nil); res <- err }()
	req = p.expect("tools/call")
	err := <-res
	var te *TimeoutError
	if !errors.As(err, &te) || te.Total || !errors.Is(err, ErrTimeout) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("want idle TimeoutError, got %v", err)
	}
	if n := p.expect("notifications/cancelled"); !strings.Contains(string(n.Params), req.ID.Raw()) {
		t.Errorf("cancelled for the wrong request: %s", n.Params)
	}
}

func TestMaxCallTime(t *testing.T) {
	c, p := openScripted(t, WithDefaultTimeout(time.Second), WithDefaultMaxTime(150*time.Millisecond))
	res := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "slow", nil, WithProgress(func(mcp.ProgressParams) {}))
		res <- err
	}()
	req := p.expect("tools/call")
	stop := time.After(2 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-res:
			var te *TimeoutError
			if !errors.As(err, &te) || !te.Total {
				t.Fatalf("want total TimeoutError, got %v", err)
			}
			p.expect("notifications/cancelled")
			return
		case <-tick.C:
			var meta struct {
				Meta struct{ ProgressToken json.RawMessage } `json:"_meta"`
			}
			json.Unmarshal(req.Params, &meta)
			p.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(meta.Meta.ProgressToken) + `,"progress":1}}`)
		case <-stop:
			t.Fatal("progress must not extend a call past its maximum time")
		}
	}
}

func TestTransportDeathFailsPendingAsUnknown(t *testing.T) {
	c, p := openScripted(t)
	res := make(chan error, 1)
	go func() { _, err := c.CallTool(context.Background(), "x", nil); res <- err }()
	p.expect("tools/call")
	p.die(errPeerDied)
	err := <-res
	var le *LostError
	if !errors.As(err, &le) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.Is(err, errPeerDied) || le.Method != "tools/call" {
		t.Fatalf("want LostError wrapping the transport error, got %v", err)
	}
	<-c.Done()
	if err := c.Ping(context.Background()); !errors.Is(err, errPeerDied) {
		t.Errorf("calls after death must fail with the cause, got %v", err)
	}
}

func TestCloseIsIdempotentAndFailsPending(t *testing.T) {
	c, p := openScripted(t)
	res := make(chan error, 1)
	go func() { res <- c.Ping(context.Background()) }()
	p.expect("ping")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-res; !errors.Is(err, ErrClosed) {
		t.Errorf("pending call after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := c.Ping(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	c, p := openScripted(t)
	const n = 200
	go func() { // answer in reverse order of arrival, in batches of 10
		var batch []*jsonrpc.Message
		for i := 0; i < n; i++ {
			batch = append(batch, p.expect("tools/call"))
			if len(batch) == 10 {
				for j := len(batch) - 1; j >= 0; j-- {
					var cp struct{ Arguments struct{ I int } }
					json.Unmarshal(batch[j].Params, &cp)
					p.reply(batch[j].ID, fmt.Sprintf(`{"content":[{"type":"text","text":"%d"}]}`, cp.Arguments.I))
				}
				batch = batch[:0]
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := c.CallTool(context.Background(), "echo", map[string]int{"i": i})
			if err != nil {
				errs <- err
				return
			}
			if res.Content[0].Text != fmt.Sprint(i) {
				errs <- fmt.Errorf("call %d got answer %q", i, res.Content[0].Text)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestHandlerMayCallConn(t *testing.T) {
	listed := make(chan int, 1)
	var c *Conn
	c, p := openScripted(t, OnToolsChanged(func() {
		tools, err := c.AllTools(context.Background())
		if err != nil {
			t.Error(err)
		}
		listed <- len(tools)
	}))
	p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	m := p.expect("tools/list")
	p.reply(m.ID, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`)
	if n := <-listed; n != 1 {
		t.Errorf("listed %d tools", n)
	}
}

func TestMetaMerged(t *testing.T) {
	tok := func(n int64) []byte { return preEraDialect.requestMeta(n, "") }
	a, _ := withMeta(json.RawMessage(`{"name":"x"}`), tok(1))
	b, _ := withMeta(json.RawMessage(`{"name":"x","_meta":{"k":"v","progressToken":9}}`), tok(2))
	e, _ := withMeta(nil, tok(3))
	f, _ := withMeta(json.RawMessage(`{}`), tok(4))
	g, _ := withMeta(json.RawMessage(` { "a" : 1 } `), []byte(`"x":1,"y":"z"`))
	for _, tc := range []struct{ got, want string }{
		{string(a), `{"_meta":{"progressToken":1},"name":"x"}`},
		{string(b), `{"_meta":{"k":"v","progressToken":2},"name":"x"}`},
		{string(e), `{"_meta":{"progressToken":3}}`},
		{string(f), `{"_meta":{"progressToken":4}}`},
		{string(g), `{"_meta":{"x":1,"y":"z"},"a" : 1 }`},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s want %s", tc.got, tc.want)
		}
		if !json.Valid([]byte(tc.got)) {
			t.Errorf("invalid JSON %s", tc.got)
		}
	}
	if _, err := withMeta(json.RawMessage(`[1]`), tok(5)); err == nil {
		t.Error("array params cannot carry _meta")
	}
	if got, _ := withMeta(json.RawMessage(`{"a":1}`), nil); string(got) != `{"a":1}` {
		t.Errorf("no members must leave params alone: %s", got)
	}
}

func TestRawCallAndNotify(t *testing.T) {
	c, p := openScripted(t)
	var out json.RawMessage
	res := make(chan error, 1)
	go func() { res <- c.Call(context.Background(), "x/custom", map[string]int{"a": 1}, &out) }()
	m := p.expect("x/custom")
	if string(m.Params) != `{"a":1}` {
		t.Errorf("params %s", m.Params)
	}
	p.send(`{"jsonrpc":"2.0","id":` + m.ID.Raw() + `,"error":{"code":-32602,"message":"bad a","data":{"field":"a"}}}`)
	err := <-res
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || string(rpcErr.Data) != `{"field":"a"}` {
		t.Fatalf("want the server's JSON-RPC error, got %v", err)
	}
	if err := c.Notify(context.Background(), "x/note", nil); err != nil {
		t.Fatal(err)
	}
	if n := p.expect("x/note"); !n.IsNotification() {
		t.Error("Notify must send a notification")
	}
}

func TestSlowHandlersBoundTheQueue(t *testing.T) {
	release := make(chan struct{})
	var got atomic.Int32
	c, p := openScripted(t, OnLog(func(mcp.LoggingMessageParams) {
		<-release
		got.Add(1)
	}))
	const sent = maxPendingNotifications + 500
	for range sent {
		p.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	}
	waitFor(t, "the read loop to take every notification", func() bool {
		return c.droppedNotifications.Load()+int64(c.events.len()) >= sent-1
	})
	close(release)
	waitFor(t, "the queue to drain", func() bool { return c.events.len() == 0 })
	if n := got.Load(); n > maxPendingNotifications+1 || n < maxPendingNotifications {
		t.Errorf("handled %d notifications, want about %d (the rest dropped)", n, maxPendingNotifications)
	}
	if d := c.droppedNotifications.Load(); d < 499 {
		t.Errorf("dropped %d", d)
	}
}
