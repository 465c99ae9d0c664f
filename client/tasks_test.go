package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// Tool calls that servers run as tasks, against the test servers of every
// era and transport: 2025-11-25's tasks (initialize-era, over Streamable HTTP,
// HTTP+SSE and stdio), the 2026-07-28 extension (stateless and dual-era, over
// Streamable HTTP and stdio). CallTool returns the tool's result whichever
// design the server uses; the host sees the task through OnTask.

// taskPolicy polls the test servers (which suggest 20 ms) as they ask,
// without the default floor of 100 ms.
var taskPolicy = client.WithTaskPolicy(client.TaskPolicy{MinPoll: time.Millisecond})

// taskServers are the servers of every era and transport, with tasks on.
func taskServers(t *testing.T, to testservers.TaskOptions) []struct {
	name   string
	target client.Target
	era    mcp.Era
	srv    *testservers.Server // nil for a stdio child
} {
	to.Enabled = true
	o := testservers.Options{Tasks: to}
	type row = struct {
		name   string
		target client.Target
		era    mcp.Era
		srv    *testservers.Server
	}
	var rows []row
	for _, s := range eraServers(t, o) {
		// (a stdio child built with -race sleeps a second at exit
		// unless told not to; URL targets ignore the variable)
		rows = append(rows, row{s.name, s.target.WithEnv("GORACE=atexit_sleep_ms=0"), s.era, s.srv})
	}
	lo := o
	lo.Versions = []string{mcp.Version20251125} // tasks came with it; an HTTP+SSE server answers 2024-11-05 by default
	ls := testservers.StartLegacy(testservers.LegacyOptions{Options: lo})
	t.Cleanup(ls.Close)
	return append(rows, row{"legacy/sse", client.URL(ls.URL), mcp.EraInitialize, ls.Server()})
}

// statuses records the statuses OnTask reports.
type statuses struct {
	mu   sync.Mutex
	id   string
	seen []mcp.TaskStatus
}

func (s *statuses) option() client.CallOption {
	return client.OnTask(func(t mcp.Task) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.id = t.TaskID
		s.seen = append(s.seen, t.Status)
	})
}

func (s *statuses) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("task %q %v", s.id, s.seen)
}

// made reports whether the call became a task, and it first worked and
// then ended as last says; a task of 2025-11-25 that needed input may be
// last seen needing it (its result came with the answers, on tasks/result).
func (s *statuses) made(last mcp.TaskStatus) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" || len(s.seen) < 2 || s.seen[0] != mcp.TaskWorking {
		return false
	}
	end := s.seen[len(s.seen)-1]
	return end == last || end == mcp.TaskInputRequired && slices.Contains(s.seen, mcp.TaskInputRequired)
}

func TestTasksEveryEra(t *testing.T) {
	for _, s := range taskServers(t, testservers.TaskOptions{}) {
		t.Run(s.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := dialT(t, s.target, taskPolicy, client.WithElicitation(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
			}))
			if got := c.Info().Era; got != s.era {
				t.Fatalf("era %v, want %v", got, s.era)
			}

			// A tool that must run as a task, before any listing.
			var st statuses
			res, err := c.CallTool(ctx, testservers.TaskSleepTool, map[string]any{"ms": 30, "text": "slept"}, st.option())
			if err != nil || text(t, res) != "slept" || !st.made(mcp.TaskCompleted) {
				t.Fatalf("task_sleep: %v, %v (%s)", res, err, &st)
			}

			// Input the task needs, answered by the host's handler.
			st = statuses{}
			res, err = c.CallTool(ctx, testservers.TaskAskTool, map[string]any{"message": "Your name?"}, st.option())
			if err != nil || text(t, res) != "hello Ann" || !st.made(mcp.TaskCompleted) {
				t.Fatalf("task_ask: %v, %v (%s)", res, err, &st)
			}

			// A tool that ran and failed: its result, not an error.
			res, err = c.CallTool(ctx, testservers.TaskIsErrorTool, map[string]any{"text": "no"})
			if err != nil || !res.IsError || text(t, res) != "no" {
				t.Fatalf("task_iserror: %+v, %v", res, err)
			}

			// A task that ended with a JSON-RPC error: that error.
			_, err = c.CallTool(ctx, testservers.TaskErrorTool, map[string]any{"code": -32000, "message": "broken"})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != -32000 || !strings.Contains(rpcErr.Message, "broken") {
				t.Fatalf("task_error: %v, want the task's -32000", err)
			}

			// An optional tool: a plain call, unless the host asks (in
			// 2025-11-25; a 2026-07-28 server decides for itself).
			st = statuses{}
			res, err = c.CallTool(ctx, testservers.TaskOptionalTool, map[string]any{"text": "opt"}, client.AsTask(), st.option())
			if err != nil || text(t, res) != "opt" {
				t.Fatalf("task_optional: %v, %v", res, err)
			}
			if s.era == mcp.EraInitialize && !st.made(mcp.TaskCompleted) {
				t.Errorf("task_optional with AsTask: no task (%s)", &st)
			}

			// Each ran once, as a task.
			if s.srv != nil {
				got := s.srv.Stats().TaskExecutions
				for _, tool := range []string{testservers.TaskSleepTool, testservers.TaskAskTool, testservers.TaskIsErrorTool, testservers.TaskErrorTool} {
					if got[tool] != 1 {
						t.Errorf("%s ran %d times as a task, want 1 (%v)", tool, got[tool], got)
					}
				}
			}
		})
	}
}

