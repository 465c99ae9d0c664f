package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// countingUp is an upstream that counts the tool calls it runs and the
// listings it gives.
type countingUp struct {
	mu    sync.Mutex
	tools []mcp.Tool
	calls map[string]int
	lists int
}

func newCountingUp(tools ...mcp.Tool) *countingUp {
	return &countingUp{tools: tools, calls: map[string]int{}}
}

func (f *countingUp) Info() client.Info {
	return client.Info{Era: mcp.EraInitialize, ProtocolVersion: mcp.LatestInitializeVersion}
}

func (f *countingUp) Call(ctx context.Context, method string, params, result any, opts ...client.CallOption) error {
	if method == "tools/call" {
		name, _, _ := callOf(params)
		f.mu.Lock()
		f.calls[name]++
		f.mu.Unlock()
	}
	if r, ok := result.(*json.RawMessage); ok {
		*r = json.RawMessage(`{"content":[{"type":"text","text":"ran"}]}`)
	}
	return nil
}

func (f *countingUp) Tools(ctx context.Context) iter.Seq2[mcp.Tool, error] {
	f.mu.Lock()
	f.lists++
	tools := append([]mcp.Tool(nil), f.tools...)
	f.mu.Unlock()
	return func(yield func(mcp.Tool, error) bool) {
		for _, t := range tools {
			if !yield(t, nil) {
				return
			}
		}
	}
}

func (f *countingUp) ran(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

func (f *countingUp) listings() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists
}

func (f *countingUp) setTools(tools ...mcp.Tool) {
	f.mu.Lock()
	f.tools = tools
	f.mu.Unlock()
}

func (f *countingUp) Listening(context.Context) error                     { return nil }
func (f *countingUp) Subscribe(context.Context, string) error             { return nil }
func (f *countingUp) Unsubscribe(context.Context, string) error           { return nil }
func (f *countingUp) SetLogLevel(context.Context, mcp.LoggingLevel) error { return nil }
func (f *countingUp) NotifyRootsChanged(context.Context) error            { return nil }
func (f *countingUp) Close() error                                        { return nil }

var (
	hintTrue  = true
	hintFalse = false
)

// tool is a tool with the annotations given ("destructive", "readOnly",
// "openWorld"), each true.
func approvalTool(name string, hintOf ...string) mcp.Tool {
	t := mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
	a := &mcp.ToolAnnotations{DestructiveHint: &hintFalse}
	for _, h := range hintOf {
		switch h {
		case "destructive":
			a.DestructiveHint = &hintTrue
		case "readOnly":
			a.ReadOnlyHint = &hintTrue
		case "openWorld":
			a.OpenWorldHint = &hintTrue
		}
	}
	t.Annotations = a
	return t
}

// servers maps fleet names to servers by the prefix before "__".
func serverOfName(fleetName string) (string, bool) {
	s, _, ok := strings.Cut(fleetName, "__")
	return s, ok
}

// decisionLog records what OnDecision is told.
type decisionLog struct {
	mu  sync.Mutex
	all []Decision
}

func (d *decisionLog) add(x Decision) {
	d.mu.Lock()
	d.all = append(d.all, x)
	d.mu.Unlock()
}

func (d *decisionLog) list() []Decision {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Decision(nil), d.all...)
}

// gate wraps up in an approver of a for one downstream client whose
// questions elicit answers (nil: a client that cannot be asked).
func gateUp(t *testing.T, a Approvals, up bridge.Upstream, elicit func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error), log *slog.Logger) (bridge.Upstream, *approver) {
	t.Helper()
	ap, err := newApprovals(a, "team", serverOfName, log)
	if err != nil {
		t.Fatal(err)
	}
	dial := ap.wrap(func(ctx context.Context, d bridge.Downstream) (bridge.Upstream, error) { return up, nil })
	u, err := dial(context.Background(), bridge.Downstream{Elicit: elicit})
	if err != nil {
		t.Fatal(err)
	}
	return u, ap
}

func callGated(ctx context.Context, u bridge.Upstream, name string, args map[string]any) error {
	var raw json.RawMessage
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	return u.Call(ctx, "tools/call", json.RawMessage(params), &raw)
}

