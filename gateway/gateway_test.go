package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/anymcp/anymcp/internal/testkit"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// Every server's tools, of every era and transport, are listed under
// their fleet names and called through the gateway by clients of every
// era, each call reaching its own server.
func TestToolsOfEveryEra(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers(), Config{})
	for _, d := range eras {
		t.Run(d.name, func(t *testing.T) {
			c := dial(t, url, d)
			tools, err := c.AllTools(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			for _, want := range []string{"stateless__echo", "streamable__echo", "sse__echo", "stdio__echo", "stateless__multi_round", "sse__add"} {
				if !slices.Contains(names, want) {
					t.Errorf("%s missing from %v", want, names)
				}
			}
			before := up.streamable.Server().Stats().ToolCalls["echo"]
			for _, s := range []string{"stateless", "streamable", "sse", "stdio"} {
				if got := callText(t, c, s+"__echo", map[string]any{"text": d.name + " to " + s}); got != d.name+" to "+s {
					t.Errorf("%s__echo: %q", s, got)
				}
			}
			if n := up.streamable.Server().Stats().ToolCalls["echo"] - before; n != 1 {
				t.Errorf("the streamable server ran echo %d times, want 1", n)
			}
		})
	}
}

// A tool is listed as its server sent it, but for its name.
func TestToolListedAsSent(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[1:2], Config{})
	direct, err := client.Dial(ctxT(t), client.URL(up.streamable.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	via := dial(t, url, eras[1])
	want := map[string]any{}
	for raw, err := range direct.RawTools(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		m["name"] = "streamable__" + m["name"].(string)
		want[m["name"].(string)] = m
	}
	got := map[string]any{}
	for raw, err := range via.RawTools(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		got[m["name"].(string)] = m
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("through the gateway:\n%v\nthe server's, renamed:\n%v", got, want)
	}
}

// Prompts, resources and templates of every server are merged; each is
// read back from the server that offers it.
func TestPromptsAndResourcesMerged(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers(), Config{})
	for _, d := range eras {
		t.Run(d.name, func(t *testing.T) {
			c := dial(t, url, d)
			prompts, err := c.AllPrompts(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range prompts {
				names = append(names, p.Name)
			}
			for _, want := range []string{"stateless__greet", "streamable__greet", "sse__greet", "stdio__greet", "sse__simple"} {
				if !slices.Contains(names, want) {
					t.Errorf("prompt %s missing from %v", want, names)
				}
			}
			before := up.sse.Server().Stats().Requests["prompts/get"]
			others := up.streamable.Server().Stats().Requests["prompts/get"] + up.stateless.Server().Stats().Requests["prompts/get"]
			res, err := c.GetPrompt(ctxT(t), "sse__greet", map[string]string{"name": "Ann"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Messages) == 0 || !strings.Contains(res.Messages[0].Content.Text, "Ann") {
				t.Errorf("greet: %+v", res)
			}
			if n := up.sse.Server().Stats().Requests["prompts/get"] - before; n != 1 {
				t.Errorf("the sse server got %d prompts/get, want 1", n)
			}
			if n := up.streamable.Server().Stats().Requests["prompts/get"] + up.stateless.Server().Stats().Requests["prompts/get"]; n != others {
				t.Errorf("another server got the prompts/get")
			}

			res2, err := c.AllResources(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			for _, r := range res2 {
				count[r.URI]++
			}
			for _, uri := range append(testservers.ResourceURIs(), testservers.StatelessResourceURIs()...) {
				if count[uri] != 1 {
					t.Errorf("%s listed %d times, want once", uri, count[uri])
				}
			}
			tpls, err := c.AllResourceTemplates(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(tpls) != 1 || tpls[0].URITemplate != "test://items/{id}" {
				t.Errorf("templates %+v, want test://items/{id} once", tpls)
			}
			// A stateless-only resource is read from the one server that
			// lists it.
			uri := testservers.StatelessResourceURIs()[0]
			before = up.stateless.Server().Stats().Requests["resources/read"]
			if _, err := c.ReadResource(ctxT(t), uri); err != nil {
				t.Fatal(err)
			}
			if n := up.stateless.Server().Stats().Requests["resources/read"] - before; n != 1 {
				t.Errorf("the stateless server got %d reads of %s, want 1", n, uri)
			}
		})
	}
}

// A URI two servers list, and a URI only templates match, go to the
// first such server in configuration order.
func TestResourceCollisionFirstServerWins(t *testing.T) {
	up := startUpstreams(t)
	for _, order := range [][]int{{0, 1}, {1, 0}} {
		all := up.servers()
		servers := []fleet.Server{all[order[0]], all[order[1]]}
		http := []*testservers.HTTPServer{up.stateless, up.streamable}
		first, second := http[order[0]], http[order[1]]
		_, url := startGateway(t, servers, Config{})
		c := dial(t, url, eras[1])
		for _, uri := range []string{testservers.StaticTextURI, "test://items/42"} {
			b1, b2 := first.Server().Stats().Requests["resources/read"], second.Server().Stats().Requests["resources/read"]
			res, err := c.ReadResource(ctxT(t), uri)
			if err != nil {
				t.Fatalf("%s: %v", uri, err)
			}
			if len(res.Contents) == 0 || res.Contents[0].URI != uri {
				t.Errorf("%s read as %+v", uri, res)
			}
			if d1, d2 := first.Server().Stats().Requests["resources/read"]-b1, second.Server().Stats().Requests["resources/read"]-b2; d1 != 1 || d2 != 0 {
				t.Errorf("%s with %s first: the first server got %d reads, the second %d; want 1 and 0", uri, servers[0].Name, d1, d2)
			}
		}
	}
}

// A name no server offers is refused, and the error says it did not run.
func TestUnknownNames(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[:2], Config{})
	for _, d := range eras[:2] {
		c := dial(t, url, d)
		_, err := c.CallTool(ctxT(t), "streamable__nope", nil)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, `"streamable__nope"`) || rpc.Outcome() != jsonrpc.OutcomeNotRun {
			t.Errorf("%s: unknown tool: %v", d.name, err)
		}
		_, err = c.GetPrompt(ctxT(t), "nobody__greet", nil)
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Outcome() != jsonrpc.OutcomeNotRun {
			t.Errorf("%s: unknown prompt: %v", d.name, err)
		}
		_, err = c.ReadResource(ctxT(t), "nowhere://x")
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeResourceNotFound {
			t.Errorf("%s: unknown resource: %v", d.name, err)
		}
	}
}

// A session's upstream state is its own: two sessions do not see each
// other's subscriptions, one session's calls do; each session has one
// upstream connection per server, however many calls it makes, and the
// stateless clients share one.
func TestSessionStatePerDownstream(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[1:3], Config{}) // streamable, sse
	st := up.streamable.Server()
	base := st.Stats().Initializations
	updated := make(chan string, 4)
	a := dial(t, url, eras[1], client.OnResourceUpdated(func(uri string) { updated <- uri }))
	b := dial(t, url, eras[1])
	if err := a.Subscribe(ctxT(t), testservers.StaticTextURI); err != nil {
		t.Fatal(err)
	}
	touch := map[string]any{"uri": testservers.StaticTextURI}
	for i := range 3 {
		if got := callText(t, a, "streamable__touch", touch); got != "notified" {
			t.Fatalf("a's call %d: %q, want notified (its own subscription)", i, got)
		}
		select {
		case uri := <-updated:
			if uri != testservers.StaticTextURI {
				t.Errorf("updated %q", uri)
			}
		case <-ctxT(t).Done():
			t.Fatal("a got no resources/updated")
		}
		if got := callText(t, b, "streamable__touch", touch); got != "not subscribed" {
			t.Fatalf("b's call %d: %q, want not subscribed (a's subscription is a's)", i, got)
		}
	}
	if n := st.Stats().Initializations - base; n != 2 {
		t.Errorf("%d upstream initializations for 2 sessions of 3 calls each, want 2", n)
	}
	// Stateless clients share one connection.
	for range 2 {
		c := dial(t, url, eras[0])
		for range 2 {
			callText(t, c, "streamable__echo", map[string]any{"text": "x"})
		}
	}
	if n := st.Stats().Initializations - base; n != 3 {
		t.Errorf("%d upstream initializations after 2 sessions and 2 stateless clients, want 3", n)
	}
	// A stateless call that may need input has a connection of its own,
	// to the one server it uses: the routes other fleets learnt take it
	// there without listing every server.
	sseBase := up.sse.Server().Stats().Initializations
	asks := dial(t, url, eras[0], client.WithElicitation(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}))
	for range 2 {
		callText(t, asks, "streamable__echo", map[string]any{"text": "x"})
	}
	if n := st.Stats().Initializations - base; n != 5 {
		t.Errorf("%d upstream initializations after 2 calls that may need input, want 5 (one each)", n)
	}
	if n := up.sse.Server().Stats().Initializations - sseBase; n != 0 {
		t.Errorf("those calls dialled the sse server %d times, want 0", n)
	}
}

