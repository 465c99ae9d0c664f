package testservers

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// tasksOn are the options of a server that serves tasks, with knobs.
func tasksOn(knobs ...func(*TaskOptions)) Options {
	o := TaskOptions{Enabled: true}
	for _, k := range knobs {
		k(&o)
	}
	return Options{Tasks: o}
}

// waitStats waits, bounded, until cond holds for srv's Stats.
func waitStats(t *testing.T, srv *Server, what string, cond func(Stats) bool) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	st, err := srv.WaitStats(ctx, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v; stats %+v", what, err, st)
	}
	return st
}

// waitTaskStatus waits until the server keeps task id in status.
func waitTaskStatus(t *testing.T, srv *Server, id string, status mcp.TaskStatus) {
	t.Helper()
	waitStats(t, srv, fmt.Sprintf("task %s %s", id, status), func(st Stats) bool { return st.TaskStatus[id] == status })
}

// toJSON encodes v as JSON text.
func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// callParamsJSON returns the params of a tools/call, with task {ttl}
// when ttl is not nil (-1: task {} without ttl).
func callParamsJSON(tool string, args map[string]any, ttl *int64) string {
	p := map[string]any{"name": tool, "arguments": args}
	if ttl != nil {
		task := map[string]any{}
		if *ttl >= 0 {
			task["ttl"] = *ttl
		}
		p["task"] = task
	}
	return toJSON(p)
}

func ttlOf(ms int64) *int64 { return &ms }

// anyTTL asks for a task without a ttl.
var anyTTL = ttlOf(-1)

// checkStamps checks the timestamps of a task: RFC 3339, the update not
// before the creation.
func checkStamps(t *testing.T, tk mcp.Task) {
	t.Helper()
	c, err1 := time.Parse(time.RFC3339, tk.CreatedAt)
	u, err2 := time.Parse(time.RFC3339, tk.LastUpdatedAt)
	if err1 != nil || err2 != nil || u.Before(c) {
		t.Errorf("task %s: createdAt %q, lastUpdatedAt %q (%v, %v)", tk.TaskID, tk.CreatedAt, tk.LastUpdatedAt, err1, err2)
	}
}

// initializeTask decodes a 2025-11-25 task (tasks/get, tasks/cancel) and
// checks its members: both timestamps, ttl and pollInterval (20 ms), no
// member of the extension, no related-task _meta.
func initializeTask(t *testing.T, raw json.RawMessage) mcp.Task {
	t.Helper()
	var tk mcp.Task
	if err := json.Unmarshal(raw, &tk); err != nil {
		t.Fatalf("task %s: %v", raw, err)
	}
	var f map[string]json.RawMessage
	_ = json.Unmarshal(raw, &f)
	checkStamps(t, tk)
	if tk.TaskID == "" || tk.PollInterval == nil || *tk.PollInterval != 20 || tk.TTLMs != nil || tk.PollIntervalMs != nil {
		t.Errorf("2025-11-25 task %s", raw)
	}
	if _, ok := f["ttl"]; !ok {
		t.Errorf("task without ttl: %s", raw)
	}
	if _, ok := f["_meta"]; ok {
		t.Errorf("task with _meta: %s", raw)
	}
	return tk
}

// initializeCreate calls tool as a task over w and returns the task of the
// answer, checked.
func initializeCreate(t *testing.T, w wire, id int, tool string, args map[string]any, ttl *int64) mcp.Task {
	t.Helper()
	m, _ := w.request(t, id, "tools/call", callParamsJSON(tool, args, ttl))
	r := result[map[string]json.RawMessage](t, m)
	if len(r) != 1 || r["task"] == nil {
		t.Fatalf("tools/call %s as a task: %s", tool, m.Result)
	}
	tk := initializeTask(t, r["task"])
	if tk.Status != mcp.TaskWorking {
		t.Errorf("created in status %s", tk.Status)
	}
	return tk
}