// refusal checks that err says machine-readably that the call did not
// run, and who refused it.
func wantRefusal(t *testing.T, err error, by string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("want a refusal, got %v", err)
	}
	if rpc.Outcome() != jsonrpc.OutcomeNotRun || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("outcome %q in %s", rpc.Outcome(), rpc.Data)
	}
	var data struct {
		Approval struct{ By string } `json:"io.github.anymcp/approval"`
	}
	if json.Unmarshal(rpc.Data, &data) != nil || data.Approval.By != by {
		t.Fatalf("data %s, want by %q", rpc.Data, by)
	}
	if !strings.Contains(rpc.Message, "not run") {
		t.Fatalf("message %q", rpc.Message)
	}
}

func acceptWith(approve any) func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"approve": approve}}, nil
	}
}

// A destructive tool runs once the calling client approves it; the
// question names the tool, its server and its arguments, and asks for
// one boolean.
func TestApprovalAskedAndRun(t *testing.T) {
	up := newCountingUp(approvalTool("files__delete", "destructive"), approvalTool("files__read", "readOnly"))
	var seen []*mcp.ElicitParams
	var rec decisionLog
	u, _ := gateUp(t, Approvals{OnDecision: rec.add}, up, func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		seen = append(seen, p)
		return acceptWith(true)(ctx, p)
	}, nil)
	if err := callGated(t.Context(), u, "files__delete", map[string]any{"path": "/tmp/x"}); err != nil {
		t.Fatal(err)
	}
	if up.ran("files__delete") != 1 || len(seen) != 1 {
		t.Fatalf("ran %d, asked %d", up.ran("files__delete"), len(seen))
	}
	q := seen[0]
	for _, want := range []string{`"files__delete"`, `"files"`, `{"path":"/tmp/x"}`, "it is marked destructive"} {
		if !strings.Contains(q.Message, want) {
			t.Errorf("question %q lacks %s", q.Message, want)
		}
	}
	if q.Mode != "" && q.Mode != mcp.ElicitModeForm || string(q.RequestedSchema) != string(approvalSchema) {
		t.Errorf("mode %q, schema %s", q.Mode, q.RequestedSchema)
	}
	// A read-only tool is not asked about.
	if err := callGated(t.Context(), u, "files__read", nil); err != nil || up.ran("files__read") != 1 || len(seen) != 1 {
		t.Fatalf("read: %v, ran %d, asked %d", err, up.ran("files__read"), len(seen))
	}
	if d := rec.list(); len(d) != 1 || !d[0].Approved || d[0].By != "client" || d[0].Tool != "files__delete" || d[0].Server != "files" || d[0].View != "team" || d[0].At.IsZero() {
		t.Fatalf("decisionLog %+v", d)
	}
}

// Every answer but accept with approve true refuses: the call is not
// run, and the refusal says so machine-readably.
func TestApprovalRefused(t *testing.T) {
	answers := map[string]func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error){
		"decline": func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
		},
		"cancel": func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
		},
		"no":          acceptWith(false),
		"string true": acceptWith("true"),
		"empty accept": func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
		},
		"error": func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "no elicitation here")
		},
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			up := newCountingUp(approvalTool("files__delete", "destructive"))
			var rec decisionLog
			u, _ := gateUp(t, Approvals{Default: true, OnDecision: rec.add}, up, answer, nil)
			wantRefusal(t, callGated(t.Context(), u, "files__delete", map[string]any{"path": "/"}), "client")
			if n := up.ran("files__delete"); n != 0 {
				t.Fatalf("ran %d times", n)
			}
			if d := rec.list(); len(d) != 1 || d[0].Approved || d[0].By != "client" {
				t.Fatalf("decisionLog %+v", d)
			}
		})
	}
}

// A client that cannot be asked gets the policy's Default, both ways.
func TestApprovalDefault(t *testing.T) {
	for _, allow := range []bool{false, true} {
		up := newCountingUp(approvalTool("files__delete", "destructive"))
		var rec decisionLog
		u, _ := gateUp(t, Approvals{Default: allow, OnDecision: rec.add}, up, nil, nil)
		err := callGated(t.Context(), u, "files__delete", nil)
		if allow {
			if err != nil || up.ran("files__delete") != 1 {
				t.Fatalf("Default true: %v, ran %d", err, up.ran("files__delete"))
			}
		} else {
			wantRefusal(t, err, "policy")
			if up.ran("files__delete") != 0 {
				t.Fatal("Default false ran the tool")
			}
		}
		if d := rec.list(); len(d) != 1 || d[0].Approved != allow || d[0].By != "policy" {
			t.Fatalf("Default %v: decisionLog %+v", allow, d)
		}
	}
}