// An upstream's question during a call (elicitation) reaches the client
// that made the call, whatever its era and the upstream's, and no other.
func TestLateServerRequestReachesItsClient(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[:2], Config{}) // stateless, streamable
	asked := map[string]chan string{}
	handler := func(who string) client.Option {
		asked[who] = make(chan string, 8)
		return client.WithElicitation(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked[who] <- p.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": who}}, nil
		})
	}
	clients := map[string]*client.Conn{
		"A": dial(t, url, eras[1], handler("A")),
		"B": dial(t, url, eras[1], handler("B")),
		"C": dial(t, url, eras[0], handler("C")),
	}
	for _, who := range []string{"A", "C"} {
		for _, server := range []string{"streamable", "stateless"} {
			got := callText(t, clients[who], server+"__elicit", map[string]any{"message": who + " via " + server})
			if !strings.Contains(got, `"name":"`+who+`"`) {
				t.Errorf("%s calling %s__elicit: %q, want its own answer", who, server, got)
			}
			select {
			case m := <-asked[who]:
				if m != who+" via "+server {
					t.Errorf("%s was asked %q", who, m)
				}
			default:
				t.Errorf("%s's handler was not asked", who)
			}
		}
	}
	if n := len(asked["B"]); n != 0 {
		t.Errorf("B, which called nothing, was asked %d times", n)
	}
	for who, ch := range asked {
		if len(ch) != 0 {
			t.Errorf("%s was asked %d more times", who, len(ch))
		}
	}
}

