package testservers

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// TestTaskStatelessDiscover: server/discover names the extension (and no
// capability of 2025-11-25), tools/list has the task tools; without
// Options.Tasks neither, and the tasks/ methods are 404.
func TestTaskStatelessDiscover(t *testing.T) {
	_, w := startStatelessHTTP(t, HTTPOptions{Options: tasksOn()})
	m, _ := w.ok(t, 1, "server/discover", nil)
	var d struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(m.Result, &d)
	if got := string(d.Capabilities["extensions"]); got != `{"io.modelcontextprotocol/tasks":{}}` {
		t.Errorf("extensions %s", got)
	}
	if _, ok := d.Capabilities["tasks"]; ok {
		t.Errorf("the capability of 2025-11-25 in server/discover: %s", m.Result)
	}
	m, _ = w.ok(t, 2, "tools/list", nil)
	var names []string
	for _, tool := range result[mcp.ListToolsResult](t, m).Tools {
		names = append(names, tool.Name)
	}
	if want := append(StatelessToolNames(), TaskToolNames()...); !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	for _, method := range []string{"tasks/result", "tasks/list"} {
		if m, _, status := w.call(t, 3, method, map[string]any{"taskId": "x"}, taskHeaders("x")); status != http.StatusNotFound {
			t.Errorf("%s: status %d %v", method, status, m.Error)
		}
	}

	_, off := startStatelessHTTP(t, HTTPOptions{})
	m, _ = off.ok(t, 1, "server/discover", nil)
	if strings.Contains(string(m.Result), "extensions") {
		t.Errorf("server/discover without tasks: %s", m.Result)
	}
	off.caps = tasksExt
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		m, _, status := off.call(t, 2, method, map[string]any{"taskId": "x"}, taskHeaders("x"))
		if status != http.StatusNotFound || m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s without tasks: status %d %v", method, status, m.Error)
		}
	}
}

// TestTaskStatelessLifecycle: a client that declares the extension gets a
// task (resultType task), polls it working, then completed with the
// result inline; tasks/get is an idempotent read.
func TestTaskStatelessLifecycle(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		s, w := startStatelessHTTP(t, HTTPOptions{JSONResponse: jsonMode, Options: tasksOn()})
		srv := s.Server()
		w.caps = tasksExt
		tk := statelessCreate(t, w, 1, TaskSleepTool, map[string]any{"ms": 600000})
		if tk.TTLMs == nil || int64(*tk.TTLMs) != DefaultTaskTTL.Milliseconds() || tk.Result != nil {
			t.Errorf("created %+v", tk)
		}
		got, f := statelessGet(t, w, 2, tk.TaskID)
		if got.Status != mcp.TaskWorking || f["result"] != nil || f["error"] != nil || f["inputRequests"] != nil {
			t.Errorf("tasks/get %+v", got)
		}
		resp := w.send(t, 2, "tasks/get", map[string]any{"taskId": tk.TaskID}, taskHeaders(tk.TaskID))
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("tasks/get answered as %q, want no stream", ct)
		}
		resp.Body.Close()
		statelessAck(t, w, 3, "tasks/cancel", map[string]any{"taskId": tk.TaskID})

		tk = statelessCreate(t, w, 4, TaskSleepTool, map[string]any{"ms": 1, "text": "slept"})
		waitTaskStatus(t, srv, tk.TaskID, mcp.TaskCompleted)
		for i := range 2 {
			got, _ := statelessGet(t, w, 5+i, tk.TaskID)
			var r mcp.CallToolResult
			if err := json.Unmarshal(got.Result, &r); err != nil || got.Status != mcp.TaskCompleted || len(r.Content) != 1 || r.Content[0].Text != "slept" {
				t.Errorf("tasks/get %d: %+v %v", i, got, err)
			}
		}
		st := srv.Stats()
		if st.TasksCreated != 2 || st.TaskPolls != 4 || st.TaskCancels != 1 || st.TaskExecutions[TaskSleepTool] != 2 || st.TasksRunning != 0 {
			t.Errorf("stats %+v", st)
		}
	}
}

