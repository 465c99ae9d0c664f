package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// taskScript is an initialize-era (2025-11-25) server inside the instant transport
// whose tools/call of "job" runs as a task: it is working for polls
// tasks/get, then completed. It records the methods it saw, in order.
type taskScript struct {
	mu       sync.Mutex
	seen     []string
	polls    int // tasks/get answered working before completed
	asked    json.RawMessage
	required bool // job's taskSupport is "required" (else "optional")
	noCancel bool // the capabilities leave tasks/cancel out
}

func (s *taskScript) result(m *jsonrpc.Message) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, m.Method)
	support := "optional"
	if s.required {
		support = "required"
	}
	switch m.Method {
	case "initialize":
		cancel := `"cancel":{},`
		if s.noCancel {
			cancel = ""
		}
		return json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{` + cancel + `"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"tasks","version":"1"}}`)
	case "tools/list":
		return json.RawMessage(`{"tools":[{"name":"job","inputSchema":{"type":"object"},"execution":{"taskSupport":"` + support + `"}}]}`)
	case "tools/call":
		var p struct {
			Task json.RawMessage `json:"task"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.asked = p.Task
		if p.Task == nil {
			return json.RawMessage(`{"content":[{"type":"text","text":"plain"}]}`)
		}
		return json.RawMessage(`{"task":{"taskId":"t1","status":"working","createdAt":"now","lastUpdatedAt":"now","ttl":null,"pollInterval":1}}`)
	case "tasks/get":
		status := "working"
		if s.polls == 0 {
			status = "completed"
		} else {
			s.polls--
		}
		return json.RawMessage(fmt.Sprintf(`{"taskId":"t1","status":%q,"createdAt":"now","lastUpdatedAt":"now","ttl":null,"pollInterval":1}`, status))
	case "tasks/result":
		return json.RawMessage(`{"content":[{"type":"text","text":"done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}`)
	}
	return nil
}

// fail refuses a plain call of a job that must run as a task, as
// 2025-11-25 has it (-32601).
func (s *taskScript) fail(m *jsonrpc.Message) *jsonrpc.Error {
	if m.Method != "tools/call" || !s.required || strings.Contains(string(m.Params), `"task"`) {
		return nil
	}
	s.mu.Lock()
	s.seen = append(s.seen, m.Method)
	s.mu.Unlock()
	return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "tool job requires task augmentation")
}

func (s *taskScript) methods() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, " ")
}

func TestTaskFlowInitialize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		required bool
		listed   bool
		asTask   bool
		want     string // the methods after initialize
		text     string
	}{
		{"required, listed", true, true, false, "tools/list tools/call tasks/get tasks/get tasks/get tasks/result", "done"},
		{"required, not listed", true, false, false, "tools/call tools/list tools/call tasks/get tasks/get tasks/get tasks/result", "done"},
		{"optional, plain", false, true, false, "tools/list tools/call", "plain"},
		{"optional, AsTask", false, true, true, "tools/list tools/call tasks/get tasks/get tasks/get tasks/result", "done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &taskScript{polls: 2, required: tc.required}
			srv := newInstantTransport()
			srv.result = s.result
			srv.fail = s.fail
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Open(ctx, srv, WithTaskPolicy(TaskPolicy{MinPoll: time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.listed {
				if _, err := c.AllTools(ctx); err != nil {
					t.Fatal(err)
				}
			}
			var statuses []mcp.TaskStatus
			opts := []CallOption{OnTask(func(t mcp.Task) { statuses = append(statuses, t.Status) })}
			if tc.asTask {
				opts = append(opts, AsTask())
			}
			res, err := c.CallTool(ctx, "job", nil, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].Text; got != tc.text {
				t.Errorf("result %q, want %q", got, tc.text)
			}
			if got := s.methods(); !strings.HasSuffix(got, tc.want) {
				t.Errorf("methods %q, want them to end with %q", got, tc.want)
			}
			if tc.text == "done" && fmt.Sprint(statuses) != "[working completed]" {
				t.Errorf("OnTask saw %v", statuses)
			}
		})
	}
}

// extScript is a 2026-07-28 server with the tasks extension inside the
// instant transport: tools/call of "job" becomes a task that asks for a
// name (input_required, key "who") and then completes with it.
type extScript struct {
	mu      sync.Mutex
	seen    []string
	metaOK  bool   // every request declared the extension
	name    string // the answer tasks/update brought
	updates int
}

func (s *extScript) result(m *jsonrpc.Message) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, m.Method)
	var p struct {
		Meta struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
		InputResponses map[string]struct {
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		} `json:"inputResponses"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if _, ok := p.Meta.Caps.Extensions[mcp.ExtensionTasks]; !ok {
		s.metaOK = false
	}
	task := func(status, extra string) json.RawMessage {
		return json.RawMessage(`{"resultType":"complete","taskId":"x9","status":"` + status + `","createdAt":"a","lastUpdatedAt":"b","ttlMs":60000,"pollIntervalMs":1` + extra + `}`)
	}
	switch m.Method {
	case "server/discover":
		return json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`)
	case "tools/call":
		return json.RawMessage(`{"resultType":"task","taskId":"x9","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,"pollIntervalMs":1}`)
	case "tasks/get":
		switch {
		case s.name != "":
			return task("completed", `,"result":{"content":[{"type":"text","text":"hello `+s.name+`"}]}`)
		default:
			return task("input_required", `,"inputRequests":{"who":{"method":"elicitation/create","params":{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}`)
		}
	case "tasks/update":
		s.updates++
		s.name = p.InputResponses["who"].Content.Name
		return json.RawMessage(`{"resultType":"complete"}`)
	}
	return nil
}

