package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// How a waiting call reads what servers answer about its task: numbers
// written as any JSON number, handles, ids and statuses that are not
// what the Conn expects.

// Initialize and server/discover answers of servers that offer tasks:
// 2025-11-25's for tools/call, and the 2026-07-28 extension.
const (
	initializeTasksInit = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"tasks","version":"1"}}`
	statelessTasksInit  = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	requiredJobList     = `{"tools":[{"name":"job","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`
)

// scriptedTasks opens a Conn over the instant transport to a server that
// answers each method as answers says (nil: the transport's default), and
// polls as often as the server asks.
func scriptedTasks(t *testing.T, answers map[string]string, opts ...Option) (*Conn, context.Context) {
	t.Helper()
	srv := newInstantTransport()
	srv.result = func(m *jsonrpc.Message) json.RawMessage {
		if a, ok := answers[m.Method]; ok {
			return json.RawMessage(a)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	c, err := Open(ctx, srv, append([]Option{WithTaskPolicy(TaskPolicy{MinPoll: time.Millisecond})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ctx
}

// The durations of a task are integers that a server may write as any
// JSON number (60000.0, 6e4 are integers, as JSON Schema counts them; a
// huge one is taken as the bound it passes): the task is awaited as any
// other.
func TestTaskNumbersAnyJSON(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers map[string]string
	}{
		{"2025-11-25", map[string]string{
			"initialize":   initializeTasksInit,
			"tools/list":   requiredJobList,
			"tools/call":   `{"task":{"taskId":"t1","status":"working","createdAt":"a","lastUpdatedAt":"a","ttl":60000.0,"pollInterval":1.0}}`,
			"tasks/get":    `{"taskId":"t1","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttl":1e20,"pollInterval":1e0}`,
			"tasks/result": `{"content":[{"type":"text","text":"done"}]}`,
		}},
		{"2026-07-28", map[string]string{
			"server/discover": statelessTasksInit,
			"tools/call":      `{"resultType":"task","taskId":"x9","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":6e4,"pollIntervalMs":1.5}`,
			"tasks/get":       `{"resultType":"complete","taskId":"x9","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttlMs":60000.0,"pollIntervalMs":-1E1,"result":{"content":[{"type":"text","text":"done"}]}}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ctx := scriptedTasks(t, tc.answers)
			if _, ok := tc.answers["tools/list"]; ok {
				if _, err := c.AllTools(ctx); err != nil {
					t.Fatal(err)
				}
			}
			res, err := c.CallTool(ctx, "job", nil)
			if err != nil || len(res.Content) != 1 || res.Content[0].Text != "done" {
				t.Fatalf("CallTool: %+v, %v; want the task's result", res, err)
			}
		})
	}
}

// A 2026-07-28 server may make a task that has ended by the time it
// answers the call: the handle (a Task, not a detailed one) then says
// completed or failed without the result or the error, which tasks/get
// carries.
func TestTaskHandleEndedFetchesOutcome(t *testing.T) {
	for _, tc := range []struct {
		status, got string
		want        func(*testing.T, *mcp.CallToolResult, error)
	}{
		{"completed", `"result":{"content":[{"type":"text","text":"done"}]}`, func(t *testing.T, res *mcp.CallToolResult, err error) {
			if err != nil || len(res.Content) != 1 || res.Content[0].Text != "done" {
				t.Fatalf("CallTool: %+v, %v; want the result tasks/get carries", res, err)
			}
		}},
		{"failed", `"error":{"code":-32000,"message":"broken"}`, func(t *testing.T, _ *mcp.CallToolResult, err error) {
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != -32000 || rpcErr.Message != "broken" {
				t.Fatalf("CallTool: %v; want the error tasks/get carries", err)
			}
		}},
	} {
		t.Run(tc.status, func(t *testing.T) {
			c, ctx := scriptedTasks(t, map[string]string{
				"server/discover": statelessTasksInit,
				"tools/call":      `{"resultType":"task","taskId":"x9","status":"` + tc.status + `","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000}`,
				"tasks/get":       `{"resultType":"complete","taskId":"x9","status":"` + tc.status + `","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,` + tc.got + `}`,
			})
			res, err := c.CallTool(ctx, "job", nil)
			tc.want(t, res, err)
		})
	}
}

// A call that waits between two polls ends when the Conn is closed, as
// every call in flight does, not when the wait the server asked for (a
// minute here, within the policy's 30 s) runs out.
func TestTaskWaitEndsOnClose(t *testing.T) {
	c, ctx := scriptedTasks(t, map[string]string{
		"server/discover": statelessTasksInit,
		"tools/call":      `{"resultType":"task","taskId":"x9","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":600000,"pollIntervalMs":60000}`,
	})
	waiting := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "job", nil, OnTask(func(mcp.Task) { close(waiting) }))
		errc <- err
	}()
	<-waiting
	c.Close()
	err := <-errc
	var te *TaskError
	if !errors.As(err, &te) || te.TaskID != "x9" || !errors.Is(err, ErrClosed) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("err = %v; want a *TaskError for x9 that says the Conn was closed", err)
	}
}

// tasks/get answered for another task than the one asked about ends the
// wait with a *TaskError, on the first answer AwaitTask gets as on any
// later poll: another task's result is never taken for this one's.
func TestAwaitTaskAnsweredForAnother(t *testing.T) {
	c, ctx := scriptedTasks(t, map[string]string{
		"server/discover": statelessTasksInit,
		"tasks/get":       `{"resultType":"complete","taskId":"other","status":"completed","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,"result":{"content":[{"type":"text","text":"not yours"}]}}`,
	})
	res, err := c.AwaitTask(ctx, "x9")
	var te *TaskError
	if !errors.As(err, &te) || te.TaskID != "x9" || !strings.Contains(err.Error(), "another task") {
		t.Fatalf("AwaitTask(x9): %+v, %v; want a *TaskError: tasks/get answered for another task", res, err)
	}
}

// A tasks/get answered with a status no task has (or none) ends the wait
// with a *TaskError that names the task, where waiting on could never
// tell when the task ends.
func TestTaskUnknownStatus(t *testing.T) {
	for _, tc := range []struct{ name, status string }{
		{"bogus", `"status":"bogus",`},
		{"none", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ctx := scriptedTasks(t, map[string]string{
				"server/discover": statelessTasksInit,
				"tools/call":      `{"resultType":"task","taskId":"x9","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,"pollIntervalMs":1}`,
				"tasks/get":       `{"resultType":"complete","taskId":"x9",` + tc.status + `"createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,"pollIntervalMs":1}`,
			})
			var seen []mcp.TaskStatus
			_, err := c.CallTool(ctx, "job", nil, OnTask(func(t mcp.Task) { seen = append(seen, t.Status) }))
			var te *TaskError
			if !errors.As(err, &te) || te.TaskID != "x9" || te.Status != mcp.TaskWorking || errors.Is(err, context.DeadlineExceeded) ||
				!errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "status") {
				t.Fatalf("err = %v; want a *TaskError for x9: the status is none a task has", err)
			}
			if len(seen) != 1 {
				t.Errorf("OnTask saw %q; want only the status working", seen)
			}
		})
	}
}

