package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
)

// The stateless era over a transport without HTTP (a scripted peer, as
// stdio): the probe, _meta on every request, multi round-trip requests,
// subscriptions/listen, the log level, cacheable results, and requests sent
// again after a lost answer.

const discoverResult = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true}},"instructions":"hi","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"2"}}}`

// openStateless returns a Conn joined to a scripted stateless peer, after the
// probe; the test then sees what the Conn sends next.
func openStateless(t *testing.T, opts ...Option) (*Conn, *scriptedPeer) {
	t.Helper()
	p := newScriptedPeer(t)
	p.modern = true
	probe := make(chan *jsonrpc.Message, 1)
	go func() {
		m := <-p.toServer
		probe <- m
		p.reply(m.ID, discoverResult)
	}()
	c, err := Open(context.Background(), p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if m := <-probe; m.Method != "server/discover" {
		t.Fatalf("first request %q, want server/discover", m.Method)
	}
	return c, p
}

// metaOf returns the _meta of a request's params.
func metaOf(t *testing.T, m *jsonrpc.Message) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("%s params %s: %v", m.Method, m.Params, err)
	}
	return p.Meta
}

func TestStatelessOpenAndMeta(t *testing.T) {
	c, p := openStateless(t, WithClientInfo("host", "7"), WithRoots(func(context.Context) ([]mcp.Root, error) { return nil, nil }))
	info := c.Info()
	if info.Era != mcp.EraStateless || info.ProtocolVersion != mcp.Version20260728 || info.ServerInfo.Name != "modern" ||
		info.Instructions != "hi" || info.Capabilities.Tools == nil || strings.Join(info.SupportedVersions, ",") != "2026-07-28" {
		t.Errorf("info %+v", info)
	}
	if info.Negotiation == nil || info.Negotiation.Era != "stateless" || len(info.Negotiation.Attempts) != 1 {
		t.Errorf("report %+v", info.Negotiation)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
		done <- err
	}()
	m := p.expect("tools/call") // no initialize, no notifications/initialized
	meta := metaOf(t, m)
	if string(meta[mcp.MetaProtocolVersion]) != `"2026-07-28"` || !strings.Contains(string(meta[mcp.MetaClientInfo]), `"host"`) ||
		!strings.Contains(string(meta[mcp.MetaClientCapabilities]), `"roots"`) {
		t.Errorf("_meta %s", m.Params)
	}
	if _, ok := meta[mcp.MetaLogLevel]; ok {
		t.Error("no OnLog, no SetLogLevel: no log level may be sent")
	}
	p.reply(m.ID, `{"resultType":"complete","content":[]}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Ping is server/discover; NotifyRootsChanged sends nothing.
	go func() { done <- c.Ping(context.Background()) }()
	m = p.expect("server/discover")
	p.reply(m.ID, discoverResult)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c.NotifyRootsChanged(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-p.toServer:
		t.Errorf("NotifyRootsChanged sent %s to a stateless server", m.Method)
	default:
	}
}

func TestStatelessVersionRetry(t *testing.T) {
	p := newScriptedPeer(t)
	p.modern = true
	go func() {
		m := p.expect("server/discover")
		p.toClient <- &jsonrpc.Message{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedProtocolVersion,
			Message: "no", Data: json.RawMessage(`{"supported":["2026-07-28"],"requested":"x"}`)}}
		m = p.expect("server/discover")
		p.reply(m.ID, discoverResult)
	}()
	c, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if a := c.Info().Negotiation.Attempts; len(a) != 2 || c.Info().Era != mcp.EraStateless {
		t.Errorf("report %s", c.Info().Negotiation)
	}
}

// An initialize-era server that does not answer the probe at all is taken for
// initialize-era once the probe's time is up; its late answer, if any, is dropped.
func TestSilentProbeMeansInitialize(t *testing.T) {
	p := newScriptedPeer(t)
	p.modern = true
	go func() {
		probe := p.expect("server/discover") // no answer
		m := p.expect("initialize")
		p.toClient <- &jsonrpc.Message{ID: probe.ID, Error: jsonrpc.NewError(-32000, "late")}
		p.reply(m.ID, `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"old","version":"1"}}`)
		p.expect("notifications/initialized")
	}()
	c, err := Open(context.Background(), p, WithProbeTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Info().Era != mcp.EraInitialize || c.Info().ProtocolVersion != "2025-06-18" {
		t.Errorf("info %+v", c.Info())
	}
	if a := c.Info().Negotiation.Attempts[0]; a.Answer != "no answer" || !strings.Contains(a.Decision, "initialize-era") {
		t.Errorf("probe attempt %+v", a)
	}
}

// A stateless server slow to start (npx or uvx fetching it) answers the probe
// only after initialize went out, then refuses initialize (go-sdk v1.8:
// error 0, "duplicate initialize"): its late DiscoverResult decides, and
// the Conn is stateless.
func TestLateProbeAnswerMeansStateless(t *testing.T) {
	p := newScriptedPeer(t)
	p.modern = true
	go func() {
		probe := p.expect("server/discover") // not answered in time
		m := p.expect("initialize")
		p.reply(probe.ID, discoverResult)
		p.toClient <- &jsonrpc.Message{ID: m.ID, Error: jsonrpc.NewError(0, `duplicate "initialize" received`)}
	}()
	c, err := Open(context.Background(), p, WithProbeTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info := c.Info()
	if info.Era != mcp.EraStateless || info.ProtocolVersion != mcp.Version20260728 || info.ServerInfo.Name != "modern" {
		t.Errorf("info %+v", info)
	}
	a := info.Negotiation.Attempts
	if len(a) != 3 || a[0].Answer != "no answer" || a[1].Request != negotiate.RequestInitialize ||
		a[2].Request != negotiate.RequestDiscover || a[2].Answer != "answered" || !strings.Contains(a[2].Decision, "came late") {
		t.Errorf("report %s", info.Negotiation)
	}
	// Stateless from here: the next call carries _meta, and nothing was
	// sent after initialize (no notifications/initialized).
	done := make(chan error, 1)
	go func() {
		_, err := c.ListTools(context.Background(), "")
		done <- err
	}()
	m := p.expect("tools/list")
	if _, ok := metaOf(t, m)[mcp.MetaProtocolVersion]; !ok {
		t.Errorf("tools/list without _meta: %s", m.Params)
	}
	p.reply(m.ID, `{"resultType":"complete","tools":[]}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A slow server that handles requests concurrently (go-sdk) may answer