// Require patterns gate tools that are not destructive: by fleet name,
// by server, by annotation. Others run unasked.
func TestApprovalRequirePattern(t *testing.T) {
	closed := approvalTool("mail__list")
	closed.Annotations.OpenWorldHint = &hintFalse
	// web__search sends no openWorldHint: the specification's default,
	// true, holds, as it does in a View's patterns.
	up := newCountingUp(approvalTool("files__read", "readOnly"), approvalTool("web__fetch", "openWorld"), approvalTool("git__log", "readOnly"), closed, approvalTool("web__search"))
	u, _ := gateUp(t, Approvals{Require: []string{"files__*", "server:g?t", "hint:openWorld"}}, up, nil, nil)
	for _, name := range []string{"files__read", "web__fetch", "git__log", "web__search"} {
		wantRefusal(t, callGated(t.Context(), u, name, nil), "policy")
		if up.ran(name) != 0 {
			t.Fatalf("%s ran", name)
		}
	}
	if err := callGated(t.Context(), u, "mail__list", nil); err != nil || up.ran("mail__list") != 1 {
		t.Fatalf("mail__list: %v, ran %d", err, up.ran("mail__list"))
	}
	if _, err := newApprovals(Approvals{Require: []string{"hint:dangerous"}}, "", serverOfName, nil); err == nil {
		t.Fatal("unknown hint accepted")
	}
	if _, err := newApprovals(Approvals{Require: []string{"server:["}}, "", serverOfName, nil); err == nil {
		t.Fatal("bad glob accepted")
	}
}

// learning is an upstream whose tools' servers are known only once they
// were listed, as the gateway's router learns them.
type learning struct {
	*countingUp
	mu      sync.Mutex
	servers map[string]string
}

func (l *learning) Tools(ctx context.Context) iter.Seq2[mcp.Tool, error] {
	return func(yield func(mcp.Tool, error) bool) {
		for t, err := range l.countingUp.Tools(ctx) {
			if err == nil {
				l.mu.Lock()
				l.servers[t.Name], _ = serverOfName(t.Name)
				l.mu.Unlock()
			}
			if !yield(t, err) {
				return
			}
		}
	}
}

func (l *learning) lookup(name string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.servers[name]
	return s, ok
}

// A server pattern is judged on the server the router knows after a
// listing, not refused for a tool not listed yet.
func TestApprovalServerLearned(t *testing.T) {
	up := &learning{countingUp: newCountingUp(approvalTool("files__read", "readOnly"), approvalTool("db__query", "readOnly")), servers: map[string]string{}}
	ap, err := newApprovals(Approvals{SkipDestructive: true, Require: []string{"server:db"}}, "", up.lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := ap.wrap(func(context.Context, bridge.Downstream) (bridge.Upstream, error) { return up, nil })(t.Context(), bridge.Downstream{})
	if err := callGated(t.Context(), u, "files__read", nil); err != nil || up.ran("files__read") != 1 {
		t.Fatalf("files__read: %v", err)
	}
	wantRefusal(t, callGated(t.Context(), u, "db__query", nil), "policy")
	// A server never learned is held: what the gateway cannot see it
	// does not trust.
	wantRefusal(t, callGated(t.Context(), u, "mail__send", nil), "policy")
	if up.ran("db__query")+up.ran("mail__send") != 0 || up.listings() != 1 {
		t.Fatalf("ran %v, %d listings", up.calls, up.listings())
	}
}

// SkipDestructive leaves destructive tools to the Require patterns.
func TestApprovalSkipDestructive(t *testing.T) {
	up := newCountingUp(approvalTool("files__delete", "destructive"), approvalTool("db__drop", "destructive"))
	u, _ := gateUp(t, Approvals{SkipDestructive: true, Require: []string{"db__*"}}, up, nil, nil)
	if err := callGated(t.Context(), u, "files__delete", nil); err != nil || up.ran("files__delete") != 1 {
		t.Fatalf("files__delete: %v", err)
	}
	wantRefusal(t, callGated(t.Context(), u, "db__drop", nil), "policy")
	if up.ran("db__drop") != 0 {
		t.Fatal("db__drop ran")
	}
	// Without SkipDestructive the same tool is held.
	u, _ = gateUp(t, Approvals{}, up, nil, nil)
	wantRefusal(t, callGated(t.Context(), u, "files__delete", nil), "policy")
	if up.ran("files__delete") != 1 {
		t.Fatal("files__delete ran unapproved")
	}
}

// No answer within Timeout (default 2 min) is a denial "by timeout".
func TestApprovalTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := newCountingUp(approvalTool("files__delete", "destructive"))
		var rec decisionLog
		u, _ := gateUp(t, Approvals{Default: true, OnDecision: rec.add}, up, func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, nil)
		start := time.Now()
		wantRefusal(t, callGated(t.Context(), u, "files__delete", nil), "timeout")
		if waited := time.Since(start); waited != 2*time.Minute {
			t.Fatalf("waited %v", waited)
		}
		if d := rec.list(); up.ran("files__delete") != 0 || len(d) != 1 || d[0].By != "timeout" || d[0].Approved {
			t.Fatalf("ran %d, decisionLog %+v", up.ran("files__delete"), d)
		}
	})
}