// A tools/call whose params the host made ask for a task (Task set) goes
// to a server that does not offer 2025-11-25's tasks for tools/call: a
// initialize-era one then runs it as a plain call, ignoring the task member (as
// 2025-11-25 says it must), and a 2026-07-28 one decides for itself. Its
// answer is read as such, not as the task the Conn did not ask for.
func TestTaskAskedByHostOfServerWithout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers map[string]string
	}{
		{"2025-11-25 without tasks", map[string]string{
			"initialize": `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"plain","version":"1"}}`,
			"tools/call": `{"content":[{"type":"text","text":"done"}]}`,
		}},
		{"2026-07-28", map[string]string{
			"server/discover": statelessTasksInit,
			"tools/call":      `{"resultType":"task","taskId":"x9","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,"pollIntervalMs":1}`,
			"tasks/get":       `{"resultType":"complete","taskId":"x9","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttlMs":60000,"result":{"content":[{"type":"text","text":"done"}]}}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ctx := scriptedTasks(t, tc.answers)
			var res mcp.CallToolResult
			err := c.Call(ctx, "tools/call", &mcp.CallToolParams{Name: "job", Task: &mcp.TaskParams{TTL: 60000}}, &res)
			if err != nil || len(res.Content) != 1 || res.Content[0].Text != "done" {
				t.Fatalf("Call: %+v, %v; want the tool's result", res, err)
			}
		})
	}
}

// A call given up while the host's handler answers its task's input (a
// person asked, who walks away) asks the server to cancel the task, as a
// wait given up between two polls does.
func TestTaskGivenUpDuringInput(t *testing.T) {
	srv := newInstantTransport()
	cancelled := make(chan string, 1)
	answers := map[string]string{
		"server/discover": statelessTasksInit,
		"tools/call":      `{"resultType":"task","taskId":"x9","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,"pollIntervalMs":1}`,
		"tasks/get":       `{"resultType":"complete","taskId":"x9","status":"input_required","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,"pollIntervalMs":1,"inputRequests":{"who":{"method":"elicitation/create","params":{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}}`,
		"tasks/cancel":    `{"resultType":"complete"}`,
	}
	srv.result = func(m *jsonrpc.Message) json.RawMessage {
		if m.Method == "tasks/cancel" {
			var p mcp.TaskIDParams
			_ = json.Unmarshal(m.Params, &p)
			cancelled <- p.TaskID
		}
		if a, ok := answers[m.Method]; ok {
			return json.RawMessage(a)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	callCtx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	c, err := Open(ctx, srv, WithTaskPolicy(TaskPolicy{MinPoll: time.Millisecond}),
		WithElicitation(func(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			giveUp()
			<-ctx.Done()
			return nil, ctx.Err()
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(callCtx, "job", nil)
	var te *TaskError
	if !errors.As(err, &te) || te.TaskID != "x9" || !errors.Is(err, context.Canceled) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("err = %v; want a *TaskError for x9 that matches context.Canceled", err)
	}
	select {
	case id := <-cancelled:
		if id != "x9" {
			t.Errorf("tasks/cancel for %q", id)
		}
	case <-ctx.Done():
		t.Fatal("no tasks/cancel")
	}
}

// A 2025-11-25 task that needs input is fetched with tasks/result, which
// the server holds open while the task runs and on which it sends its
// requests. One that answers it not at all, nor asks anything, for the
// request timeout is polled again, as 2025-11-25 draws the flow (the
// result stream closed, polling resumed): a task that ended meanwhile
// ends the wait, not only the caller's deadline.
func TestTaskResultSilentPollsAgain(t *testing.T) {
	srv := newInstantTransport()
	var fetches atomic.Int32
	srv.answers = func(method string) bool {
		if method == "tasks/result" {
			fetches.Add(1) // and never answered
			return false
		}
		return true
	}
	srv.fail = func(m *jsonrpc.Message) *jsonrpc.Error {
		if m.Method == "tasks/get" && fetches.Load() > 0 {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task has expired")
		}
		return nil
	}
	answers := map[string]string{
		"initialize": initializeTasksInit,
		"tools/list": requiredJobList,
		"tools/call": `{"task":{"taskId":"t1","status":"working","createdAt":"a","lastUpdatedAt":"a","ttl":null,"pollInterval":1}}`,
		"tasks/get":  `{"taskId":"t1","status":"input_required","createdAt":"a","lastUpdatedAt":"a","ttl":null,"pollInterval":1}`,
	}
	srv.result = func(m *jsonrpc.Message) json.RawMessage {
		if a, ok := answers[m.Method]; ok {
			return json.RawMessage(a)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Open(ctx, srv, WithTaskPolicy(TaskPolicy{MinPoll: time.Millisecond}), WithDefaultTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.AllTools(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = c.CallTool(ctx, "job", nil)
	var te *TaskError
	if !errors.As(err, &te) || te.TaskID != "t1" || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no longer knows") {
		t.Fatalf("err = %v; want a *TaskError for t1: the server no longer knows it", err)
	}
}