// initialize before the probe it received first: the probe's late
// DiscoverResult, waited for a while more, still makes the Conn stateless, and
// no notifications/initialized follows.
func TestLateProbeAnswerAfterInitialize(t *testing.T) {
	p := newScriptedPeer(t)
	p.modern = true
	go func() {
		probe := p.expect("server/discover") // not answered in time
		m := p.expect("initialize")
		p.reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"both","version":"1"}}`)
		p.reply(probe.ID, discoverResult)
	}()
	c, err := Open(context.Background(), p, WithProbeTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if info := c.Info(); info.Era != mcp.EraStateless || info.ProtocolVersion != mcp.Version20260728 || len(info.Negotiation.Attempts) != 3 {
		t.Errorf("info %+v, report %s", info, info.Negotiation)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.ListTools(context.Background(), "")
		done <- err
	}()
	m := p.expect("tools/list") // not notifications/initialized
	p.reply(m.ID, `{"resultType":"complete","tools":[]}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A slow stateless server whose answer to the probe has not come when it
// refuses initialize: the probe is sent again, now that the server is up.
func TestSlowStatelessProbedAgain(t *testing.T) {
	for _, refusal := range []*jsonrpc.Error{
		jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found"),
		{Code: jsonrpc.CodeUnsupportedProtocolVersion, Message: "no", Data: json.RawMessage(`{"supported":["2026-07-28"],"requested":"2025-11-25"}`)},
	} {
		t.Run(refusal.Message, func(t *testing.T) {
			p := newScriptedPeer(t)
			p.modern = true
			go func() {
				p.expect("server/discover") // never answered
				m := p.expect("initialize")
				p.toClient <- &jsonrpc.Message{ID: m.ID, Error: refusal}
				m = p.expect("server/discover")
				p.reply(m.ID, discoverResult)
			}()
			c, err := Open(context.Background(), p, WithProbeTimeout(20*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if info := c.Info(); info.Era != mcp.EraStateless || len(info.Negotiation.Attempts) != 3 {
				t.Errorf("info %+v, report %s", info, info.Negotiation)
			}
		})
	}
}

// The error for a stateless server met under InitializeOnly names the server
// (over a transport without a URL: its name).
func TestNewerServerErrorNamesTheServer(t *testing.T) {
	p := newScriptedPeer(t)
	go func() {
		m := p.expect("initialize")
		p.toClient <- &jsonrpc.Message{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedProtocolVersion, Message: "no",
			Data: json.RawMessage(`{"supported":["2026-07-28"],"requested":"2025-11-25"}`)}}
	}()
	_, err := Open(context.Background(), p, WithEra(negotiate.InitializeOnly), WithTransportName("scripted"))
	var ne *negotiate.NewerServerError
	if !errors.As(err, &ne) || !strings.HasPrefix(ne.Error(), "scripted is a newer (stateless) server") {
		t.Errorf("got %v", err)
	}
}

func TestEraPolicies(t *testing.T) {
	// Initialize-era only: no probe at all.
	p := newScriptedPeer(t)
	p.modern = true
	go p.handshake()
	c, err := Open(context.Background(), p, WithEra(negotiate.InitializeOnly))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Stateless only, at an initialize-era server: an error, and no initialize.
	p = newScriptedPeer(t)
	go func(p *scriptedPeer) {
		for {
			select {
			case m := <-p.toServer:
				if m.Method == "initialize" {
					t.Error("initialize sent under StatelessOnly")
				}
			case <-p.closed:
				return
			}
		}
	}(p)
	_, err = Open(context.Background(), p, WithEra(negotiate.StatelessOnly))
	if err == nil || !strings.Contains(err.Error(), "only stateless") {
		t.Errorf("modern only at an initialize-era server: %v", err)
	}
	// A pinned initialize-era revision: no probe, and initialize offers it.
	p = newScriptedPeer(t)
	p.version = mcp.Version20250326
	offered := make(chan string, 1)
	go func() {
		m := p.expect("initialize")
		var ip mcp.InitializeParams
		json.Unmarshal(m.Params, &ip)
		offered <- ip.ProtocolVersion
		p.reply(m.ID, `{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)
		p.expect("notifications/initialized")
	}()
	c, err = Open(context.Background(), p, WithProtocolVersion("2025-03-26"))
	if err != nil || c.Info().ProtocolVersion != mcp.Version20250326 || <-offered != mcp.Version20250326 {
		t.Fatalf("%v %+v", err, c)
	}
	c.Close()
	if _, err := Open(context.Background(), newScriptedPeer(t), WithProtocolVersion("1999-01-01")); err == nil {
		t.Error("an unknown revision was accepted")
	}
}

// inputRequired answers the next request of method with an input_required
// result and returns the request.
func inputRequired(t *testing.T, p *scriptedPeer, method, result string) *jsonrpc.Message {
	t.Helper()
	m := p.expect(method)
	p.reply(m.ID, result)
	return m
}

func TestMRTRRunsTheHandlersAndRetries(t *testing.T) {
	var elicited, sampled int
	c, p := openStateless(t,
		WithElicitation(func(_ context.Context, e *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			elicited++
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "octocat"}}, nil
		}),
		WithSampling(func(_ context.Context, s *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			sampled++
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: mcp.Contents{{Type: "text", Text: "Paris"}}}, nil
		}),
		WithRoots(func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///w"}}, nil }))
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := c.CallTool(context.Background(), "book", map[string]any{"seat": "1A"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	first := inputRequired(t, p, "tools/call", `{"resultType":"input_required","inputRequests":{
		"login":{"method":"elicitation/create","params":{"message":"who?","requestedSchema":{"type":"object"}}},
		"cap":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}},
		"roots":{"method":"roots/list"}},"requestState":"s1"}`)
	// Round two: another question, no state this time.
	second := inputRequired(t, p, "tools/call", `{"resultType":"input_required","inputRequests":{"again":{"method":"roots/list"}}}`)
	third := p.expect("tools/call")
	p.reply(third.ID, `{"resultType":"complete","content":[{"type":"text","text":"booked"}]}`)
	if res := <-done; res == nil || res.Content[0].Text != "booked" {
		t.Fatalf("result %+v", res)
	}
	if first.ID == second.ID || second.ID == third.ID {
		t.Error("each round must be a new request with a new id")
	}
	var p2 struct {
		Arguments      map[string]any             `json:"arguments"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   *string                    `json:"requestState"`
		Meta           map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(second.Params, &p2); err != nil {
		t.Fatal(err)
	}
	if p2.RequestState == nil || *p2.RequestState != "s1" || p2.Arguments["seat"] != "1A" || p2.Meta[mcp.MetaProtocolVersion] == nil {
		t.Errorf("retry params %s", second.Params)
	}
	if !strings.Contains(string(p2.InputResponses["login"]), "octocat") || !strings.Contains(string(p2.InputResponses["cap"]), "Paris") ||
		!strings.Contains(string(p2.InputResponses["roots"]), "file:///w") {
		t.Errorf("inputResponses %s", second.Params)
	}
	var p3 struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   *string                    `json:"requestState"`
	}
	json.Unmarshal(third.Params, &p3)
	if p3.RequestState != nil || len(p3.InputResponses) != 1 || p3.InputResponses["again"] == nil {
		t.Errorf("the second retry carries only round two's answers and no state: %s", third.Params)
	}
	if elicited != 1 || sampled != 1 {
		t.Errorf("handlers ran %d and %d times", elicited, sampled)
	}
}

