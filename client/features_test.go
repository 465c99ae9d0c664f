package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/legacy"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// server is one live test server and how to reach it.
type server struct {
	name      string
	transport string
	target    client.Target
	stats     func() testservers.Stats // nil for stdio (another process)
	srv       *testservers.Server      // the same, to wait on
	version   string                   // the revision the server answers by default
}

// eachServer runs f against a fresh test server of every kind: stdio,
// HTTP+SSE (2024-11-05), Streamable HTTP answering with SSE (with priming
// events), and Streamable HTTP answering with JSON.
func eachServer(t *testing.T, opts testservers.Options, f func(t *testing.T, s server)) {
	t.Helper()
	t.Run("stdio", func(t *testing.T) {
		path, args, env := testservers.StdioCommand()
		env = append(env, testservers.StdioEnv(opts)...)
		env = append(env, "GORACE=atexit_sleep_ms=0") // a -race child must not linger at exit
		f(t, server{name: "stdio", transport: client.TransportStdio, target: client.Command(path, args...).WithEnv(env...), version: mcp.LatestInitializeVersion})
	})
	t.Run("legacy-sse", func(t *testing.T) {
		ls := testservers.StartLegacy(testservers.LegacyOptions{Options: opts})
		t.Cleanup(ls.Close)
		f(t, server{name: "legacy-sse", transport: client.TransportSSE, target: client.URL(ls.URL), stats: ls.Server().Stats, srv: ls.Server(), version: mcp.Version20241105})
	})
	for _, h := range []struct {
		name string
		o    testservers.HTTPOptions
	}{
		{"http-sse", testservers.HTTPOptions{Options: opts, Priming: true}},
		{"http-json", testservers.HTTPOptions{Options: opts, JSONResponse: true}},
	} {
		t.Run(h.name, func(t *testing.T) {
			hs := testservers.StartStreamable(h.o)
			t.Cleanup(hs.Close)
			f(t, server{name: h.name, transport: client.TransportStreamableHTTP, target: client.URL(hs.URL), stats: hs.Server().Stats, srv: hs.Server(), version: mcp.LatestInitializeVersion})
		})
	}
}