// A list change of any server reaches the listening clients of every
// era.
func TestListChangedReachesListeners(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[:3], Config{})
	// A stateless client listens: once Listening returns, every server
	// is listened to, and a change one makes outside any request
	// reaches the client.
	changed := make(chan struct{}, 16)
	c := dial(t, url, eras[0], client.OnToolsChanged(func() { changed <- struct{}{} }))
	if err := c.Listening(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*testservers.Server{up.streamable.Server(), up.stateless.Server(), up.sse.Server()} {
		s.NotifyToolsChanged()
		select {
		case <-changed:
		case <-ctxT(t).Done():
			t.Fatalf("no tools/list_changed reached the stateless client from %s", s.Options().Name)
		}
	}
	// Session clients (Streamable HTTP and /sse) hear the change a call
	// of theirs makes a server send, on their own session.
	for _, d := range eras[1:] {
		changed := make(chan struct{}, 16)
		c := dial(t, url, d, client.OnToolsChanged(func() { changed <- struct{}{} }))
		if err := c.Listening(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		for _, server := range []string{"streamable", "sse"} {
			callText(t, c, server+"__notify_changes", nil)
			select {
			case <-changed:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: no tools/list_changed from %s", d.name, server)
			}
		}
	}
}

// Close leaves no stdio server behind: neither the shared one, nor a
// session's, nor one a stateless call that may need input started.
func TestCloseLeavesNoProcess(t *testing.T) {
	up := startUpstreams(t)
	g, url := startGateway(t, up.servers()[3:], Config{})
	callText(t, dial(t, url, eras[0]), "stdio__echo", map[string]any{"text": "shared"})
	callText(t, dial(t, url, eras[1]), "stdio__echo", map[string]any{"text": "session"})
	asks := dial(t, url, eras[0], client.WithElicitation(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}))
	callText(t, asks, "stdio__echo", map[string]any{"text": "own"})
	if n := len(pids(t, up.stdioPids)); n != 3 {
		t.Errorf("%d stdio servers started, want 3 (shared, session, the call's own)", n)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	checkGone(t, up.stdioPids)
}

// completion/complete goes to the prompt's server (by fleet name) or the
// template's (by its text); progress of a call reaches its client.
func TestCompletionAndProgress(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[:3], Config{})
	for _, d := range eras[:2] {
		c := dial(t, url, d)
		before := up.sse.Server().Stats().Requests["completion/complete"]
		res, err := c.Complete(ctxT(t), &mcp.CompleteParams{Ref: mcp.Reference{Type: "ref/prompt", Name: "sse__greet"},
			Argument: mcp.CompleteArgument{Name: "style", Value: "f"}})
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		if len(res.Completion.Values) == 0 {
			t.Errorf("%s: no completions", d.name)
		}
		if n := up.sse.Server().Stats().Requests["completion/complete"] - before; n != 1 {
			t.Errorf("%s: the sse server got %d completions, want 1", d.name, n)
		}
		before = up.stateless.Server().Stats().Requests["completion/complete"]
		if _, err := c.Complete(ctxT(t), &mcp.CompleteParams{Ref: mcp.Reference{Type: "ref/resource", URI: "test://items/{id}"},
			Argument: mcp.CompleteArgument{Name: "id", Value: "1"}}); err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		if n := up.stateless.Server().Stats().Requests["completion/complete"] - before; n != 1 {
			t.Errorf("%s: the first server with the template got %d completions, want 1", d.name, n)
		}

		var steps atomic.Int32
		res2, err := c.CallTool(ctxT(t), "streamable__slow", map[string]any{"steps": 3, "delayMs": 1},
			client.WithProgress(func(mcp.ProgressParams) { steps.Add(1) }))
		if err != nil || res2.IsError {
			t.Fatalf("%s: %+v, %v", d.name, res2, err)
		}
		if n := steps.Load(); n != 3 {
			t.Errorf("%s: %d progress notifications, want 3", d.name, n)
		}
	}
}