func TestMRTRRefusals(t *testing.T) {
	c, p := openStateless(t, WithElicitation(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
	}))
	call := func(method string, params any) chan error {
		ch := make(chan error, 1)
		go func() { ch <- c.Call(context.Background(), method, params, nil) }()
		return ch
	}
	var ie *InputError
	// A capability the client did not declare.
	ch := call("tools/call", &mcp.CallToolParams{Name: "x"})
	inputRequired(t, p, "tools/call", `{"resultType":"input_required","inputRequests":{"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}}}`)
	if err := <-ch; !errors.As(err, &ie) || ie.Key != "s" || !strings.Contains(err.Error(), "sampling") {
		t.Errorf("undeclared sampling: %v", err)
	}
	// An input method nobody knows.
	ch = call("tools/call", &mcp.CallToolParams{Name: "x"})
	inputRequired(t, p, "tools/call", `{"resultType":"input_required","inputRequests":{"w":{"method":"wish/grant"}}}`)
	if err := <-ch; !errors.As(err, &ie) || ie.Input != "wish/grant" {
		t.Errorf("unknown input method: %v", err)
	}
	// input_required on a request that may not get it.
	ch = call("completion/complete", map[string]any{})
	inputRequired(t, p, "completion/complete", `{"resultType":"input_required","requestState":"x"}`)
	if err := <-ch; !errors.As(err, &ie) {
		t.Errorf("input_required on completion/complete: %v", err)
	}
	// A server that never stops asking.
	ch = call("prompts/get", &mcp.GetPromptParams{Name: "p"})
	for range maxInputRounds + 1 {
		inputRequired(t, p, "prompts/get", `{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"?"}}},"requestState":"again"}`)
	}
	if err := <-ch; !errors.As(err, &ie) || !strings.Contains(err.Error(), "rounds") {
		t.Errorf("endless rounds: %v", err)
	}
	// A result without resultType is complete, whatever it looks like.
	ch = call("tools/call", &mcp.CallToolParams{Name: "x"})
	m := p.expect("tools/call")
	p.reply(m.ID, `{"content":[{"type":"text","text":"input_required"}]}`)
	if err := <-ch; err != nil {
		t.Errorf("a result without resultType: %v", err)
	}
}

