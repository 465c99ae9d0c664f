package client_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// The dual-era client against real servers of each era, over Streamable
// HTTP and stdio: what it negotiates, and that one Conn API serves both.

func dialT(t *testing.T, target client.Target, opts ...client.Option) *client.Conn {
	t.Helper()
	c, err := client.Dial(ctxT(t), target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// eraServers are servers of every era, each with what Dial must find.
func eraServers(t *testing.T, opts testservers.Options) []struct {
	name      string
	target    client.Target
	era       mcp.Era
	transport string
	attempts  int
	srv       *testservers.Server
} {
	type row = struct {
		name      string
		target    client.Target
		era       mcp.Era
		transport string
		attempts  int
		srv       *testservers.Server
	}
	var rows []row
	for _, e := range []struct {
		name string
		eras testservers.Eras
		era  mcp.Era
		n    int
	}{
		{"stateless", testservers.StatelessOnly, mcp.EraStateless, 1},
		{"dual", testservers.DualEra, mcp.EraStateless, 1},
		{"initialize", testservers.InitializeOnly, mcp.EraInitialize, 2},
	} {
		o := opts
		o.Eras = e.eras
		hs := testservers.StartStreamable(testservers.HTTPOptions{Options: o})
		t.Cleanup(hs.Close)
		rows = append(rows, row{e.name + "/http", client.URL(hs.URL), e.era, client.TransportStreamableHTTP, e.n, hs.Server()})
		path, args, _ := testservers.StdioCommand()
		rows = append(rows, row{e.name + "/stdio", client.Command(path, args...).WithEnv(testservers.StdioEnv(o)...), e.era, client.TransportStdio, e.n, nil})
	}
	return rows
}

func TestEraNegotiated(t *testing.T) {
	for _, s := range eraServers(t, testservers.Options{}) {
		t.Run(s.name, func(t *testing.T) {
			// The probe waits as long as the test may: a stdio server
			// that starts slowly on a busy machine (past the 1 s
			// default) is not an initialize-era one, and the report must not
			// count the attempts of the fallback it would take.
			c := dialT(t, s.target, client.WithProbeTimeout(15*time.Second))
			info := c.Info()
			want := mcp.Version20251125
			if s.era == mcp.EraStateless {
				want = mcp.Version20260728
			}
			if info.Era != s.era || info.Transport != s.transport || info.ProtocolVersion != want || info.ServerInfo.Name != testservers.DefaultName {
				t.Errorf("info %+v", info)
			}
			if r := info.Negotiation; r == nil || len(r.Attempts) != s.attempts || r.Era != s.era || r.Attempts[0].Request != negotiate.RequestDiscover {
				t.Errorf("report %s", r)
			}
			// One API over both eras: list, call, read, prompts, ping.
			tools, err := c.AllTools(ctxT(t))
			if err != nil || len(tools) == 0 {
				t.Fatalf("tools %v %v", tools, err)
			}
			res, err := c.CallTool(ctxT(t), "add", map[string]any{"a": 2, "b": 3})
			if err != nil || res.IsError || !strings.Contains(res.Content[0].Text, "5") {
				t.Fatalf("add: %+v %v", res, err)
			}
			if _, err := c.ReadResource(ctxT(t), testservers.StaticTextURI); err != nil {
				t.Errorf("read: %v", err)
			}
			if _, err := c.AllPrompts(ctxT(t)); err != nil {
				t.Errorf("prompts: %v", err)
			}
			if err := c.Ping(ctxT(t)); err != nil {
				t.Errorf("ping: %v", err)
			}
			var steps atomic.Int32
			res, err = c.CallTool(ctxT(t), "slow", map[string]any{"steps": 3, "delayMs": 1},
				client.WithProgress(func(mcp.ProgressParams) { steps.Add(1) }))
			if err != nil || res.IsError {
				t.Fatalf("slow: %+v %v", res, err)
			}
			if steps.Load() != 3 {
				t.Errorf("%d progress notifications, want 3", steps.Load())
			}
			if s.srv != nil && s.era == mcp.EraStateless {
				st := s.srv.Stats()
				if st.Initializations != 0 || len(st.HeaderRejects) != 0 || st.StatelessClientInfo.Name != "anymcp" {
					t.Errorf("server saw initialize %d, header rejects %v, client %+v", st.Initializations, st.HeaderRejects, st.StatelessClientInfo)
				}
			}
		})
	}
}

func TestStatelessInputRequiredOverEveryTransport(t *testing.T) {
	opts := []client.Option{
		client.WithElicitation(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "ada", "confirm": true, "number": 2}}, nil
		}),
		client.WithSampling(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: mcp.Contents{{Type: "text", Text: "Paris"}}}, nil
		}),
		client.WithRoots(func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///w"}}, nil }),
	}
	for _, s := range eraServers(t, testservers.Options{}) {
		if s.era != mcp.EraStateless {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			c := dialT(t, s.target, opts...)
			for _, tc := range []struct {
				tool string
				args map[string]any
			}{
				{"inputs", nil},
				{"multi_round", map[string]any{"rounds": 3}},
				{"state_only", map[string]any{"rounds": 2}},
				{"signed", map[string]any{"amount": 5}},
				{"elicit", nil},
				{"sample", nil},
				{"roots", nil},
			} {
				res, err := c.CallTool(ctxT(t), tc.tool, tc.args)
				if err != nil || res.IsError {
					t.Errorf("%s: %+v %v", tc.tool, res, err)
				}
			}
			if _, err := c.GetPrompt(ctxT(t), "ask_name", nil); err != nil {
				t.Errorf("prompts/get ask_name: %v", err)
			}
			if s.srv != nil {
				st := s.srv.Stats()
				if st.StateRejected != 0 || st.InputRequired["multi_round"] != 3 {
					t.Errorf("state rejected %d, input_required %v", st.StateRejected, st.InputRequired)
				}
			}
		})
	}
}