// TestTaskStatelessWithoutExtension: without the extension a required task
// tool is -32021 naming it, an optional one runs as a plain call, and
// the tasks/ methods are -32021; the task member of 2025-11-25 is
// ignored.
func TestTaskStatelessWithoutExtension(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{Options: tasksOn()})
	m, _, status := w.call(t, 1, "tools/call", map[string]any{"name": TaskSleepTool}, nil)
	if status != http.StatusBadRequest {
		t.Errorf("status %d", status)
	}
	wantErrorCode(t, m, jsonrpc.CodeMissingClientCapability)
	if got := string(m.Error.Data); got != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
		t.Errorf("data %s", got)
	}
	m, _ = w.ok(t, 2, "tools/call", map[string]any{"name": TaskOptionalTool, "arguments": map[string]any{"text": "plain"}, "task": map[string]any{"ttl": 1000}})
	checkStatelessResult(t, m, "complete", -1)
	if text, _ := toolText(t, m); text != "plain" {
		t.Errorf("task_optional: %q", text)
	}
	m, _ = w.ok(t, 3, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "e"}, "task": map[string]any{}})
	if text, _ := toolText(t, m); text != "e" {
		t.Errorf("echo with task: %q", text)
	}
	w.caps = tasksExt
	tk := statelessCreate(t, w, 4, TaskSleepTool, map[string]any{"ms": 600000})
	w.caps = map[string]any{}
	for i, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		m, _, status := w.call(t, 5+i, method, map[string]any{"taskId": tk.TaskID}, taskHeaders(tk.TaskID))
		if status != http.StatusBadRequest || m.Error == nil || m.Error.Code != jsonrpc.CodeMissingClientCapability {
			t.Errorf("%s without the extension: status %d %v", method, status, m.Error)
		}
	}
	if st := s.Server().Stats(); st.TasksCreated != 1 || st.ToolCalls[TaskOptionalTool] != 1 || st.TaskExecutions[TaskOptionalTool] != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskStatelessHeaders: Mcp-Name of tasks/get, tasks/update and
// tasks/cancel must be the taskId (-32020 otherwise); an unknown task is
// -32602.
func TestTaskStatelessHeaders(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{Options: tasksOn()})
	w.caps = tasksExt
	tk := statelessCreate(t, w, 1, TaskSleepTool, map[string]any{"ms": 600000})
	for i, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		for j, hdr := range []map[string]string{{HeaderName: "other"}, {HeaderName: ""}} {
			m, _, status := w.call(t, 10*i+j, method, map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{}}, hdr)
			if status != http.StatusBadRequest || m.Error == nil || m.Error.Code != jsonrpc.CodeHeaderMismatch {
				t.Errorf("%s with Mcp-Name %q: status %d %v", method, hdr[HeaderName], status, m.Error)
			}
		}
		m, _, status := w.call(t, 10*i+5, method, map[string]any{"taskId": "nope", "inputResponses": map[string]any{}}, taskHeaders("nope"))
		if status != http.StatusOK || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s of an unknown task: status %d %v", method, status, m.Error)
		}
	}
	if st := s.Server().Stats(); st.HeaderRejects[HeaderName] != 6 || st.TaskPolls != 0 || st.TaskCancels != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskStatelessInput: a task that needs input is input_required with