func TestStatelessLogLevelAndCancel(t *testing.T) {
	c, p := openStateless(t, OnLog(func(mcp.LoggingMessageParams) {}))
	done := make(chan error, 1)
	go func() { _, err := c.ListPrompts(context.Background(), ""); done <- err }()
	m := p.expect("prompts/list")
	if lvl := string(metaOf(t, m)[mcp.MetaLogLevel]); lvl != `"info"` {
		t.Errorf("with OnLog, requests carry info, got %s", lvl)
	}
	p.reply(m.ID, `{"prompts":[]}`)
	<-done
	if err := c.SetLogLevel(context.Background(), mcp.LevelDebug); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := c.ListPrompts(ctx, ""); done <- err }()
	m = p.expect("prompts/list") // no logging/setLevel before it
	if lvl := string(metaOf(t, m)[mcp.MetaLogLevel]); lvl != `"debug"` {
		t.Errorf("after SetLogLevel(debug): %s", lvl)
	}
	cancel() // over a transport without per-request streams: notifications/cancelled
	n := p.expect("notifications/cancelled")
	if !strings.Contains(string(n.Params), m.ID.Raw()) {
		t.Errorf("cancelled %s for request %s", n.Params, m.ID)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
}

func TestCacheableResults(t *testing.T) {
	changed := make(chan struct{}, 1)
	c, p := openStateless(t, OnToolsChanged(func() { changed <- struct{}{} }))
	listen := p.expect("subscriptions/listen")
	p.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + listen.ID.Raw() + `},"notifications":{"toolsListChanged":true}}}`)
	list := func() []mcp.Tool {
		t.Helper()
		ch := make(chan []mcp.Tool, 1)
		go func() {
			tools, err := c.AllTools(context.Background())
			if err != nil {
				t.Error(err)
			}
			ch <- tools
		}()
		return <-ch
	}
	go func() {
		m := p.expect("tools/list")
		p.reply(m.ID, `{"resultType":"complete","ttlMs":60000,"cacheScope":"private","tools":[{"name":"a","inputSchema":{"type":"object"}}]}`)
	}()
	if tools := list(); len(tools) != 1 {
		t.Fatalf("tools %v", tools)
	}
	if tools := list(); len(tools) != 1 || tools[0].Name != "a" { // from the cache: the peer is not asked
		t.Fatalf("cached tools %v", tools)
	}
	select {
	case m := <-p.toServer:
		t.Fatalf("a fresh cached list went to the server: %s", m.Method)
	default:
	}
	// A list_changed on the listen stream makes it stale.
	p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + listen.ID.Raw() + `}}}`)
	<-changed
	go func() {
		m := p.expect("tools/list")
		p.reply(m.ID, `{"resultType":"complete","ttlMs":0,"tools":[{"name":"b","inputSchema":{"type":"object"}}]}`)
	}()
	if tools := list(); len(tools) != 1 || tools[0].Name != "b" {
		t.Fatalf("after list_changed: %v", tools)
	}
}