// A stateless server does not ask for what the client did not declare; one
// that needs it refuses with -32021, which reaches the caller typed.
func TestStatelessMissingCapability(t *testing.T) {
	hs := testservers.StartStateless(testservers.HTTPOptions{})
	defer hs.Close()
	c := dialT(t, client.URL(hs.URL))
	_, err := c.CallTool(ctxT(t), "sample", nil)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeMissingClientCapability {
		t.Fatalf("want -32021, got %v", err)
	}
}

// x-mcp-header: parameters go out as Mcp-Param-* (the server checks them
// against the body), names as Mcp-Name with the Base64 sentinel, and tools
// whose annotations break the rules are left out of the list.
func TestStatelessHeaders(t *testing.T) {
	hs := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{InvalidHeaderTools: true}})
	defer hs.Close()
	c := dialT(t, client.URL(hs.URL))
	tools, err := c.AllTools(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Name] = true
	}
	for _, bad := range testservers.InvalidHeaderToolNames() {
		if names[bad] {
			t.Errorf("invalid tool %q kept", bad)
		}
	}
	if !names[testservers.HeaderToolName] || !names[testservers.NonASCIIToolName] {
		t.Fatalf("valid tools missing: %v", names)
	}
	res, err := c.CallTool(ctxT(t), testservers.HeaderToolName, map[string]any{
		"region": "eu-west 1", "priority": 7, "dryRun": true, "target": map[string]any{"zone": "grüne-zone"}, "query": "SELECT 1"})
	if err != nil || res.IsError {
		t.Fatalf("headers tool: %+v %v", res, err)
	}
	if res, err := c.CallTool(ctxT(t), testservers.NonASCIIToolName, map[string]any{"name": "x"}); err != nil || res.IsError {
		t.Fatalf("non-ASCII tool name: %+v %v", res, err)
	}
	if _, err := c.ReadResource(ctxT(t), testservers.NonASCIIResourceURI); err != nil {
		t.Fatalf("non-ASCII resource URI: %v", err)
	}
	if rej := hs.Server().Stats().HeaderRejects; len(rej) != 0 {
		t.Errorf("the server refused headers: %v", rej)
	}
}

func TestStatelessListen(t *testing.T) {
	for _, s := range eraServers(t, testservers.Options{}) {
		if s.era != mcp.EraStateless || s.srv == nil {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			toolsChanged := make(chan struct{}, 8)
			updated := make(chan string, 8)
			c := dialT(t, s.target,
				client.OnToolsChanged(func() { toolsChanged <- struct{}{} }),
				client.OnResourceUpdated(func(uri string) { updated <- uri }))
			if err := c.Subscribe(ctxT(t), testservers.StaticTextURI); err != nil {
				t.Fatal(err)
			}
			if _, err := s.srv.WaitStats(ctxT(t), func(st testservers.Stats) bool { return st.ListenActive == 1 }); err != nil {
				t.Fatalf("one listen stream open: %v (%+v)", err, s.srv.Stats())
			}
			if n := s.srv.NotifyToolsChanged(); n != 1 {
				t.Fatalf("NotifyToolsChanged reached %d streams", n)
			}
			select {
			case <-toolsChanged:
			case <-ctxT(t).Done():
				t.Fatal("no tools/list_changed")
			}
			if n := s.srv.NotifyResourceUpdated(testservers.StaticTextURI); n != 1 {
				t.Fatalf("NotifyResourceUpdated reached %d streams", n)
			}
			select {
			case uri := <-updated:
				if uri != testservers.StaticTextURI {
					t.Errorf("updated %s", uri)
				}
			case <-ctxT(t).Done():
				t.Fatal("no resources/updated")
			}
			// The server ends the stream gracefully: it is opened again.
			s.srv.EndSubscriptions()
			if _, err := s.srv.WaitStats(ctxT(t), func(st testservers.Stats) bool { return st.ListenStreams >= 2 && st.ListenActive == 1 }); err != nil {
				t.Fatalf("reopened: %v", err)
			}
		})
	}
}