// A call given up while its client is asked runs nothing and decides
// nothing.
func TestApprovalCancelled(t *testing.T) {
	up := newCountingUp(approvalTool("files__delete", "destructive"))
	var rec decisionLog
	ctx, cancel := context.WithCancel(t.Context())
	u, _ := gateUp(t, Approvals{Default: true, OnDecision: rec.add}, up, func(ectx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		cancel()
		<-ectx.Done()
		return nil, ectx.Err()
	}, nil)
	err := callGated(ctx, u, "files__delete", nil)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Outcome() != jsonrpc.OutcomeNotRun || !strings.Contains(rpc.Message, "cancelled") {
		t.Fatalf("%v", err)
	}
	if up.ran("files__delete") != 0 || len(rec.list()) != 0 {
		t.Fatalf("ran %d, decisions %+v", up.ran("files__delete"), rec.list())
	}
}

// Decisions are logged at Info with who decided; the arguments' values
// never are, at any level.
func TestApprovalLogged(t *testing.T) {
	var rec logtest.Recorder
	up := newCountingUp(approvalTool("files__delete", "destructive"))
	u, _ := gateUp(t, Approvals{}, up, func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
	}, slog.New(&rec))
	wantRefusal(t, callGated(t.Context(), u, "files__delete", map[string]any{"path": "/home/ada/secret-plans.txt"}), "client")
	var found bool
	for _, r := range rec.Records() {
		attrs := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			if strings.Contains(a.Value.String(), "secret-plans") {
				t.Errorf("log %q carries an argument: %s=%s", r.Message, a.Key, a.Value)
			}
			return true
		})
		if strings.Contains(r.Message, "secret-plans") {
			t.Errorf("log message %q carries an argument", r.Message)
		}
		if r.Level == slog.LevelInfo && attrs["tool"] == "files__delete" && attrs["server"] == "files" && attrs["view"] == "team" && attrs["approved"] == "false" && attrs["by"] == "client" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no decision logged: %v", rec.Records())
	}
}

// Many calls wait for their answers at once, each asking its own client:
// no call waits for another's answer.
func TestApprovalConcurrent(t *testing.T) {
	const n = 16
	up := newCountingUp(approvalTool("files__delete", "destructive"))
	var rec decisionLog
	ap, err := newApprovals(Approvals{OnDecision: rec.add}, "", serverOfName, nil)
	if err != nil {
		t.Fatal(err)
	}
	dial := ap.wrap(func(context.Context, bridge.Downstream) (bridge.Upstream, error) { return up, nil })
	asked := make(chan int, n)
	release := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		u, err := dial(t.Context(), bridge.Downstream{Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked <- i
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"approve": i%2 == 0}}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		go func() { errs <- callGated(t.Context(), u, "files__delete", map[string]any{"i": i}) }()
	}
	seen := map[int]bool{}
	for range n {
		select {
		case i := <-asked:
			seen[i] = true
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of %d clients asked at once", len(seen), n)
		}
	}
	close(release)
	refused := 0
	for range n {
		if err := <-errs; err != nil {
			wantRefusal(t, err, "client")
			refused++
		}
	}
	if len(seen) != n || refused != n/2 || up.ran("files__delete") != n/2 || len(rec.list()) != n {
		t.Fatalf("asked %d, refused %d, ran %d, decisionLog %d", len(seen), refused, up.ran("files__delete"), len(rec.list()))
	}
}