func TestListenFollowsSubscriptions(t *testing.T) {
	updated := make(chan string, 4)
	c, p := openStateless(t, OnResourceUpdated(func(uri string) { updated <- uri }))
	sub := make(chan error, 1)
	go func() { sub <- c.Subscribe(context.Background(), "file:///a") }()
	l1 := p.expect("subscriptions/listen")
	var lp struct {
		Notifications mcp.SubscriptionFilter `json:"notifications"`
	}
	json.Unmarshal(l1.Params, &lp)
	if strings.Join(lp.Notifications.ResourceSubscriptions, ",") != "file:///a" || metaOf(t, l1)[mcp.MetaProtocolVersion] == nil {
		t.Errorf("listen params %s", l1.Params)
	}
	ack := func(m *jsonrpc.Message) { ackListen(p, m, "") }
	ack(l1)
	if err := <-sub; err != nil {
		t.Fatal(err)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a","_meta":{"io.modelcontextprotocol/subscriptionId":` + l1.ID.Raw() + `}}}`)
	if uri := <-updated; uri != "file:///a" {
		t.Errorf("updated %s", uri)
	}
	// A second subscription replaces the stream: the old one is cancelled.
	go func() { sub <- c.Subscribe(context.Background(), "file:///b") }()
	n := p.expect("notifications/cancelled")
	if !strings.Contains(string(n.Params), l1.ID.Raw()) {
		t.Errorf("cancelled %s, want the first stream %s", n.Params, l1.ID)
	}
	l2 := p.expect("subscriptions/listen")
	json.Unmarshal(l2.Params, &lp)
	if strings.Join(lp.Notifications.ResourceSubscriptions, ",") != "file:///a,file:///b" {
		t.Errorf("second filter %s", l2.Params)
	}
	ack(l2)
	if err := <-sub; err != nil {
		t.Fatal(err)
	}
	// A graceful end by the server: the stream is opened again.
	p.reply(l2.ID, `{"resultType":"complete"}`)
	if l3 := p.expect("subscriptions/listen"); l3.ID == l2.ID {
		t.Error("reopened with the same id")
	}
}

// A lost answer: requests safe to repeat go out again as new requests;
// others fail as "may have run", unless the caller says Repeatable. The
// process behind a lost session is asked server/discover before anything
// else (a stateless server keeps no session, but a new process is a new
// server); never initialize.
func TestStatelessReissue(t *testing.T) {
	c, p := openStateless(t)
	rediscovered := func() {
		t.Helper()
		d := p.expect("server/discover")
		p.reply(d.ID, `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`)
	}
	results := make(chan error, 3)
	go func() { _, err := c.ListTools(context.Background(), ""); results <- err }()
	first := p.expect("tools/list")
	p.lost <- &jsonrpc.SessionLostError{Cause: errors.New("process restarted")}
	rediscovered()
	second := p.expect("tools/list")
	if second.ID == first.ID {
		t.Error("the reissued request must have a new id")
	}
	p.reply(second.ID, `{"tools":[]}`)
	if err := <-results; err != nil {
		t.Fatalf("safe request after a lost answer: %v", err)
	}

	go func() { _, err := c.CallTool(context.Background(), "pay", nil); results <- err }()
	p.expect("tools/call")
	p.lost <- &jsonrpc.SessionLostError{Cause: errors.New("process restarted")}
	if err := <-results; !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("a tool call that may have run must not go out again: %v", err)
	}
	rediscovered()

	go func() { _, err := c.CallTool(context.Background(), "pay", nil, AsReplayable()); results <- err }()
	p.expect("tools/call")
	p.lost <- &jsonrpc.SessionLostError{Cause: errors.New("process restarted")}
	rediscovered()
	m := p.expect("tools/call")
	p.reply(m.ID, `{"content":[]}`)
	if err := <-results; err != nil {
		t.Fatalf("Repeatable: %v", err)
	}
	select {
	case m := <-p.toServer:
		t.Errorf("unexpected %s: a modern Conn has no session to initialize", m.Method)
	default:
	}
}