func dial(t *testing.T, s server, opts ...client.Option) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, s.target, opts...)
	if err != nil {
		t.Fatalf("dial %s: %v", s.name, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 || res.Content[0].Type != mcp.ContentText {
		t.Fatalf("no text content in %+v", res)
	}
	return res.Content[0].Text
}

func TestInfo(t *testing.T) {
	eachServer(t, testservers.Options{Instructions: "use echo"}, func(t *testing.T, s server) {
		c := dial(t, s)
		info := c.Info()
		if info.Transport != s.transport || info.ProtocolVersion != s.version ||
			info.ServerInfo.Name != testservers.DefaultName || info.Instructions != "use echo" ||
			info.Capabilities.Tools == nil || info.Capabilities.Resources == nil || !info.Capabilities.Resources.Subscribe {
			t.Errorf("info = %+v", info)
		}
		if info.Negotiation == nil || info.Negotiation.Chosen != s.transport || info.Negotiation.Era != mcp.EraInitialize {
			t.Errorf("negotiation report %+v", info.Negotiation)
		}
		if info.Era != mcp.EraInitialize {
			t.Errorf("era %q", info.Era)
		}
	})
}

func TestCloseDeliversPendingCancellation(t *testing.T) {
	hs := testservers.StartStreamable(testservers.HTTPOptions{})
	defer hs.Close()
	c, err := client.Dial(ctxT(t), client.URL(hs.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := c.CallTool(ctx, "slow", map[string]int{"steps": 100, "delayMs": 20}); !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancel, got %v", err)
	}
	c.Close() // at once: the cancellation must still reach the server
	if st := hs.Server().Stats(); st.Cancelled != 1 {
		t.Errorf("server saw %d notifications/cancelled, want 1", st.Cancelled)
	}
}

func TestLegacyStreamLossFailsPendingCallsAndRecovers(t *testing.T) {
	ls := testservers.StartLegacy(testservers.LegacyOptions{})
	defer ls.Close()
	reinit := make(chan struct{}, 1)
	c, err := client.Dial(ctxT(t), client.URL(ls.URL), client.OnReinitialized(func(client.Info) { reinit <- struct{}{} }),
		client.WithReconnectPolicy(reconnect.Policy{InitialDelay: 10 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "slow", map[string]int{"steps": 50, "delayMs": 100})
		res <- err
	}()
	waitStats(t, ls.Server(), func(st testservers.Stats) bool { return st.ToolCalls["slow"] == 1 })
	ls.KillStreams()
	select {
	case err := <-res:
		// The stream may die before or after the POST's 202 came back:
		// after, the pending call fails with a LostError; before, the
		// send itself fails. Either way the caller learns the same two
		// things: it may have run, and the connection was lost.
		if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.Is(err, legacy.ErrConnectionLost) {
			t.Fatalf("want an outcome-unknown error wrapping legacy.ErrConnectionLost, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pending call hung after the stream died")
	}
	select { // the stream comes back with a new session, initialized by the Conn
	case <-reinit:
	case <-time.After(5 * time.Second):
		t.Fatal("no re-initialization after the stream came back")
	}
	if res, err := c.CallTool(ctxT(t), "echo", map[string]string{"text": "again"}); err != nil || res.Content[0].Text != "again" {
		t.Fatalf("after recovery: %v %v", res, err)
	}
}

func TestDialErrors(t *testing.T) {
	if _, err := client.Dial(ctxT(t), client.Target{}); !errors.Is(err, client.ErrNoTarget) {
		t.Errorf("empty target: %v", err)
	}
	if _, err := client.Dial(ctxT(t), client.URL("ftp://x/")); err == nil {
		t.Error("ftp URL accepted")
	}
	_, err := client.Dial(ctxT(t), client.Command("/nonexistent/anymcp-server"))
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/anymcp-server") {
		t.Errorf("missing program: %v", err)
	}
	// A server that speaks only revisions this client does not.
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 400, PostBodyFunc: testservers.UnsupportedVersionBody("2099-01-01")})
	defer srv.Close()
	_, err = client.Dial(ctxT(t), client.URL(srv.URL))
	var newer *negotiate.NewerServerError
	if !errors.As(err, &newer) || !strings.Contains(err.Error(), "2099-01-01") || !strings.Contains(err.Error(), mcp.Version20260728) {
		t.Errorf("newer server: %v", err)
	}
}

func TestCacheAcrossDials(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 405, GETServesLegacy: true})
	defer srv.Close()
	cache := negotiate.NewCache(0)
	for range 3 {
		c, err := client.Dial(ctxT(t), client.URL(srv.URL), client.WithCache(cache))
		if err != nil {
			t.Fatal(err)
		}
		if c.Info().Transport != client.TransportSSE {
			t.Errorf("transport %s", c.Info().Transport)
		}
		c.Close()
	}
	// Cold: the stateless probe and initialize, both refused; then the GET.
	// Warm: the GET at once.
	if n := srv.Hits()["POST /mcp"]; n != 2 {
		t.Errorf("%d POST probes for three dials with a shared cache, want 2 (the first dial's)", n)
	}
}