// The catalogue is listed once, again after tools/list_changed, and for
// a name it lacks at most once a second; a tool no listing has is
// refused as unknown, and never runs.
func TestApprovalRelist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := newCountingUp(approvalTool("files__read", "readOnly"))
		u, ap := gateUp(t, Approvals{}, up, nil, nil)
		for range 3 {
			if err := callGated(t.Context(), u, "files__read", nil); err != nil {
				t.Fatal(err)
			}
		}
		if up.listings() != 1 {
			t.Fatalf("%d listings", up.listings())
		}
		// files__write is new and not listed yet: listed at the first
		// call (a second after the last listing), then not again
		// within the second.
		up.setTools(approvalTool("files__read", "readOnly"), approvalTool("files__write"))
		time.Sleep(time.Second)
		wantUnknownTool(t, callGated(t.Context(), u, "files__gone", nil))
		if up.listings() != 2 {
			t.Fatalf("unknown name: %d listings", up.listings())
		}
		wantUnknownTool(t, callGated(t.Context(), u, "files__gone", nil))
		if err := callGated(t.Context(), u, "files__write", nil); err != nil || up.listings() != 2 {
			t.Fatalf("files__write: %v, %d listings", err, up.listings())
		}
		// files__write becomes destructive: list_changed makes the
		// next call list again at once.
		up.setTools(approvalTool("files__read", "readOnly"), approvalTool("files__write", "destructive"))
		ap.changed()
		wantRefusal(t, callGated(t.Context(), u, "files__write", nil), "policy")
		if up.listings() != 3 || up.ran("files__write") != 1 {
			t.Fatalf("%d listings, ran %d", up.listings(), up.ran("files__write"))
		}
	})
}

// destructiveMarks are the tools a marked upstream lists as destructive.
type destructiveMarks struct {
	mu    sync.Mutex
	names map[string]bool
}

func (m *destructiveMarks) set(name string) {
	m.mu.Lock()
	m.names[name] = true
	m.mu.Unlock()
}

func (m *destructiveMarks) has(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.names[name]
}

// markedUp is an upstream whose listing marks some tools destructive.
type markedUp struct {
	bridge.Upstream
	destructiveMarks *destructiveMarks
}

func (m markedUp) Tools(ctx context.Context) iter.Seq2[mcp.Tool, error] {
	return func(yield func(mcp.Tool, error) bool) {
		for t, err := range m.Upstream.Tools(ctx) {
			if err == nil && m.destructiveMarks.has(t.Name) {
				t.Annotations = &mcp.ToolAnnotations{DestructiveHint: &hintTrue}
			}
			if !yield(t, err) {
				return
			}
		}
	}
}