// A restarted process that no longer speaks the revision in use ends the
// Conn with a *VersionError: no silent change of revision, no call sent to
// a server that cannot understand it.
func TestStatelessRediscoverVersionGone(t *testing.T) {
	c, p := openStateless(t)
	results := make(chan error, 1)
	go func() { _, err := c.ListTools(context.Background(), ""); results <- err }()
	p.expect("tools/list")
	p.lost <- &jsonrpc.SessionLostError{Cause: errors.New("process restarted")}
	d := p.expect("server/discover")
	p.reply(d.ID, `{"supportedVersions":["2099-01-01"],"capabilities":{}}`)
	var ve *VersionError
	if err := <-results; !errors.As(err, &ve) || ve.Offered != "2026-07-28" {
		t.Fatalf("err = %v, want a *VersionError for 2026-07-28", err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the Conn did not end")
	}
	if !errors.As(c.Err(), &ve) || c.State() != StateClosed {
		t.Fatalf("Err %v, state %v", c.Err(), c.State())
	}
}

// ackListen acknowledges the listen stream m with filter, or, when filter
// is "", with everything m asked for.
func ackListen(p *scriptedPeer, m *jsonrpc.Message, filter string) {
	if filter == "" {
		var lp struct {
			Notifications json.RawMessage `json:"notifications"`
		}
		json.Unmarshal(m.Params, &lp)
		filter = string(lp.Notifications)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + m.ID.Raw() + `},"notifications":` + filter + `}}`)
}

// TestOverlappingSubscribes: a Subscribe whose listen stream is replaced
// by another's before the server acknowledged it waits for the stream in
// its place, and returns with that one's acknowledgement — where it waited
// for the replaced stream's, which never comes, for ever.
func TestOverlappingSubscribes(t *testing.T) {
	c, p := openStateless(t, OnResourceUpdated(func(string) {}))
	subA := make(chan error, 1)
	go func() { subA <- c.Subscribe(context.Background(), "file:///a") }()
	p.expect("subscriptions/listen") // not acknowledged
	subB := make(chan error, 1)
	go func() { subB <- c.Subscribe(context.Background(), "file:///b") }()
	p.expect("notifications/cancelled")
	ackListen(p, p.expect("subscriptions/listen"), "")
	for _, sub := range []chan error{subA, subB} {
		select {
		case err := <-sub:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a Subscribe is still waiting after the stream that covers it was acknowledged")
		}
	}
}

// TestSubscribeEndsWithTheConn: a Subscribe waiting for its stream's
// acknowledgement returns ErrClosed when the Conn closes.
func TestSubscribeEndsWithTheConn(t *testing.T) {
	c, p := openStateless(t, OnResourceUpdated(func(string) {}))
	sub := make(chan error, 1)
	go func() { sub <- c.Subscribe(context.Background(), "file:///a") }()
	p.expect("subscriptions/listen")
	c.Close()
	select {
	case err := <-sub:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Subscribe: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Subscribe still waits after Close")
	}
}

// TestSubscribeRefused: a URI the acknowledgement leaves out is refused
// with a *SubscriptionRefusedError, and not asked for again; the others
// stand.
func TestSubscribeRefused(t *testing.T) {
	c, p := openStateless(t, OnResourceUpdated(func(string) {}))
	sub := make(chan error, 1)
	go func() { sub <- c.Subscribe(context.Background(), "file:///a") }()
	ackListen(p, p.expect("subscriptions/listen"), "")
	if err := <-sub; err != nil {
		t.Fatal(err)
	}
	go func() { sub <- c.Subscribe(context.Background(), "file:///secret") }()
	p.expect("notifications/cancelled")
	ackListen(p, p.expect("subscriptions/listen"), `{"resourceSubscriptions":["file:///a"]}`)
	var re *SubscriptionRefusedError
	if err := <-sub; !errors.As(err, &re) || re.URI != "file:///secret" {
		t.Fatalf("Subscribe: %v, want a *SubscriptionRefusedError for file:///secret", err)
	}
	p.expect("notifications/cancelled")
	l := p.expect("subscriptions/listen") // without the refused URI
	var lp struct {
		Notifications mcp.SubscriptionFilter `json:"notifications"`
	}
	json.Unmarshal(l.Params, &lp)
	if got := strings.Join(lp.Notifications.ResourceSubscriptions, ","); got != "file:///a" {
		t.Errorf("the next stream asks for %q, want file:///a alone", got)
	}
}

// TestListenGapMakesListsStale: changes the server announced while no
// listen stream was open are not lost: when the stream opens again, the
// cached listings are forgotten and the handlers called, as if the server
// had announced a change of everything listened for.
func TestListenGapMakesListsStale(t *testing.T) {
	changed := make(chan struct{}, 4)
	updated := make(chan string, 4)
	c, p := openStateless(t, OnToolsChanged(func() { changed <- struct{}{} }), OnResourceUpdated(func(uri string) { updated <- uri }))
	ackListen(p, p.expect("subscriptions/listen"), "") // the Conn's own, for the tools
	sub := make(chan error, 1)
	go func() { sub <- c.Subscribe(context.Background(), "file:///a") }()
	p.expect("notifications/cancelled")
	l1 := p.expect("subscriptions/listen")
	ackListen(p, l1, "")
	if err := <-sub; err != nil {
		t.Fatal(err)
	}
	list := func() []mcp.Tool {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tools, err := c.AllTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return tools
	}
	go func() {
		m := p.expect("tools/list")
		p.reply(m.ID, `{"resultType":"complete","ttlMs":600000,"cacheScope":"private","tools":[{"name":"old","inputSchema":{"type":"object"}}]}`)
	}()
	if tools := list(); len(tools) != 1 || tools[0].Name != "old" {
		t.Fatalf("first listing %v", tools)
	}
	p.reply(l1.ID, `{"resultType":"complete"}`) // the stream ends; the tools change meanwhile
	ackListen(p, p.expect("subscriptions/listen"), "")
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("OnToolsChanged was not called when the stream opened again")
	}
	if uri := <-updated; uri != "file:///a" {
		t.Errorf("updated %q, want file:///a", uri)
	}
	go func() {
		m := p.expect("tools/list")
		p.reply(m.ID, `{"resultType":"complete","ttlMs":0,"tools":[{"name":"new","inputSchema":{"type":"object"}}]}`)
	}()
	if tools := list(); len(tools) != 1 || tools[0].Name != "new" {
		t.Fatalf("after the stream opened again: %v, want the server asked again", tools)
	}
}