func TestOlderServerRevision(t *testing.T) {
	eachServer(t, testservers.Options{Versions: []string{mcp.Version20250326}}, func(t *testing.T, s server) {
		c := dial(t, s)
		if v := c.Info().ProtocolVersion; v != mcp.Version20250326 {
			t.Errorf("protocol version %q", v)
		}
		if _, err := c.CallTool(ctxT(t), "echo", map[string]string{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestUnknownRevisionRefused(t *testing.T) {
	eachServer(t, testservers.Options{Versions: []string{"2030-01-01"}}, func(t *testing.T, s server) {
		_, err := client.Dial(ctxT(t), s.target)
		var ve *client.VersionError
		if !errors.As(err, &ve) || ve.Got != "2030-01-01" {
			t.Fatalf("want VersionError, got %v", err)
		}
	})
}

func TestTools(t *testing.T) {
	eachServer(t, testservers.Options{PageSize: 3}, func(t *testing.T, s server) {
		c := dial(t, s)
		ctx := ctxT(t)
		all, err := c.AllTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range all {
			names = append(names, tl.Name)
		}
		if !slices.Equal(names, testservers.ToolNames()) {
			t.Errorf("tools %v, want %v", names, testservers.ToolNames())
		}
		page, err := c.ListTools(ctx, "")
		if err != nil || len(page.Tools) != 3 || page.NextCursor == "" {
			t.Fatalf("first page: %+v, %v", page, err)
		}
		n := 0
		for tool, err := range c.Tools(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if tool.Name == "add" && (len(tool.OutputSchema) == 0 || tool.Annotations == nil || tool.Annotations.ReadOnlyHint == nil) {
				t.Errorf("add lost its schema or annotations: %+v", tool)
			}
			if n == 4 {
				break // stopping early must be fine
			}
		}

		res, err := c.CallTool(ctx, "echo", map[string]string{"text": "héllo\nworld"})
		if err != nil || text(t, res) != "héllo\nworld" || res.IsError {
			t.Fatalf("echo: %+v %v", res, err)
		}
		res, err = c.CallTool(ctx, "add", map[string]float64{"a": 2, "b": 40.5})
		if err != nil {
			t.Fatal(err)
		}
		var sc struct{ Sum float64 }
		if json.Unmarshal(res.StructuredContent, &sc) != nil || sc.Sum != 42.5 {
			t.Errorf("structuredContent %s", res.StructuredContent)
		}
		res, err = c.CallTool(ctx, "fail", map[string]string{"message": "broken"})
		if err != nil || !res.IsError || !strings.Contains(text(t, res), "broken") {
			t.Errorf("fail: %+v %v", res, err)
		}
		res, err = c.CallTool(ctx, "content_types", nil)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, ct := range res.Content {
			types = append(types, ct.Type)
			switch ct.Type {
			case mcp.ContentImage, mcp.ContentAudio:
				if ct.Data == "" || ct.MimeType == "" {
					t.Errorf("%s lost its data: %+v", ct.Type, ct)
				}
			case mcp.ContentResourceLink:
				if ct.URI == "" {
					t.Errorf("resource_link without uri")
				}
			case mcp.ContentResource:
				if ct.Resource == nil || ct.Resource.URI == "" {
					t.Errorf("embedded resource lost: %+v", ct)
				}
			}
		}
		if !slices.Equal(types, []string{"text", "image", "audio", "resource_link", "resource"}) {
			t.Errorf("content types %v", types)
		}
		_, err = c.CallTool(ctx, "no_such_tool", nil)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			t.Errorf("unknown tool: want a JSON-RPC error, got %v", err)
		}
	})
}

func TestBigResult(t *testing.T) {
	eachServer(t, testservers.Options{}, func(t *testing.T, s server) {
		c := dial(t, s)
		res, err := c.CallTool(ctxT(t), "big", map[string]int{"mib": 16})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(text(t, res)); got != 16<<20 {
			t.Errorf("got %d bytes, want 16 MiB", got)
		}
	})
}

func TestResources(t *testing.T) {
	eachServer(t, testservers.Options{PageSize: 2}, func(t *testing.T, s server) {
		updated := make(chan string, 4)
		c := dial(t, s, client.OnResourceUpdated(func(uri string) { updated <- uri }))
		ctx := ctxT(t)
		all, err := c.AllResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range all {
			uris = append(uris, r.URI)
		}
		if !slices.Equal(uris, testservers.ResourceURIs()) {
			t.Errorf("resources %v, want %v", uris, testservers.ResourceURIs())
		}
		tpls, err := c.AllResourceTemplates(ctx)
		if err != nil || len(tpls) == 0 || tpls[0].URITemplate != "test://items/{id}" {
			t.Fatalf("templates %+v %v", tpls, err)
		}
		rr, err := c.ReadResource(ctx, "test://static/text")
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello" {
			t.Fatalf("read text: %+v %v", rr, err)
		}
		rr, err = c.ReadResource(ctx, "test://static/blob")
		if err != nil || rr.Contents[0].Blob == "" {
			t.Fatalf("read blob: %+v %v", rr, err)
		}
		rr, err = c.ReadResource(ctx, "test://items/42")
		if err != nil || !strings.Contains(rr.Contents[0].Text+rr.Contents[0].URI, "42") {
			t.Fatalf("read from template: %+v %v", rr, err)
		}
		_, err = c.ReadResource(ctx, "test://nope")
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeResourceNotFound {
			t.Errorf("unknown resource: want -32002, got %v", err)
		}

		if err := c.Subscribe(ctx, "test://static/text"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CallTool(ctx, "touch", map[string]string{"uri": "test://static/text"}); err != nil {
			t.Fatal(err)
		}
		select {
		case uri := <-updated:
			if uri != "test://static/text" {
				t.Errorf("updated %q", uri)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no resources/updated")
		}
		if err := c.Unsubscribe(ctx, "test://static/text"); err != nil {
			t.Fatal(err)
		}
		if s.stats != nil {
			if subs := s.stats().Subscriptions; len(subs) != 0 {
				t.Errorf("still subscribed: %v", subs)
			}
		}
	})
}

func TestPromptsCompletionLoggingPing(t *testing.T) {
	eachServer(t, testservers.Options{PageSize: 1}, func(t *testing.T, s server) {
		logs := make(chan mcp.LoggingMessageParams, 4)
		c := dial(t, s, client.OnLog(func(p mcp.LoggingMessageParams) { logs <- p }))
		ctx := ctxT(t)
		prompts, err := c.AllPrompts(ctx)
		if err != nil || len(prompts) < 2 {
			t.Fatalf("prompts %+v %v", prompts, err)
		}
		gp, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"})
		if err != nil || len(gp.Messages) == 0 || !strings.Contains(gp.Messages[0].Content.Text, "Ada") {
			t.Fatalf("greet: %+v %v", gp, err)
		}
		_, err = c.GetPrompt(ctx, "greet", nil)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("missing required argument: want -32602, got %v", err)
		}
		cr, err := c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.Reference{Type: mcp.RefPrompt, Name: "greet"}, Argument: mcp.CompleteArgument{Name: "style", Value: "f"}})
		if err != nil || len(cr.Completion.Values) == 0 {
			t.Fatalf("complete: %+v %v", cr, err)
		}
		for _, v := range cr.Completion.Values {
			if !strings.HasPrefix(v, "f") {
				t.Errorf("completion %q does not match the prefix", v)
			}
		}
		if err := c.SetLogLevel(ctx, mcp.LevelWarning); err != nil {
			t.Fatal(err)
		}
		c.CallTool(ctx, "log", map[string]string{"level": "info", "message": "quiet"})
		c.CallTool(ctx, "log", map[string]string{"level": "error", "message": "loud"})
		select {
		case p := <-logs:
			if p.Level != mcp.LevelError || !strings.Contains(string(p.Data), "loud") {
				t.Errorf("log %+v %s", p, p.Data)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no log notification")
		}
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := c.Call(ctx, "tools/list", nil, &raw); err != nil || !strings.Contains(string(raw), `"echo"`) {
			t.Errorf("raw call: %s %v", raw, err)
		}
		err = c.Call(ctx, "no/such/method", nil, nil)
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("unknown method: want -32601, got %v", err)
		}
	})
}

func TestListChangedNotifications(t *testing.T) {
	eachServer(t, testservers.Options{}, func(t *testing.T, s server) {
		got := make(chan string, 3)
		c := dial(t, s,
			client.OnToolsChanged(func() { got <- "tools" }),
			client.OnResourcesChanged(func() { got <- "resources" }),
			client.OnPromptsChanged(func() { got <- "prompts" }))
		if _, err := c.CallTool(ctxT(t), "notify_changes", nil); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for len(seen) < 3 {
			select {
			case k := <-got:
				seen = append(seen, k)
			case <-time.After(5 * time.Second):
				t.Fatalf("only %v", seen)
			}
		}
		slices.Sort(seen)
		if !slices.Equal(seen, []string{"prompts", "resources", "tools"}) {
			t.Errorf("seen %v", seen)
		}
	})
}

func TestServerToClientRequests(t *testing.T) {
	eachServer(t, testservers.Options{}, func(t *testing.T, s server) {
		c := dial(t, s,
			client.WithSampling(func(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: mcp.Contents{mcp.TextContent("sampled:" + p.Messages[0].Content[0].Text)}}, nil
			}),
			client.WithElicitation(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Grace"}}, nil
			}),
			client.WithRoots(func(context.Context) ([]mcp.Root, error) {
				return []mcp.Root{{URI: "file:///work", Name: "work"}}, nil
			}))
		ctx := ctxT(t)
		res, err := c.CallTool(ctx, "sample", map[string]string{"prompt": "hi"})
		if err != nil || !strings.Contains(text(t, res), "sampled:hi") {
			t.Errorf("sample: %+v %v", res, err)
		}
		res, err = c.CallTool(ctx, "elicit", map[string]string{"message": "name?"})
		if err != nil || !strings.Contains(text(t, res), "accept") || !strings.Contains(text(t, res), "Grace") {
			t.Errorf("elicit: %+v %v", res, err)
		}
		res, err = c.CallTool(ctx, "roots", nil)
		if err != nil || !strings.Contains(text(t, res), "file:///work") {
			t.Errorf("roots: %+v %v", res, err)
		}
		if err := c.NotifyRootsChanged(ctx); err != nil {
			t.Fatal(err)
		}
		if s.stats != nil {
			st := s.stats()
			caps := st.ClientCapabilities
			if caps.Sampling == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil || caps.Roots == nil {
				t.Errorf("declared capabilities %+v", caps)
			}
		}
	})
}

