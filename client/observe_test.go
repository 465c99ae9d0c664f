package client

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// recordingObserver records what a Conn tells its Observer.
type recordingObserver struct {
	meta map[string]string

	mu       sync.Mutex
	requests []*Request
	events   []Event
	outcomes []Outcome
	opened   []*ConnEvent
	closed   []*ConnEvent
}

type ctxMark struct{}

func (o *recordingObserver) Request(ctx context.Context, r *Request) (context.Context, RequestObserver) {
	o.mu.Lock()
	defer o.mu.Unlock()
	cp := *r
	o.requests = append(o.requests, &cp)
	return context.WithValue(ctx, ctxMark{}, r.Method), o
}

func (o *recordingObserver) Meta() map[string]string { return o.meta }

// reset forgets the requests seen so far (the handshake's).
func (o *recordingObserver) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests, o.events, o.outcomes = nil, nil, nil
}

func (o *recordingObserver) Event(e *Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, *e)
}

func (o *recordingObserver) End(out *Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	cp := *out
	cp.Result = append(json.RawMessage(nil), out.Result...)
	o.outcomes = append(o.outcomes, cp)
}

func (o *recordingObserver) Opened(_ context.Context, c *ConnEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.opened = append(o.opened, c)
}

func (o *recordingObserver) Closed(c *ConnEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = append(o.closed, c)
}

// TestObserverSeesToolCall: a tools/call is shown to the observer with its
// name, era and transport, each attempt's id, and its outcome (isError
// read from the result); the observer's _meta members reach the server
// next to the Conn's own, and Opened/Closed bracket the Conn's life.
func TestObserverSeesToolCall(t *testing.T) {
	tr := newInstantTransport()
	var mu sync.Mutex
	var metas []map[string]json.RawMessage
	tr.result = func(m *jsonrpc.Message) json.RawMessage {
		if m.Method != "tools/call" {
			return nil
		}
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Errorf("params %s: %v", m.Params, err)
		}
		mu.Lock()
		metas = append(metas, p.Meta)
		mu.Unlock()
		return json.RawMessage(`{"content":[],"isError":true}`)
	}
	obs := &recordingObserver{meta: map[string]string{
		"traceparent":    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"progressToken":  "not ours to set",
		mcp.MetaLogLevel: "debug",
	}}
	c, err := Open(context.Background(), tr, WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	obs.reset()
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"}, WithProgress(func(mcp.ProgressParams) {}))
	if err != nil || !res.IsError {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.requests) != 1 {
		t.Fatalf("requests = %+v, want the tools/call alone", obs.requests)
	}
	r := obs.requests[0]
	if r.Method != "tools/call" || r.Name != "echo" || r.Transport != "custom" || r.Era != mcp.EraInitialize || r.ProtocolVersion != mcp.LatestInitializeVersion {
		t.Errorf("request = %+v", r)
	}
	if len(obs.events) != 1 || obs.events[0].Kind != EventSent || obs.events[0].ID == 0 {
		t.Errorf("events = %+v, want one EventSent with the id", obs.events)
	}
	if len(obs.outcomes) != 1 || !obs.outcomes[0].IsError || obs.outcomes[0].Err != nil || obs.outcomes[0].Duration <= 0 {
		t.Errorf("outcomes = %+v", obs.outcomes)
	}
	if len(metas) != 1 {
		t.Fatalf("server saw %d tools/call", len(metas))
	}
	m := metas[0]
	if string(m["traceparent"]) != `"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"` {
		t.Errorf("_meta = %v, want the observer's traceparent", m)
	}
	if string(m["progressToken"]) == `"not ours to set"` || m[mcp.MetaLogLevel] != nil {
		t.Errorf("_meta = %v: the observer overrode the Conn's own members", m)
	}
	if len(obs.opened) != 1 || len(obs.closed) != 1 || !errors.Is(obs.closed[0].Err, ErrClosed) || obs.closed[0].Lived <= 0 {
		t.Errorf("opened %v, closed %+v", obs.opened, obs.closed)
	}
}

// TestObserverSeesFailure: a JSON-RPC error ends the observed request with
// it, and the context the observer returned is the one the Conn used.
func TestObserverSeesFailure(t *testing.T) {
	tr := newInstantTransport()
	tr.fail = func(m *jsonrpc.Message) *jsonrpc.Error {
		if m.Method == "prompts/get" {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "no such prompt")
		}
		return nil
	}
	obs := &recordingObserver{}
	c, err := Open(context.Background(), tr, WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	obs.reset()
	_, err = c.GetPrompt(context.Background(), "greet", nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("GetPrompt err = %v", err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.requests) != 1 || obs.requests[0].Name != "greet" || obs.requests[0].Method != "prompts/get" {
		t.Fatalf("requests = %+v", obs.requests)
	}
	if len(obs.outcomes) != 1 || !errors.As(obs.outcomes[0].Err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("outcomes = %+v", obs.outcomes)
	}
}

// TestObserverNilAllocates nothing: with no Observer, every step of the
// seam a call passes through is a nil check.
func TestObserverNilAllocatesNothing(t *testing.T) {
	c, err := Open(context.Background(), newInstantTransport())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "echo"}
	meta := []byte(`"a":1`)
	raw := json.RawMessage(`{"content":[]}`)
	allocs := testing.AllocsPerRun(1000, func() {
		octx, ob := c.observe(ctx, "tools/call", params)
		if octx != ctx || ob != nil {
			t.Fatal("observed without an observer")
		}
		_ = ob.withObserverMeta(meta)
		ob.sent(1)
		ob.event(Event{Kind: EventInputRequired, Round: 1})
		ob.resend(EventResend, nil)
		ob.end(raw, nil)
		c.opened(ctx)
		c.closed(nil)
	})
	if allocs != 0 {
		t.Errorf("the seam without an observer allocates %v times per call, want 0", allocs)
	}
}