// startGated serves a test server's tools through a bridge whose
// upstream connections are gated by a; the tools named in destructive
// are listed as destructive.
func startGated(t *testing.T, a Approvals, destructive ...string) (url string, up *testservers.HTTPServer, m *destructiveMarks, ap *approver) {
	t.Helper()
	up = testservers.StartStreamable(testservers.HTTPOptions{})
	t.Cleanup(up.Close)
	ap, err := newApprovals(a, "", func(string) (string, bool) { return "everything", true }, nil)
	if err != nil {
		t.Fatal(err)
	}
	m = &destructiveMarks{names: map[string]bool{}}
	for _, n := range destructive {
		m.set(n)
	}
	dial := bridge.DialTarget(client.URL(up.URL))
	b, err := bridge.New(t.Context(), ap.wrap(func(ctx context.Context, d bridge.Downstream) (bridge.Upstream, error) {
		u, err := dial(ctx, d)
		if err != nil {
			return nil, err
		}
		return markedUp{Upstream: u, destructiveMarks: m}, nil
	}), bridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(func() {
		_ = b.Close()
		srv.Close()
	})
	return srv.URL + "/mcp", up, m, ap
}

// approvalEras are the downstream clients of the end-to-end tests: a 2025
// session's, and a stateless client's (whose questions come as
// input_required rounds, answered by its handler).
var approvalEras = map[string]negotiate.EraPolicy{"session": negotiate.InitializeOnly, "stateless": negotiate.StatelessOnly}

func dialGated(t *testing.T, url string, era negotiate.EraPolicy, opts ...client.Option) *client.Conn {
	t.Helper()
	conn, err := client.Dial(t.Context(), client.URL(url), append([]client.Option{client.WithEra(era)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// checkNoLeaks checks, after every cleanup of t, that t left no goroutine.
func checkNoLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

func echoRuns(up *testservers.HTTPServer) int { return up.Server().Stats().ToolCalls["echo"] }

// Through the bridge, clients of both eras are asked by elicitation; a
// yes runs the tool once, a no runs nothing and says so.
func TestApprovalThroughBridge(t *testing.T) {
	for name, era := range approvalEras {
		t.Run(name, func(t *testing.T) {
			checkNoLeaks(t)
			var rec decisionLog
			url, up, _, _ := startGated(t, Approvals{Default: true, OnDecision: rec.add}, "echo")
			var mu sync.Mutex
			var asked []string
			answer := true
			conn := dialGated(t, url, era, client.WithElicitation(func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, p.Message)
				return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"approve": answer}}, nil
			}))
			if want := map[string]mcp.Era{"session": mcp.EraInitialize, "stateless": mcp.EraStateless}[name]; conn.Info().Era != want {
				t.Fatalf("client era %s", conn.Info().Era)
			}
			res, err := conn.CallTool(t.Context(), "echo", map[string]any{"text": "hi"})
			if err != nil || res.IsError || echoRuns(up) != 1 {
				t.Fatalf("approved call: %v %+v, ran %d", err, res, echoRuns(up))
			}
			mu.Lock()
			answer = false
			mu.Unlock()
			_, err = conn.CallTool(t.Context(), "echo", map[string]any{"text": "no"})
			wantRefusal(t, err, "client")
			if echoRuns(up) != 1 {
				t.Fatalf("refused call ran: %d", echoRuns(up))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 2 || !strings.Contains(asked[0], `"echo"`) || !strings.Contains(asked[0], `{"text":"hi"}`) {
				t.Fatalf("asked %q", asked)
			}
			if d := rec.list(); len(d) != 2 || !d[0].Approved || d[1].Approved || d[0].By != "client" || d[1].By != "client" {
				t.Fatalf("decisionLog %+v", d)
			}
		})
	}
}

// Through the bridge, a client that declared no elicitation gets the
// policy's Default, in both eras.
func TestApprovalThroughBridgeDefault(t *testing.T) {
	for name, era := range approvalEras {
		for _, allow := range []bool{false, true} {
			t.Run(name+"/"+strconv.FormatBool(allow), func(t *testing.T) {
				checkNoLeaks(t)
				var rec decisionLog
				url, up, _, _ := startGated(t, Approvals{Default: allow, OnDecision: rec.add}, "echo")
				conn := dialGated(t, url, era)
				_, err := conn.CallTool(t.Context(), "echo", map[string]any{"text": "hi"})
				if allow {
					if err != nil || echoRuns(up) != 1 {
						t.Fatalf("%v, ran %d", err, echoRuns(up))
					}
				} else {
					wantRefusal(t, err, "policy")
					if echoRuns(up) != 0 {
						t.Fatalf("ran %d", echoRuns(up))
					}
				}
				if d := rec.list(); len(d) != 1 || d[0].By != "policy" || d[0].Approved != allow {
					t.Fatalf("decisionLog %+v", d)
				}
			})
		}
	}
}

// A tool that becomes destructive is gated from the upstream's
// tools/list_changed on.
func TestApprovalListChangedThroughBridge(t *testing.T) {
	checkNoLeaks(t)
	url, up, m, ap := startGated(t, Approvals{})
	conn := dialGated(t, url, negotiate.InitializeOnly)
	if _, err := conn.CallTool(t.Context(), "echo", map[string]any{"text": "hi"}); err != nil || echoRuns(up) != 1 {
		t.Fatalf("%v, ran %d", err, echoRuns(up))
	}
	m.set("echo")
	up.Server().NotifyListChanged()
	testkit.Eventually(t, 10*time.Second, "tools/list_changed", func() bool {
		ap.mu.Lock()
		defer ap.mu.Unlock()
		return ap.gen > 0
	})
	_, err := conn.CallTool(t.Context(), "echo", map[string]any{"text": "again"})
	wantRefusal(t, err, "policy")
	if echoRuns(up) != 1 {
		t.Fatalf("ran %d", echoRuns(up))
	}
}

// BenchmarkApprovalPassThrough is what the gate costs a call that needs
// no approval, beyond the upstream's own.
func BenchmarkApprovalPassThrough(b *testing.B) {
	up := newCountingUp(approvalTool("files__read", "readOnly"))
	ap, err := newApprovals(Approvals{Require: []string{"server:db"}}, "", serverOfName, nil)
	if err != nil {
		b.Fatal(err)
	}
	u, _ := ap.wrap(func(context.Context, bridge.Downstream) (bridge.Upstream, error) { return up, nil })(b.Context(), bridge.Downstream{})
	params := json.RawMessage(`{"name":"files__read","arguments":{"path":"/etc/hosts","limit":100}}`)
	for _, c := range []struct {
		name string
		u    bridge.Upstream
	}{{"direct", up}, {"gated", u}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var raw json.RawMessage
			for b.Loop() {
				if err := c.u.Call(b.Context(), "tools/call", params, &raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Params the gate could read otherwise than the core or a server are
// refused, not passed on: a second name, a name in other letter case,
// a second set of arguments, no name at all.
func TestApprovalAmbiguousParams(t *testing.T) {
	up := newCountingUp(approvalTool("files__read", "readOnly"), approvalTool("files__delete", "destructive"))
	u, _ := gateUp(t, Approvals{}, up, nil, nil)
	for _, params := range []string{
		`{"name":"files__read","name":"files__delete"}`,
		`{"name":"files__read","NAME":"files__delete"}`,
		`{"Name":"files__delete","name":"files__read"}`,
		`{"NAME":"files__delete"}`,
		`{"name":"files__read","arguments":{},"arguments":{"path":"/"}}`,
		`{"name":"files__read","Arguments":{"path":"/"}}`,
		`{"arguments":{}}`,
		`{"name":7}`,
		`["files__read"]`,
	} {
		var raw json.RawMessage
		err := u.Call(t.Context(), "tools/call", json.RawMessage(params), &raw)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Outcome() != jsonrpc.OutcomeNotRun {
			t.Errorf("%s: %v", params, err)
		}
	}
	if up.ran("files__read")+up.ran("files__delete") != 0 {
		t.Fatalf("ran %v", up.calls)
	}
	// Other members, and typed params, pass.
	var raw json.RawMessage
	if err := u.Call(t.Context(), "tools/call", json.RawMessage(`{"_meta":{"name":"x"},"name":"files__read","arguments":{"name":"y"}}`), &raw); err != nil {
		t.Fatal(err)
	}
	if err := u.Call(t.Context(), "tools/call", &mcp.CallToolParams{Name: "files__read"}, &raw); err != nil || up.ran("files__read") != 2 {
		t.Fatalf("%v, ran %d", err, up.ran("files__read"))
	}
}

// The gate reads a tool call's name and arguments as encoding/json reads
// them into a map (as the core does), or refuses the call.
func FuzzApprovalCallOf(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","arguments":{"x":1}}`, `{"name":"a","name":"b"}`, `{"NAME":"a"}`, `{"name":"\u0061"}`,
		`{"na\u006de":"a","arguments":[1]}`, "{\"name\":\"\xff\"}", `{"name":"a"} x`, `{"name":"a","arguments":{"k":"v","k":"w"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		name, args, err := callOf(json.RawMessage(raw))
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			// The core refuses what encoding/json cannot read.
			return
		}
		var want string
		if json.Unmarshal(m["name"], &want) != nil || want != name {
			t.Fatalf("%q: gate read name %q, encoding/json %q", raw, name, want)
		}
		if !bytes.Equal(args, m["arguments"]) {
			t.Fatalf("%q: gate read arguments %q, encoding/json %q", raw, args, m["arguments"])
		}
	})
}

// wantUnknownTool fails unless err refuses a call as an unknown tool:
// -32602, outcome not run.
func wantUnknownTool(t *testing.T, err error) {
	t.Helper()
	var re *jsonrpc.Error
	if !errors.As(err, &re) || re.Code != jsonrpc.CodeInvalidParams || re.Outcome() != jsonrpc.OutcomeNotRun || !strings.Contains(re.Message, "unknown tool") {
		t.Fatalf("%v, want an unknown-tool refusal that did not run", err)
	}
}