// A change a server makes outside any request reaches a session that
// listens, once the session's own connection to it listens too.
func TestListChangedReachesSession(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[:2], Config{})
	for _, d := range eras[1:] {
		changed := make(chan struct{}, 1)
		c := dial(t, url, d, client.OnPromptsChanged(func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}))
		if err := c.Listening(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.AllPrompts(ctxT(t)); err != nil { // the session's fleet connects each server
			t.Fatal(err)
		}
		for _, s := range []*testservers.Server{up.streamable.Server(), up.stateless.Server()} {
			// Nothing tells the test when the session's upstream stream
			// opens: the change is made again until it is heard.
			testkit.Eventually(t, 20*time.Second, d.name+" hearing "+s.Options().Name, func() bool {
				s.NotifyPromptsChanged()
				select {
				case <-changed:
					return true
				case <-time.After(50 * time.Millisecond):
					return false
				}
			})
		}
	}
}

// A tool a 2025-11-25 server runs only as a task is called by clients of
// both eras as a plain tool: the server's Conn asks for the task and
// waits for it.
func TestTaskOnlyTool(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{Tasks: testservers.TaskOptions{Enabled: true}}})
	defer up.Close()
	_, url := startGateway(t, []fleet.Server{{Name: "tasks", Target: client.URL(up.URL)}}, Config{})
	for i, d := range eras[:2] {
		c := dial(t, url, d)
		if got := callText(t, c, "tasks__"+testservers.TaskSleepTool, map[string]any{"ms": 5, "text": "slept"}); got != "slept" {
			t.Errorf("%s: %q", d.name, got)
		}
		if st := up.Server().Stats(); st.TasksCreated != i+1 || st.TaskResults != i+1 {
			t.Errorf("%s: %d tasks created, %d results fetched; want %d", d.name, st.TasksCreated, st.TaskResults, i+1)
		}
	}
}
