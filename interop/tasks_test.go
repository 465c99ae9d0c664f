package interop_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
)

// Tasks against mcp-go v1.2.1, the one peer whose server runs tools as
// tasks (revision 2025-11-25's design; it offers them in server/discover
// too, to 2026-07-28 clients). Its tools:
//
//   - task_echo must run as a task (taskSupport "required") and answers
//     its text;
//   - task_hold must run as a task and answers once the test releases it;
//   - maybe_task may run as a task ("optional");
//   - task_ctx must run as a task and waits on its context, as a handler
//     that can be cancelled does.
//
// mcp-go cancels the context of every request when its handler returns,
// and runs a task on the context of the tools/call that made it, so
// task_ctx ends cancelled as soon as it starts: the client must say so
// (a *client.TaskError), never hand back the empty result tasks/result
// then gives. The other task tools do not watch their context.
type mcpGoTasks struct {
	release chan struct{} // closed to let task_hold answer
	once    sync.Once
	echoes  atomic.Int32 // task_echo's runs
}

func newMCPGoTaskServer(h *mcpGoTasks) *mcpgoserver.MCPServer {
	s := mcpgoserver.NewMCPServer("interop-mcp-go-tasks", "v0",
		mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithTaskCapabilities(true, true, true))
	text := func(req mcpgo.CallToolRequest) []mcpgo.Content {
		return []mcpgo.Content{mcpgo.NewTextContent("echo " + req.GetString("text", ""))}
	}
	s.AddTaskTool(mcpgo.NewTool("task_echo", mcpgo.WithTaskSupport(mcpgo.TaskSupportRequired), mcpgo.WithString("text", mcpgo.Required())),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CreateTaskResult, error) {
			h.echoes.Add(1)
			return &mcpgo.CreateTaskResult{Content: text(req)}, nil
		})
	s.AddTaskTool(mcpgo.NewTool("task_hold", mcpgo.WithTaskSupport(mcpgo.TaskSupportRequired)),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CreateTaskResult, error) {
			<-h.release
			return &mcpgo.CreateTaskResult{Content: []mcpgo.Content{mcpgo.NewTextContent("released")}}, nil
		})
	s.AddTaskTool(mcpgo.NewTool("task_ctx", mcpgo.WithTaskSupport(mcpgo.TaskSupportRequired)),
		func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CreateTaskResult, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-h.release:
				return &mcpgo.CreateTaskResult{Content: []mcpgo.Content{mcpgo.NewTextContent("released")}}, nil
			}
		})
	s.AddTool(mcpgo.NewTool("maybe_task", mcpgo.WithTaskSupport(mcpgo.TaskSupportOptional), mcpgo.WithString("text", mcpgo.Required())),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return &mcpgo.CallToolResult{Content: text(req)}, nil
		})
	return s
}