// TestMRTRAnswerNotCached: a resources/read answered only after an
// input_required round depends on the host's answers and the server's
// requestState, which the cache key leaves out, so it is not cached
// (2026-07-28, caching: results of requests carrying inputResponses or
// requestState MUST NOT be cached): the next read of the URI goes to the
// server, where it was served from the cache for as long as its ttlMs
// said, whatever the host would answer next time. A read answered at once
// is cached as before.
func TestMRTRAnswerNotCached(t *testing.T) {
	c, p := openStateless(t, WithElicitation(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"pin": "1234"}}, nil
	}))
	read := func(uri string) (*mcp.ReadResourceResult, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return c.ReadResource(ctx, uri)
	}
	const secret = `{"resultType":"complete","ttlMs":600000,"cacheScope":"private","contents":[{"uri":"test://secret","text":"42"}]}`
	go func() {
		inputRequired(t, p, "resources/read", `{"resultType":"input_required","inputRequests":{"pin":{"method":"elicitation/create","params":{"message":"PIN?"}}},"requestState":"s"}`)
		p.reply(p.expect("resources/read").ID, secret)
	}()
	if res, err := read("test://secret"); err != nil || res.Contents[0].Text != "42" {
		t.Fatalf("first read: %+v %v", res, err)
	}
	go func() {
		m := p.expect("resources/read") // asked again: the answer was not kept
		p.reply(m.ID, `{"resultType":"complete","ttlMs":600000,"contents":[{"uri":"test://secret","text":"43"}]}`)
	}()
	if res, err := read("test://secret"); err != nil || res.Contents[0].Text != "43" {
		t.Fatalf("second read: %+v %v, want the server asked again", res, err)
	}
	if res, err := read("test://secret"); err != nil || res.Contents[0].Text != "43" { // answered at once: cached
		t.Fatalf("third read: %+v %v, want the cached answer", res, err)
	}
	select {
	case m := <-p.toServer:
		t.Errorf("unexpected %s: a read answered at once is cached", m.Method)
	default:
	}
}

// TestListenCancelledByServer: over a transport without per-request
// streams (stdio), a server tears a subscription down with
// notifications/cancelled for its subscriptions/listen request
// (2026-07-28, cancellation: a server MUST send it when it tears the
// stream down). The Conn takes that as the stream's end and opens it again
// (changes meanwhile taken as made), where it went on waiting for a stream
// the server had ended and the host heard of no change again.
func TestListenCancelledByServer(t *testing.T) {
	changed := make(chan struct{}, 4)
	_, p := openStateless(t, OnToolsChanged(func() { changed <- struct{}{} }))
	l1 := p.expect("subscriptions/listen")
	ackListen(p, l1, "")
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + l1.ID.Raw() + `,"reason":"shutting down"}}`)
	l2 := p.expect("subscriptions/listen")
	if l2.ID == l1.ID {
		t.Fatal("opened again with the same id")
	}
	ackListen(p, l2, "")
	select {
	case <-changed: // what changed while none was open is taken as changed
	case <-time.After(10 * time.Second):
		t.Fatal("OnToolsChanged not called when the stream opened again")
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + l2.ID.Raw() + `}}}`)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream opened again delivers nothing")
	}
	select {
	case m := <-p.toServer:
		t.Errorf("unexpected %s %s: the server ended the stream, nothing is to be cancelled", m.Method, m.Params)
	default:
	}
}