// its request inline, under the same key on every poll until
// tasks/update answers it (unknown keys ignored); it is working again
// before the acknowledgement, then completes; a key is never reused.
func TestTaskStatelessInput(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{Options: tasksOn()})
	srv := s.Server()
	w.caps = tasksExt
	tk := statelessCreate(t, w, 1, TaskAskTool, map[string]any{"message": "who?"})
	waitTaskStatus(t, srv, tk.TaskID, mcp.TaskInputRequired)
	var key string
	for i := range 2 {
		got, _ := statelessGet(t, w, 2+i, tk.TaskID)
		if got.Status != mcp.TaskInputRequired || len(got.InputRequests) != 1 {
			t.Fatalf("tasks/get %+v", got)
		}
		for k, r := range got.InputRequests {
			if r.Method != "elicitation/create" || !strings.Contains(string(r.Params), `"message":"who?"`) || (key != "" && k != key) {
				t.Errorf("input request %s %+v", k, r)
			}
			key = k
		}
	}
	statelessAck(t, w, 4, "tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{"unknown": mrtrAnswers["elicitation/create"]}})
	if got, _ := statelessGet(t, w, 5, tk.TaskID); got.Status != mcp.TaskInputRequired {
		t.Errorf("after an unknown key: %s", got.Status)
	}
	statelessAck(t, w, 6, "tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{key: mrtrAnswers["elicitation/create"]}})
	if got, _ := statelessGet(t, w, 7, tk.TaskID); got.Status == mcp.TaskInputRequired {
		t.Errorf("still input_required once answered")
	}
	waitTaskStatus(t, srv, tk.TaskID, mcp.TaskCompleted)
	got, _ := statelessGet(t, w, 8, tk.TaskID)
	var r mcp.CallToolResult
	if err := json.Unmarshal(got.Result, &r); err != nil || len(r.Content) != 1 || r.Content[0].Text != "hello Ann" {
		t.Errorf("result %s: %v", got.Result, err)
	}
	// An answered key is ignored.
	statelessAck(t, w, 9, "tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{key: mrtrAnswers["elicitation/create"]}})

	// A second task's key is its own; a declined elicitation is a tool
	// error, completed with isError as the extension says.
	tk2 := statelessCreate(t, w, 10, TaskAskTool, nil)
	waitTaskStatus(t, srv, tk2.TaskID, mcp.TaskInputRequired)
	got, _ = statelessGet(t, w, 11, tk2.TaskID)
	for k := range got.InputRequests {
		statelessAck(t, w, 12, "tasks/update", map[string]any{"taskId": tk2.TaskID, "inputResponses": map[string]any{k: json.RawMessage(`{"action":"decline"}`)}})
	}
	waitTaskStatus(t, srv, tk2.TaskID, mcp.TaskCompleted)
	got, _ = statelessGet(t, w, 13, tk2.TaskID)
	if !strings.Contains(string(got.Result), `"isError":true`) {
		t.Errorf("declined: %s", got.Result)
	}
	if st := srv.Stats(); st.TaskUpdates != 4 || st.TaskInputRequests != 2 {
		t.Errorf("stats %+v", st)
	}

	// Without elicitation the call is refused before any task exists.
	w.caps = map[string]any{"extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}
	m, _, _ := w.call(t, 20, "tools/call", map[string]any{"name": TaskAskTool}, nil)
	wantErrorCode(t, m, jsonrpc.CodeMissingClientCapability)
	if !strings.Contains(string(m.Error.Data), "elicitation") {
		t.Errorf("data %s", m.Error.Data)
	}
}

// TestTaskStatelessFailed: a JSON-RPC error fails the task with the error
// inline; a result with isError completes it.
func TestTaskStatelessFailed(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{Options: tasksOn()})
	srv := s.Server()
	w.caps = tasksExt
	tk := statelessCreate(t, w, 1, TaskErrorTool, map[string]any{"code": -32000, "message": "rate limited"})
	waitTaskStatus(t, srv, tk.TaskID, mcp.TaskFailed)
	got, f := statelessGet(t, w, 2, tk.TaskID)
	if string(got.Error) != `{"code":-32000,"message":"rate limited"}` || got.StatusMessage != "rate limited" || f["result"] != nil {
		t.Errorf("failed task %+v", got)
	}
	tk = statelessCreate(t, w, 3, TaskIsErrorTool, map[string]any{"text": "bad input"})
	waitTaskStatus(t, srv, tk.TaskID, mcp.TaskCompleted)
	got, f = statelessGet(t, w, 4, tk.TaskID)
	if !strings.Contains(string(got.Result), `"isError":true`) || f["error"] != nil {
		t.Errorf("isError task %+v", got)
	}
}

// TestTaskStatelessCancel: tasks/cancel acknowledges, the task is then
// cancelled and stopped; cancelling again, or an ended task, is
// acknowledged too.
func TestTaskStatelessCancel(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{Options: tasksOn()})
	srv := s.Server()
	w.caps = tasksExt
	tk := statelessCreate(t, w, 1, TaskAskTool, nil)
	waitTaskStatus(t, srv, tk.TaskID, mcp.TaskInputRequired)
	statelessAck(t, w, 2, "tasks/cancel", map[string]any{"taskId": tk.TaskID})
	got, f := statelessGet(t, w, 3, tk.TaskID)
	if got.Status != mcp.TaskCancelled || f["inputRequests"] != nil {
		t.Errorf("cancelled task %+v", got)
	}
	statelessAck(t, w, 4, "tasks/cancel", map[string]any{"taskId": tk.TaskID})
	if st := srv.Stats(); st.TaskCancels != 1 || st.TasksRunning != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskStatelessListen: subscriptions/listen acknowledges the known task
// ids asked for and carries notifications/tasks for them, each with what
// tasks/get would return; without the extension taskIds are -32021.
func TestTaskStatelessListen(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{Options: tasksOn(func(o *TaskOptions) { o.StatusNotifications = true })})
	srv := s.Server()
	w.caps = tasksExt
	tk := statelessCreate(t, w, 1, TaskAskTool, map[string]any{"ms": 600000})
	l := openListen(t, w, "l-1", map[string]any{"taskIds": []string{"unknown", tk.TaskID, tk.TaskID}})
	ack := l.wantNote(t, "notifications/subscriptions/acknowledged", `"l-1"`)
	if !strings.Contains(string(ack.Params), `"notifications":{"taskIds":["`+tk.TaskID+`"]}`) {
		t.Errorf("acknowledged %s", ack.Params)
	}
	statelessAck(t, w, 2, "tasks/cancel", map[string]any{"taskId": tk.TaskID})
	n := l.wantNote(t, "notifications/tasks", `"l-1"`)
	var got mcp.Task
	_ = json.Unmarshal(n.Params, &got)
	if got.TaskID != tk.TaskID || got.Status != mcp.TaskCancelled || got.PollIntervalMs == nil {
		t.Errorf("notifications/tasks %s", n.Params)
	}

	tk = statelessCreate(t, w, 3, TaskAskTool, nil)
	waitTaskStatus(t, srv, tk.TaskID, mcp.TaskInputRequired) // before the subscription: not notified
	l2 := openListen(t, w, "l-2", map[string]any{"taskIds": []string{tk.TaskID}})
	l2.wantNote(t, "notifications/subscriptions/acknowledged", `"l-2"`)
	g, _ := statelessGet(t, w, 4, tk.TaskID)
	for k := range g.InputRequests {
		statelessAck(t, w, 5, "tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{k: mrtrAnswers["elicitation/create"]}})
	}
	// The change to input_required may still be on its way to the new
	// subscription: it carries what was then current.
	var statuses []string
	for got.Status != mcp.TaskCompleted {
		n := l2.wantNote(t, "notifications/tasks", `"l-2"`)
		got = mcp.Task{}
		_ = json.Unmarshal(n.Params, &got)
		if len(statuses) > 0 || got.Status != mcp.TaskInputRequired {
			statuses = append(statuses, string(got.Status))
		}
	}
	if !slices.Equal(statuses, []string{"working", "completed"}) || !strings.Contains(string(got.Result), "hello Ann") || got.InputRequests != nil {
		t.Errorf("statuses %v, last %+v", statuses, got)
	}

	w.caps = map[string]any{}
	m, _, status := w.call(t, 6, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{tk.TaskID}}}, nil)
	if status != http.StatusBadRequest || m.Error == nil || m.Error.Code != jsonrpc.CodeMissingClientCapability {
		t.Errorf("listen for tasks without the extension: %d %v", status, m.Error)
	}
}