func TestInteropTasks(t *testing.T) {
	for _, tc := range []struct {
		name string
		era  negotiate.EraPolicy
		want mcp.Era
	}{
		{"dual-era Streamable HTTP, as it runs by default", negotiate.EraAuto, mcp.EraStateless},
		{"Streamable HTTP, client pinned to the initialize era", negotiate.InitializeOnly, mcp.EraInitialize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &mcpGoTasks{release: make(chan struct{})}
			defer h.once.Do(func() { close(h.release) })
			srv := mcpgoserver.NewStreamableHTTPServer(newMCPGoTaskServer(h))
			u := serveHTTP(t, "/mcp", srv)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			conn, err := client.Dial(ctx, client.URL(u), client.WithEra(tc.era),
				client.WithTaskPolicy(client.TaskPolicy{MinPoll: 5 * time.Millisecond, Poll: 50 * time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if got := conn.Info().Era; got != tc.want {
				t.Fatalf("era %v, want %v", got, tc.want)
			}

			if tc.want == mcp.EraStateless {
				statelessRefusal(ctx, t, conn, h)
				return
			}

			// A tool that must run as a task, not listed yet: refused as
			// a plain call, looked up, called as a task, awaited.
			var seen []mcp.TaskStatus
			var id string
			res, err := conn.CallTool(ctx, "task_echo", map[string]any{"text": "hi"},
				client.OnTask(func(tk mcp.Task) { id, seen = tk.TaskID, append(seen, tk.Status) }))
			if err != nil {
				t.Fatalf("task_echo: %v", err)
			}
			if got := textOf(res); got != "echo hi" || id == "" || seen[0] != mcp.TaskWorking || seen[len(seen)-1] != mcp.TaskCompleted {
				t.Fatalf("task_echo: %q, task %q, statuses %v", got, id, seen)
			}
			// The task outlives the call: awaited again by its id.
			if res, err := conn.AwaitTask(ctx, id); err != nil || textOf(res) != "echo hi" {
				t.Fatalf("AwaitTask(%s): %v, %v", id, textOf(res), err)
			}

			// An optional tool runs as a plain call, or as a task when asked.
			for _, asTask := range []bool{false, true} {
				var opts []client.CallOption
				made := false
				opts = append(opts, client.OnTask(func(mcp.Task) { made = true }))
				if asTask {
					opts = append(opts, client.AsTask())
				}
				res, err := conn.CallTool(ctx, "maybe_task", map[string]any{"text": "opt"}, opts...)
				if err != nil || textOf(res) != "echo opt" || made != asTask {
					t.Fatalf("maybe_task (AsTask %v): %q, %v, a task made: %v", asTask, textOf(res), err, made)
				}
			}

			// A wait given up: the call says which task, the server is
			// asked to cancel it.
			callCtx, stop := context.WithCancel(ctx)
			_, err = conn.CallTool(callCtx, "task_hold", nil, client.OnTask(func(tk mcp.Task) {
				id = tk.TaskID
				stop()
			}))
			stop()
			var te *client.TaskError
			if !errors.As(err, &te) || te.TaskID != id || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) {
				t.Fatalf("task_hold given up: %v", err)
			}
			if err := waitStatus(ctx, conn, id, mcp.TaskCancelled); err != nil {
				t.Fatal(err)
			}

			// mcp-go cancels task_ctx as soon as it starts: the client
			// reports it, with the server's reason.
			_, err = conn.CallTool(ctx, "task_ctx", nil)
			if !errors.As(err, &te) || te.Status != mcp.TaskCancelled || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Fatalf("task_ctx: %v, want a *TaskError for a cancelled task", err)
			}

			// tasks/list has them all.
			var ids []string
			for tk, err := range conn.Tasks(ctx) {
				if err != nil {
					t.Fatalf("tasks/list: %v", err)
				}
				ids = append(ids, tk.TaskID)
			}
			if n := h.echoes.Load(); n != 1 {
				t.Fatalf("task_echo ran %d times, want 1", n)
			}
			if !slices.Contains(ids, id) || len(ids) < 4 {
				t.Fatalf("tasks/list: %v, want the %d tasks made", ids, 4)
			}
			t.Logf("%s: %v, %d tasks listed", tc.name, conn.Info().Era, len(ids))
		})
	}
}

// statelessRefusal checks what a 2026-07-28 client gets from mcp-go's
// dual-era server for its task tools: mcp-go offers the tasks of
// 2025-11-25 in server/discover and makes the task when asked, but then
// refuses tasks/result in 2026-07-28, so the tool would run with no way to
// fetch its result. anymcp does not ask for such a task in the stateless era:
// the call is refused before anything runs (-32601), and the error says to
// connect in the initialize era. An optional tool runs as a plain call.
func statelessRefusal(ctx context.Context, t *testing.T, conn *client.Conn, h *mcpGoTasks) {
	t.Helper()
	made := false
	_, err := conn.CallTool(ctx, "task_echo", map[string]any{"text": "hi"}, client.OnTask(func(mcp.Task) { made = true }))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound || made ||
		!strings.Contains(err.Error(), `era policy "initialize"`) {
		t.Fatalf("task_echo over 2026-07-28: %v (a task made: %v), want -32601 and the way out", err, made)
	}
	res, err := conn.CallTool(ctx, "maybe_task", map[string]any{"text": "opt"}, client.AsTask(), client.OnTask(func(mcp.Task) { made = true }))
	if err != nil || textOf(res) != "echo opt" || made {
		t.Fatalf("maybe_task over 2026-07-28: %q, %v (a task made: %v)", textOf(res), err, made)
	}
	if n := h.echoes.Load(); n != 0 {
		t.Fatalf("task_echo ran %d times", n)
	}
}

// waitStatus polls the task id until the server reports want, within ctx.
func waitStatus(ctx context.Context, conn *client.Conn, id string, want mcp.TaskStatus) error {
	for {
		tk, err := conn.GetTask(ctx, id)
		if err != nil {
			return fmt.Errorf("tasks/get %s: %w", id, err)
		}
		if tk.Status == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("task %s: status %s, want %s", id, tk.Status, want)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].Text
}