// TestObserverSeesEveryMethod: whichever Conn method makes the request —
// the lists, reads, prompts, completion, a raw Call, the tasks/* methods,
// server/discover (Ping, stateless) and subscriptions/listen (Subscribe,
// stateless) — the observer sees it, named and ended.
func TestObserverSeesEveryMethod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{Tasks: testservers.TaskOptions{Enabled: true}}})
	defer s.Close()
	obs := &recordingObserver{}
	c, err := Dial(ctx, URL(s.URL), WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		method, name string
		call         func() error
	}{
		{"tools/list", "", func() error { _, err := c.ListTools(ctx, ""); return err }},
		{"prompts/list", "", func() error { _, err := c.ListPrompts(ctx, ""); return err }},
		{"resources/list", "", func() error { _, err := c.ListResources(ctx, ""); return err }},
		{"resources/templates/list", "", func() error { _, err := c.ListResourceTemplates(ctx, ""); return err }},
		{"resources/read", testservers.StaticTextURI, func() error { _, err := c.ReadResource(ctx, testservers.StaticTextURI); return err }},
		{"prompts/get", "greet", func() error { _, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"}); return err }},
		{"tools/call", "echo", func() error { _, err := c.CallTool(ctx, "echo", map[string]string{"text": "x"}); return err }},
		{"completion/complete", "", func() error {
			_, err := c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.Reference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteArgument{Name: "style", Value: "f"}})
			return err
		}},
		{"server/discover", "", func() error { return c.Ping(ctx) }},
		{"prompts/list", "", func() error { return c.Call(ctx, "prompts/list", nil, nil) }},
		{"tasks/get", "", func() error { c.GetTask(ctx, "no-such-task"); return nil }},
		{"tasks/cancel", "", func() error { c.CancelTask(ctx, "no-such-task"); return nil }},
		{"subscriptions/listen", "", func() error { return c.Subscribe(ctx, testservers.StaticTextURI) }},
	}
	for _, st := range steps {
		if err := st.call(); err != nil {
			t.Fatalf("%s: %v", st.method, err)
		}
		obs.mu.Lock()
		found := slices.ContainsFunc(obs.requests, func(r *Request) bool {
			return r.Method == st.method && r.Name == st.name && r.Era == mcp.EraStateless && r.Transport == TransportStreamableHTTP &&
				r.Server.Address == "127.0.0.1" && r.Server.Port != 0
		})
		obs.mu.Unlock()
		if !found {
			t.Errorf("%s %q not observed", st.method, st.name)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.outcomes) != len(obs.requests) {
		t.Errorf("%d requests observed, %d ended", len(obs.requests), len(obs.outcomes))
	}
	for _, r := range obs.requests {
		if strings.HasPrefix(r.Method, "tasks/") && r.TaskID != "no-such-task" {
			t.Errorf("%s with task id %q", r.Method, r.TaskID)
		}
	}
	// The subscriptions/listen stream the Conn closed ended normally.
	for _, o := range obs.outcomes {
		if errors.Is(o.Err, context.Canceled) {
			t.Errorf("a request ended cancelled: %v", o.Err)
		}
	}
}

// TestObserverSeesHandshake: the handshake's requests (the stateless
// probe, then initialize) are observed too, each with its outcome, and
// carry the observer's _meta members.
func TestObserverSeesHandshake(t *testing.T) {
	tr := newInstantTransport()
	var mu sync.Mutex
	carried := map[string]string{}
	tr.result = func(m *jsonrpc.Message) json.RawMessage {
		var p struct {
			Meta struct {
				TraceParent string `json:"traceparent"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(m.Params, &p)
		mu.Lock()
		carried[m.Method] = p.Meta.TraceParent
		mu.Unlock()
		return nil
	}
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	obs := &recordingObserver{meta: map[string]string{"traceparent": tp}}
	c, err := Open(context.Background(), tr, WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	var methods []string
	for _, r := range obs.requests {
		methods = append(methods, r.Method)
	}
	if !slices.Equal(methods, []string{"server/discover", "initialize"}) || len(obs.outcomes) != 2 {
		t.Fatalf("observed %q, %d outcomes; want the probe and initialize, each ended", methods, len(obs.outcomes))
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(obs.outcomes[0].Err, &rpcErr) || obs.outcomes[1].Err != nil || len(obs.outcomes[1].Result) == 0 {
		t.Errorf("outcomes %+v; want the probe refused, initialize answered", obs.outcomes)
	}
	mu.Lock()
	defer mu.Unlock()
	if carried["server/discover"] != tp || carried["initialize"] != tp {
		t.Errorf("the server received traceparents %v, want %s on both", carried, tp)
	}
}
