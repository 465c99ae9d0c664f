package client_test

import (
	"testing"

	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// A server of revision 2025-11-25 that answers a plain call of a tool that
// requires a task with a result (isError, "Tool task_sleep requires task
// augmentation"), as the TypeScript SDK's servers do, where the
// specification says -32601: the call runs as a task all the same. A tool
// whose listing does not require a task, and whose isError result speaks
// of tasks, is not called again: that result is the tool's.
func TestTaskRequiredRefusedAsResult(t *testing.T) {
	for _, s := range taskServers(t, testservers.TaskOptions{RefuseAsResult: true}) {
		if s.era != mcp.EraInitialize {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := dialT(t, s.target, taskPolicy)
			var st statuses
			res, err := c.CallTool(ctx, testservers.TaskSleepTool, map[string]any{"ms": 10, "text": "slept"}, st.option())
			if err != nil || text(t, res) != "slept" || !st.made(mcp.TaskCompleted) {
				t.Fatalf("task_sleep, not listed: %+v, %v (%s)", res, err, &st)
			}

			other := dialT(t, s.target, taskPolicy)
			const msg = "Tool fail requires task augmentation (taskSupport: 'required')"
			res, err = other.CallTool(ctx, "fail", map[string]any{"message": msg})
			if err != nil || !res.IsError || text(t, res) != msg {
				t.Fatalf("fail: %+v, %v, want its isError result", res, err)
			}
			if s.srv == nil {
				return
			}
			stats := s.srv.Stats()
			if stats.ToolCalls["fail"] != 1 || stats.TaskExecutions[testservers.TaskSleepTool] != 1 || stats.ToolCalls[testservers.TaskSleepTool] != 1 {
				t.Errorf("tool calls %v, task executions %v: want fail run once, task_sleep once as a task", stats.ToolCalls, stats.TaskExecutions)
			}
		})
	}
}