// relatedTaskOf returns the taskId of a message's related-task _meta.
func relatedTaskOf(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var p struct {
		Meta map[string]struct {
			TaskID string `json:"taskId"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return p.Meta[mcp.MetaRelatedTask].TaskID
}

// taskResult checks a tasks/result answer: a CallToolResult whose _meta
// names the task, and returns its text and isError.
func taskResult(t *testing.T, m *jsonrpc.Message, id string) (string, bool) {
	t.Helper()
	text, isErr := toolText(t, m)
	if got := relatedTaskOf(t, m.Result); got != id {
		t.Errorf("tasks/result related-task %q, want %q: %s", got, id, m.Result)
	}
	return text, isErr
}

// taskIDParams are the params of tasks/get, tasks/result, tasks/cancel.
func taskIDParams(id string) string { return toJSON(map[string]string{"taskId": id}) }

// elicitAnswer is a client's answer to the elicitation of task_ask.
func elicitAnswer(id jsonrpc.ID, name string) string {
	return `{"jsonrpc":"2.0","id":` + id.Raw() + `,"result":{"action":"accept","content":{"name":"` + name + `"}}}`
}

// ---- 2026-07-28 ----

// tasksExt are client capabilities declaring the tasks extension (and
// elicitation).
var tasksExt = map[string]any{
	"elicitation": map[string]any{"form": map[string]any{}},
	"extensions":  map[string]any{mcp.ExtensionTasks: map[string]any{}},
}

// taskHeaders are the Mcp-Name header of a request about task id.
func taskHeaders(id string) map[string]string { return map[string]string{HeaderName: id} }

// statelessTask decodes a task of the extension (a CreateTaskResult or a
// tasks/get result) and checks its members: resultType, both
// timestamps, ttlMs and pollIntervalMs (20 ms), serverInfo, nothing of
// 2025-11-25.
func statelessTask(t *testing.T, m *jsonrpc.Message, resultType string) (mcp.Task, map[string]json.RawMessage) {
	t.Helper()
	// Not checkStatelessResult: the ttlMs of a task is its own, no cache
	// hint (and there is no cacheScope).
	f := resultFields(t, m)
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(f["_meta"], &meta)
	if string(f["resultType"]) != `"`+resultType+`"` || meta[mcp.MetaServerInfo] == nil || f["cacheScope"] != nil {
		t.Errorf("want a %s result with serverInfo: %s", resultType, m.Result)
	}
	var tk mcp.Task
	if err := json.Unmarshal(m.Result, &tk); err != nil {
		t.Fatalf("task %s: %v", m.Result, err)
	}
	checkStamps(t, tk)
	if tk.TaskID == "" || tk.PollIntervalMs == nil || *tk.PollIntervalMs != 20 || tk.TTL != nil || tk.PollInterval != nil {
		t.Errorf("extension task %s", m.Result)
	}
	if _, ok := f["ttlMs"]; !ok && resultType == "task" {
		t.Errorf("task without ttlMs: %s", m.Result)
	}
	return tk, f
}

// statelessCreate calls tool over w (which must declare the extension) and
// returns the task of the answer, checked.
func statelessCreate(t *testing.T, w *statelessWire, id any, tool string, args map[string]any) mcp.Task {
	t.Helper()
	m, _ := w.ok(t, id, "tools/call", map[string]any{"name": tool, "arguments": args})
	tk, _ := statelessTask(t, m, mcp.ResultTask)
	if tk.Status != mcp.TaskWorking {
		t.Errorf("created in status %s", tk.Status)
	}
	return tk
}

// statelessGet polls task id once over w.
func statelessGet(t *testing.T, w *statelessWire, id any, taskID string) (mcp.Task, map[string]json.RawMessage) {
	t.Helper()
	m, _, status := w.call(t, id, "tasks/get", map[string]any{"taskId": taskID}, taskHeaders(taskID))
	if status != 200 || m.Error != nil {
		t.Fatalf("tasks/get: status %d, error %v", status, m.Error)
	}
	return statelessTask(t, m, mcp.ResultComplete)
}

// statelessAck calls a tasks/ method whose answer is an empty
// acknowledgement and checks it is one.
func statelessAck(t *testing.T, w *statelessWire, id any, method string, params map[string]any) {
	t.Helper()
	taskID, _ := params["taskId"].(string)
	m, _, status := w.call(t, id, method, params, taskHeaders(taskID))
	if status != 200 || m.Error != nil {
		t.Fatalf("%s: status %d, error %v", method, status, m.Error)
	}
	f := checkStatelessResult(t, m, mcp.ResultComplete, -1)
	if len(f) != 2 { // resultType and _meta
		t.Errorf("%s: not an empty acknowledgement: %s", method, m.Result)
	}
}