// Cancelling a stateless call over HTTP closes its stream: the server sees
// the request cancelled, and no notifications/cancelled is POSTed.
func TestStatelessCancelClosesTheStream(t *testing.T) {
	hs := testservers.StartStateless(testservers.HTTPOptions{})
	defer hs.Close()
	c := dialT(t, client.URL(hs.URL))
	ctx, cancel := context.WithCancel(ctxT(t))
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "slow", map[string]any{"steps": 100, "delayMs": 50},
			client.WithProgress(func(mcp.ProgressParams) {
				select {
				case <-started:
				default:
					close(started)
				}
			}))
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	st, err := hs.Server().WaitStats(ctxT(t), func(st testservers.Stats) bool { return st.RequestsCancelled == 1 })
	if err != nil {
		t.Fatalf("the server did not see the request cancelled: %v", err)
	}
	if st.Cancelled != 0 {
		t.Errorf("%d notifications/cancelled sent over modern HTTP", st.Cancelled)
	}
}

// The go-sdk v1.8 stateless-only server answers initialize to tell old clients
// its revision, then refuses everything after it. A client that tried
// initialize (here: a cache that says initialize-era) detects it and goes stateless.
func TestStatelessServerThatAnswersInitialize(t *testing.T) {
	hs := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{StatelessInitialize: testservers.InitializeLikeGoSDK}})
	defer hs.Close()
	cache := negotiate.NewCache(time.Minute)
	cache.Store(hs.URL, client.TransportStreamableHTTP, mcp.EraInitialize)
	c := dialT(t, client.URL(hs.URL), client.WithCache(cache))
	if c.Info().Era != mcp.EraStateless {
		t.Fatalf("era %s, report %s", c.Info().Era, c.Info().Negotiation)
	}
	if _, err := c.CallTool(ctxT(t), "echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, era, _ := cache.Lookup(hs.URL); era != mcp.EraStateless {
		t.Errorf("cache still says %s", era)
	}
}

// An initialize-era stdio server that ignores requests before initialize: the probe
// times out and initialize follows.
func TestSilentInitializeStdio(t *testing.T) {
	path, args, _ := testservers.StdioCommand()
	c := dialT(t, client.Command(path, args...).WithEnv(testservers.StdioEnv(testservers.Options{SilentBeforeInitialize: true})...),
		client.WithProbeTimeout(100*time.Millisecond))
	if c.Info().Era != mcp.EraInitialize {
		t.Fatalf("era %s", c.Info().Era)
	}
	if _, err := c.CallTool(ctxT(t), "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
}

// Cacheable lists: inside the TTL, a repeated listing costs no request.
func TestStatelessCachedLists(t *testing.T) {
	hs := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{CacheTTL: time.Minute}})
	defer hs.Close()
	c := dialT(t, client.URL(hs.URL))
	for range 3 {
		if _, err := c.AllTools(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadResource(ctxT(t), testservers.StaticTextURI); err != nil {
			t.Fatal(err)
		}
	}
	st := hs.Server().Stats()
	if st.Requests["tools/list"] != 1 || st.Requests["resources/read"] != 1 {
		t.Errorf("requests %v: a fresh cached answer went to the server", st.Requests)
	}
}

// A broken answer stream of a stateless server (no resumption in 2026-07-28):
// a request safe to repeat goes out again as a new request; a tool call
// that may have run fails as "may have run" and runs once.
func TestStatelessBrokenStream(t *testing.T) {
	hs := testservers.StartStateless(testservers.HTTPOptions{Faults: testservers.Faults{Rules: []testservers.FaultRule{
		{Fault: testservers.FaultDropStreamNoIDs, Method: "tools/list", Count: 1},
		{Fault: testservers.FaultDropStreamNoIDs, Method: "tools/call", Count: 1},
	}}})
	defer hs.Close()
	c := dialT(t, client.URL(hs.URL))
	if _, err := c.AllTools(ctxT(t)); err != nil {
		t.Fatalf("tools/list after a cut stream: %v", err)
	}
	_, err := c.CallTool(ctxT(t), "once", map[string]any{"key": "k1"})
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("a cut tool call: %v", err)
	}
	st, err := hs.Server().WaitStats(ctxT(t), func(st testservers.Stats) bool { return st.Executions == 1 })
	if err != nil || st.Duplicates != 0 || st.Requests["tools/list"] != 2 || st.Faults["drop-stream-no-ids"] != 2 {
		t.Errorf("stats %+v %v", st, err)
	}
}

// An initialize-era server's elicitation that a person takes longer to answer than
// the request timeout does not time the call out: the server is waiting
// on the host.
func TestSlowAnswerToServerRequestDoesNotTimeOut(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	const timeout = 100 * time.Millisecond
	c := dialT(t, client.URL(srv.URL), client.WithDefaultTimeout(timeout),
		client.WithElicitation(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			time.Sleep(3 * timeout) // a person, thinking
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "ada"}}, nil
		}))
	res, err := c.CallTool(ctxT(t), "elicit", nil)
	if err != nil || res.IsError {
		t.Fatalf("elicit: %+v %v", res, err)
	}
	// Without a server request pending, the timeout still applies.
	if _, err := c.CallTool(ctxT(t), "slow", map[string]any{"steps": 1, "delayMs": 400}); !errors.Is(err, client.ErrTimeout) {
		t.Errorf("a slow tool: %v, want a timeout", err)
	}
}