// TestTaskStatelessStdio: the extension over stdio, where no header names
// the task; and a dual-era server keeps each era's tasks to itself.
func TestTaskStatelessStdio(t *testing.T) {
	opts := tasksOn()
	opts.Eras = DualEra
	w := newStdioWire(t, context.Background(), opts)
	w.initialize(t)
	m, _ := w.request(t, 1, "tools/call", statelessParams(map[string]any{"name": TaskAskTool}, tasksExt, nil))
	tk, _ := statelessTask(t, m, mcp.ResultTask)
	waitTaskStatus(t, w.srv, tk.TaskID, mcp.TaskInputRequired)
	get := statelessParams(map[string]any{"taskId": tk.TaskID}, tasksExt, nil)
	m, _ = w.request(t, 2, "tasks/get", get)
	got, _ := statelessTask(t, m, mcp.ResultComplete)
	responses := map[string]json.RawMessage{}
	for k := range got.InputRequests {
		responses[k] = mrtrAnswers["elicitation/create"]
	}
	m, _ = w.request(t, 3, "tasks/update", statelessParams(map[string]any{"taskId": tk.TaskID, "inputResponses": responses}, tasksExt, nil))
	checkStatelessResult(t, m, mcp.ResultComplete, -1)
	waitTaskStatus(t, w.srv, tk.TaskID, mcp.TaskCompleted)
	m, _ = w.request(t, 4, "tasks/get", get)
	if got, _ := statelessTask(t, m, mcp.ResultComplete); !strings.Contains(string(got.Result), "hello Ann") {
		t.Errorf("result %s", got.Result)
	}
	// The initialize era does not see it, nor the stateless era a legacy task.
	m, _ = w.request(t, 5, "tasks/get", taskIDParams(tk.TaskID))
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	lt := initializeCreate(t, w, 6, TaskSleepTool, map[string]any{"ms": 600000}, anyTTL)
	m, _ = w.request(t, 7, "tasks/get", statelessParams(map[string]any{"taskId": lt.TaskID}, tasksExt, nil))
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
}