// A call whose wait ends first fails with a *client.TaskError that names the
// task, matches jsonrpc.ErrOutcomeUnknown and the context's error, and the
// server is asked to cancel the task.
func TestTaskWaitGivenUp(t *testing.T) {
	for _, s := range taskServers(t, testservers.TaskOptions{}) {
		t.Run(s.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := dialT(t, s.target, taskPolicy)
			callCtx, stop := context.WithCancel(ctx)
			defer stop()
			var id string
			_, err := c.CallTool(callCtx, testservers.TaskSleepTool, map[string]any{"ms": 60000, "text": "never"},
				client.OnTask(func(t mcp.Task) { id = t.TaskID; stop() }))
			var te *client.TaskError
			if !errors.As(err, &te) || te.TaskID != id || id == "" || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want a *client.TaskError for task %q", err, id)
			}
			// tasks/cancel went out: the task is cancelled.
			for {
				tk, err := c.GetTask(ctx, id)
				if err != nil {
					t.Fatalf("tasks/get: %v", err)
				}
				if tk.Status == mcp.TaskCancelled {
					break
				}
				if tk.Status.Terminal() {
					t.Fatalf("status %s, want cancelled", tk.Status)
				}
				select {
				case <-ctx.Done():
					t.Fatalf("task %s still %s", id, tk.Status)
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
	}
}

// A task the server forgets fails its call as outcome unknown, and the tool
// is never run again.
func TestTaskForgotten(t *testing.T) {
	for _, s := range taskServers(t, testservers.TaskOptions{ForgetAfterPolls: 1}) {
		t.Run(s.name, func(t *testing.T) {
			c := dialT(t, s.target, taskPolicy)
			_, err := c.CallTool(ctxT(t), testservers.TaskOnceTool, map[string]any{"key": "forgotten", "ms": 60000})
			var te *client.TaskError
			if !errors.As(err, &te) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "no longer knows") {
				t.Fatalf("err = %v, want a *client.TaskError: the server no longer knows the task", err)
			}
			if s.srv != nil {
				if n := s.srv.Executed("forgotten"); n != 1 {
					t.Errorf("task_once ran %d times, want 1", n)
				}
			}
		})
	}
}

// A task outlives its Conn: a Conn closed while its call waits leaves the
// task running (a Conn that is gone sends no tasks/cancel), and another
// Conn awaits it by its id and gets the tool's result.
func TestAwaitTaskFromAnotherConn(t *testing.T) {
	for _, s := range taskServers(t, testservers.TaskOptions{}) {
		if s.srv == nil {
			continue // a stdio child's tasks end with its process, which ends with its Conn
		}
		t.Run(s.name, func(t *testing.T) {
			ctx := ctxT(t)
			first := dialT(t, s.target, taskPolicy)
			ids := make(chan string, 1)
			_, err := first.CallTool(ctx, testservers.TaskSleepTool, map[string]any{"ms": 300, "text": "later"},
				client.OnTask(func(t mcp.Task) {
					select {
					case ids <- t.TaskID:
						go first.Close()
					default:
					}
				}))
			if err == nil {
				t.Fatal("the call returned a result from a closed Conn")
			}
			id := <-ids
			second := dialT(t, s.target, taskPolicy)
			res, err := second.AwaitTask(ctx, id)
			if err != nil || text(t, res) != "later" {
				t.Fatalf("AwaitTask(%s): %v, %v", id, res, err)
			}
			if n := s.srv.Stats().TaskExecutions[testservers.TaskSleepTool]; n != 1 {
				t.Errorf("task_sleep ran %d times, want 1", n)
			}
		})
	}
}