// TestMRTRStateEchoedExactly: the retry carries the requestState exactly as
// the server wrote it (2026-07-28, MRTR: the client MUST echo back the
// exact value), even one that the decoder cannot hold as it is — a lone
// UTF-16 surrogate, as a JavaScript server's binary state may hold — where
// the retry carried the decoded string encoded again, U+FFFD in the
// surrogate's place, and a server that checks its state's integrity
// refused it. A state that is not a string makes the result invalid.
func TestMRTRStateEchoedExactly(t *testing.T) {
	c, p := openStateless(t)
	for _, state := range []string{`"\ud800\udfff\ud834x"`, `"caf\u00e9 \"quoted\" \\ <b>"`, `"plain"`} {
		ch := make(chan error, 1)
		go func() { ch <- c.Call(context.Background(), "tools/call", &mcp.CallToolParams{Name: "x"}, nil) }()
		inputRequired(t, p, "tools/call", `{"resultType":"input_required","requestState":`+state+`}`)
		retry := p.expect("tools/call")
		p.reply(retry.ID, `{"resultType":"complete","content":[]}`)
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
		var got struct {
			RequestState json.RawMessage `json:"requestState"`
		}
		if err := json.Unmarshal(retry.Params, &got); err != nil || string(got.RequestState) != state {
			t.Errorf("requestState %s echoed as %s (%v)", state, got.RequestState, err)
		}
	}
	ch := make(chan error, 1)
	go func() { ch <- c.Call(context.Background(), "tools/call", &mcp.CallToolParams{Name: "x"}, nil) }()
	inputRequired(t, p, "tools/call", `{"resultType":"input_required","requestState":{"a":1}}`)
	var re *ResultError
	if err := <-ch; !errors.As(err, &re) {
		t.Errorf("a requestState that is no string: %v, want a *ResultError", err)
	}
}

// TestMRTRManyInputsRefused: a round that asks for more than
// maxInputRequests inputs fails the call with an *InputError before any
// handler runs, where the Conn ran the host's handler for each — a server
// could have the user asked, or an LLM sampled, thousands of times for one
// call, and make the retry carry thousands of answers.
func TestMRTRManyInputsRefused(t *testing.T) {
	var asked atomic.Int32
	c, p := openStateless(t, WithRoots(func(context.Context) ([]mcp.Root, error) {
		asked.Add(1)
		return []mcp.Root{{URI: "file:///w"}}, nil
	}))
	var b strings.Builder
	b.WriteString(`{"resultType":"input_required","inputRequests":{`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"r%d":{"method":"roots/list"}`, i)
	}
	b.WriteString(`}}`)
	ch := make(chan error, 1)
	go func() { _, err := c.CallTool(context.Background(), "x", nil); ch <- err }()
	inputRequired(t, p, "tools/call", b.String())
	var ie *InputError
	if err := <-ch; !errors.As(err, &ie) || !strings.Contains(err.Error(), "1000") {
		t.Errorf("err = %v, want an *InputError for 1000 inputs", err)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the roots handler ran %d times", n)
	}
	select {
	case m := <-p.toServer:
		t.Errorf("the client sent %s", m.Method)
	default:
	}
	// At the bound, the round is answered.
	b.Reset()
	b.WriteString(`{"resultType":"input_required","inputRequests":{`)
	for i := range maxInputRequests {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"r%d":{"method":"roots/list"}`, i)
	}
	b.WriteString(`}}`)
	go func() { _, err := c.CallTool(context.Background(), "x", nil); ch <- err }()
	inputRequired(t, p, "tools/call", b.String())
	p.reply(p.expect("tools/call").ID, `{"resultType":"complete","content":[]}`)
	if err := <-ch; err != nil || asked.Load() != maxInputRequests {
		t.Errorf("%d inputs: %v, handler ran %d times", maxInputRequests, err, asked.Load())
	}
}

// TestMRTRCancelledDuringRound: a call given up while the host answers an
// input_required round (its handler ignoring the context) is not sent
// again: no retry goes out, so no notifications/cancelled follows, and the
// call fails as not run. It was sent anyway, or, over stdio, Send refused
// the done context and the Conn sent notifications/cancelled for a request
// id the server never saw (2026-07-28, cancellation: it MUST only
// reference requests the client issued), and the error said the request
// may have run.
func TestMRTRCancelledDuringRound(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, p := openStateless(t, WithElicitation(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		cancel() // the user gave up meanwhile; the handler answers all the same
		return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
	}))
	ch := make(chan error, 1)
	go func() { _, err := c.CallTool(ctx, "x", nil); ch <- err }()
	inputRequired(t, p, "tools/call", `{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"?"}}}}`)
	err := <-ch
	if !errors.Is(err, context.Canceled) || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Errorf("err = %v, want context.Canceled, not run", err)
	}
	c.Close() // lets every notifications/cancelled on its way go out first
	select {
	case m := <-p.toServer:
		t.Errorf("the client sent %s %s after the call was given up", m.Method, m.Params)
	default:
	}
}