func TestTaskFlowExtension(t *testing.T) {
	s := &extScript{metaOK: true}
	srv := newInstantTransport()
	srv.result = s.result
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	asked := 0
	c, err := Open(ctx, srv, WithTaskPolicy(TaskPolicy{MinPoll: time.Millisecond}),
		WithElicitation(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Info().Era != mcp.EraStateless {
		t.Fatalf("era %v", c.Info().Era)
	}
	res, err := c.CallTool(ctx, "job", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].Text; got != "hello Ada" {
		t.Errorf("result %q", got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := strings.Join(s.seen, " "); got != "server/discover tools/call tasks/get tasks/update tasks/get" {
		t.Errorf("methods %q", got)
	}
	if !s.metaOK || asked != 1 || s.updates != 1 {
		t.Errorf("extension declared on every request %v, elicitations %d, updates %d", s.metaOK, asked, s.updates)
	}
}

// A call whose context ends while its task runs fails with a *TaskError
// that names the task and matches both the context's error and
// jsonrpc.ErrOutcomeUnknown, and the server is asked to cancel the task;
// a task the server forgets (-32602 to tasks/get) fails the same way,
// without a cancel.
func TestTaskWaitEnds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		forget     bool
		noCancel   bool
		wantCancel bool
	}{
		{"context ends", false, false, true},
		{"context ends, no tasks/cancel offered", false, true, false},
		{"server forgets the task", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &taskScript{polls: 1 << 30, required: true, noCancel: tc.noCancel}
			srv := newInstantTransport()
			srv.result = s.result
			polled := make(chan struct{}, 1)
			cancelled := make(chan string, 1)
			srv.fail = func(m *jsonrpc.Message) *jsonrpc.Error {
				switch m.Method {
				case "tasks/get":
					select {
					case polled <- struct{}{}:
					default:
					}
					if tc.forget {
						return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found")
					}
				case "tasks/cancel":
					var p mcp.TaskIDParams
					_ = json.Unmarshal(m.Params, &p)
					cancelled <- p.TaskID
				}
				return s.fail(m)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Open(ctx, srv, WithTaskPolicy(TaskPolicy{MinPoll: time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.AllTools(ctx); err != nil {
				t.Fatal(err)
			}
			callCtx, stop := context.WithCancel(ctx)
			go func() {
				<-polled
				if !tc.forget {
					stop()
				}
			}()
			_, err = c.CallTool(callCtx, "job", nil)
			stop()
			var te *TaskError
			if !errors.As(err, &te) || te.TaskID != "t1" || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Fatalf("err = %v, want a *TaskError for t1 that matches ErrOutcomeUnknown", err)
			}
			if !tc.forget {
				says := "the server was asked to cancel it"
				if tc.noCancel {
					says = "the server takes no tasks/cancel"
				}
				if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), says) {
					t.Errorf("err = %v, want it to match context.Canceled and say %q", err, says)
				}
			}
			if tc.noCancel {
				select {
				case id := <-cancelled:
					t.Errorf("tasks/cancel for %q, which the server does not offer", id)
				default:
				}
			}
			if tc.wantCancel {
				select {
				case id := <-cancelled:
					if id != "t1" {
						t.Errorf("tasks/cancel for %q", id)
					}
				case <-ctx.Done():
					t.Fatal("no tasks/cancel")
				}
			}
			if tc.forget {
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "no longer knows") {
					t.Errorf("err = %v, want the server's -32602 and why", err)
				}
			}
		})
	}
}

// The progress token of a call that became a task stays the call's while
// the task runs: the server's notifications/progress for it, sent between
// two polls, reach the call's WithProgress.
func TestTaskKeepsProgress(t *testing.T) {
	s := &taskScript{polls: 1 << 30, required: true}
	srv := newInstantTransport()
	got := make(chan struct{})
	var token json.RawMessage
	srv.result = func(m *jsonrpc.Message) json.RawMessage {
		switch m.Method {
		case "tools/call":
			var p struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			token = p.Meta.ProgressToken
		case "tasks/get":
			select {
			case <-got: // the progress arrived: the task ends
				return json.RawMessage(`{"taskId":"t1","status":"completed","createdAt":"now","lastUpdatedAt":"now","ttl":null,"pollInterval":1}`)
			default:
			}
			// Between two polls, as a task that runs reports progress.
			srv.in <- &jsonrpc.Message{Method: "notifications/progress",
				Params: json.RawMessage(`{"progressToken":` + string(token) + `,"progress":1,"total":2}`)}
		}
		return s.result(m)
	}
	srv.fail = s.fail
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Open(ctx, srv, WithTaskPolicy(TaskPolicy{MinPoll: time.Millisecond, MaxPoll: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.AllTools(ctx); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	res, err := c.CallTool(ctx, "job", nil, WithProgress(func(p mcp.ProgressParams) {
		if p.Progress == 1 && p.Total == 2 {
			once.Do(func() { close(got) })
		}
	}))
	if err != nil || res.Content[0].Text != "done" {
		t.Fatalf("%v, %v: want the task's result once its progress came", res, err)
	}
}

// A tasks/cancel sent aside goes out though the Conn failed its calls
// already: Close fails them first, then lets what was sent aside go out
// before it closes the transport.
func TestTaskCancelSentWhileClosing(t *testing.T) {
	s := &taskScript{required: true}
	srv := newInstantTransport()
	srv.result = func(m *jsonrpc.Message) json.RawMessage {
		if m.Method == "tasks/cancel" {
			return json.RawMessage(`{"taskId":"t1","status":"cancelled","createdAt":"now","lastUpdatedAt":"now","ttl":null}`)
		}
		return s.result(m)
	}
	cancelled := make(chan string, 1)
	srv.fail = func(m *jsonrpc.Message) *jsonrpc.Error {
		if m.Method == "tasks/cancel" {
			var p mcp.TaskIDParams
			_ = json.Unmarshal(m.Params, &p)
			cancelled <- p.TaskID
		}
		return s.fail(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Open(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.fail(ErrClosed, true) // what Close does first
	if err := c.requestAside(ctx, "tasks/cancel", &mcp.TaskIDParams{TaskID: "t1"}); err != nil {
		t.Errorf("tasks/cancel sent aside while closing: %v", err)
	}
	select {
	case id := <-cancelled:
		if id != "t1" {
			t.Errorf("tasks/cancel for %q, want t1", id)
		}
	case <-ctx.Done():
		t.Fatal("no tasks/cancel reached the server")
	}
}