func TestProgressAndCancel(t *testing.T) {
	eachServer(t, testservers.Options{}, func(t *testing.T, s server) {
		c := dial(t, s, client.WithDefaultTimeout(600*time.Millisecond))
		ctx := ctxT(t)
		var mu sync.Mutex
		var steps []float64
		// 12 steps of 100ms: 1.2s in all, twice the 600ms request timeout,
		// which each progress notification restarts (500ms of slack for a
		// loaded machine; 300ms was stretched past).
		res, err := c.CallTool(ctx, "slow", map[string]int{"steps": 12, "delayMs": 100}, client.WithProgress(func(p mcp.ProgressParams) {
			mu.Lock()
			steps = append(steps, p.Progress)
			mu.Unlock()
		}))
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		// A JSON-answering server sends progress on the GET stream, which
		// may trail the answer on the POST: only there may updates be missing.
		if (len(steps) != 12 && s.name != "http-json") || len(steps) == 0 || !strings.Contains(text(t, res), "12") {
			t.Errorf("progress %v, result %+v", steps, res)
		}
		for i := 1; i < len(steps); i++ {
			if steps[i] <= steps[i-1] {
				t.Errorf("progress out of order: %v", steps)
			}
		}
		mu.Unlock()

		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err = c.CallTool(cctx, "slow", map[string]int{"steps": 100, "delayMs": 50})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want context.Canceled, got %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("cancel took %v", d)
		}
		if s.stats != nil {
			waitStats(t, s.srv, func(st testservers.Stats) bool { return st.Cancelled == 1 && st.LastCancelledReason != "" })
		}
		// the Conn goes on
		if _, err := c.CallTool(ctx, "echo", map[string]string{"text": "after"}); err != nil {
			t.Fatal(err)
		}
	})
}

// waitStats waits until the server's stats meet cond: they change as
// the server handles what the client sent, a moment after the client.
func waitStats(t *testing.T, srv *testservers.Server, cond func(testservers.Stats) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if st, err := srv.WaitStats(ctx, cond); err != nil {
		t.Fatalf("stats never matched: %+v", st)
	}
}

func TestConcurrentCallsLive(t *testing.T) {
	eachServer(t, testservers.Options{}, func(t *testing.T, s server) {
		c := dial(t, s)
		ctx := ctxT(t)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				want := fmt.Sprint("call-", i)
				res, err := c.CallTool(ctx, "echo", map[string]string{"text": want})
				if err != nil {
					errs <- err
				} else if res.Content[0].Text != want {
					errs <- fmt.Errorf("got %q want %q", res.Content[0].Text, want)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
