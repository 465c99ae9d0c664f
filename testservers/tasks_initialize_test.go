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

// initializeAs initializes w in revision version.
func initializeAs(t *testing.T, w *stdioWire, version string) json.RawMessage {
	t.Helper()
	m, _ := w.request(t, 0, "initialize", strings.Replace(initParams, `"2025-11-25"`, `"`+version+`"`, 1))
	r := result[struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}](t, m)
	w.send(t, notifJSON("notifications/initialized", ""))
	return r.Capabilities["tasks"]
}

func toolNamesOf(t *testing.T, w wire) ([]string, map[string]string) {
	t.Helper()
	m, _ := w.request(t, 1, "tools/list", "")
	r := result[mcp.ListToolsResult](t, m)
	var names []string
	support := map[string]string{}
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
		if tool.Execution != nil {
			support[tool.Name] = tool.Execution.TaskSupport
		}
	}
	return names, support
}

// TestTaskInitializeCapabilities: a 2025-11-25 session of a server with tasks
// sees the capability and the task tools; an older session and a server
// without tasks see no tasks at all.
func TestTaskInitializeCapabilities(t *testing.T) {
	w := newStdioWire(t, context.Background(), tasksOn())
	if caps := initializeAs(t, w, mcp.Version20251125); string(caps) != `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}` {
		t.Errorf("tasks capability %s", caps)
	}
	names, support := toolNamesOf(t, w)
	if want := append(ToolNames(), TaskToolNames()...); !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	want := map[string]string{TaskSleepTool: "required", TaskOptionalTool: "optional", TaskAskTool: "required",
		TaskErrorTool: "required", TaskIsErrorTool: "required", TaskOnceTool: "required"}
	if len(support) != len(want) {
		t.Errorf("taskSupport %v", support)
	}
	for name, s := range want {
		if support[name] != s {
			t.Errorf("%s: taskSupport %q, want %q", name, support[name], s)
		}
	}

	// 2025-06-18 had no tasks: the task member is ignored.
	old := newStdioWire(t, context.Background(), tasksOn())
	if caps := initializeAs(t, old, mcp.Version20250618); caps != nil {
		t.Errorf("tasks capability in 2025-06-18: %s", caps)
	}
	m, _ := old.request(t, 2, "tools/call", callParamsJSON(TaskSleepTool, map[string]any{"text": "plain"}, anyTTL))
	if text, _ := toolText(t, m); text != "plain" {
		t.Errorf("task_sleep in 2025-06-18: %q", text)
	}
	m, _ = old.request(t, 3, "tasks/get", taskIDParams("x"))
	wantErrorCode(t, m, jsonrpc.CodeMethodNotFound)

	// Without Options.Tasks nothing changes.
	off := newStdioWire(t, context.Background(), Options{})
	if caps := initializeAs(t, off, mcp.Version20251125); caps != nil {
		t.Errorf("tasks capability without tasks: %s", caps)
	}
	if names, _ := toolNamesOf(t, off); !slices.Equal(names, ToolNames()) {
		t.Errorf("tools %v", names)
	}
	for i, method := range []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list"} {
		m, _ := off.request(t, 10+i, method, taskIDParams("x"))
		wantErrorCode(t, m, jsonrpc.CodeMethodNotFound)
	}
	m, _ = off.request(t, 20, "tools/call", callParamsJSON(TaskSleepTool, nil, anyTTL))
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
}

// TestTaskInitializeLifecycle: a task is created working, tasks/result
// returns the tool's result tied to the task, tasks/get then says
// completed, and a completed task cannot be cancelled.
func TestTaskInitializeLifecycle(t *testing.T) {
	w := newStdioWire(t, context.Background(), tasksOn())
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskSleepTool, map[string]any{"ms": 1, "text": "done"}, ttlOf(60000))
	if *tk.TTL != 60000 {
		t.Errorf("ttl %d, want the 60000 asked for", *tk.TTL)
	}
	m, _ := w.request(t, 2, "tasks/result", taskIDParams(tk.TaskID))
	if text, isErr := taskResult(t, m, tk.TaskID); text != "done" || isErr {
		t.Errorf("tasks/result %q %v", text, isErr)
	}
	m, _ = w.request(t, 3, "tasks/get", taskIDParams(tk.TaskID))
	if got := initializeTask(t, m.Result); got.Status != mcp.TaskCompleted || got.TaskID != tk.TaskID || got.CreatedAt != tk.CreatedAt {
		t.Errorf("tasks/get %s", m.Result)
	}
	m, _ = w.request(t, 4, "tasks/cancel", taskIDParams(tk.TaskID))
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	if !strings.Contains(m.Error.Message, "completed") {
		t.Errorf("cancel of a completed task: %v", m.Error)
	}
	st := w.srv.Stats()
	if st.TasksCreated != 1 || st.TaskExecutions[TaskSleepTool] != 1 || st.ToolCalls[TaskSleepTool] != 1 || st.TaskResults != 1 ||
		st.TaskPolls != 1 || st.TaskCancels != 0 || st.TasksRunning != 0 || st.TaskStatus[tk.TaskID] != mcp.TaskCompleted {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskInitializeCancel: tasks/cancel makes a running task cancelled at
// once (its answer says so), stops it, and a pending tasks/result gets
// -32603 with the status in its data.
func TestTaskInitializeCancel(t *testing.T) {
	w := newStdioWire(t, context.Background(), tasksOn())
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskSleepTool, map[string]any{"ms": 600000}, anyTTL)
	m, _ := w.request(t, 2, "tasks/get", taskIDParams(tk.TaskID))
	if got := initializeTask(t, m.Result); got.Status != mcp.TaskWorking {
		t.Errorf("tasks/get %s", m.Result)
	}
	w.send(t, reqJSON(3, "tasks/result", taskIDParams(tk.TaskID)))
	waitStats(t, w.srv, "tasks/result", func(st Stats) bool { return st.TaskResults == 1 })
	w.send(t, reqJSON(4, "tasks/cancel", taskIDParams(tk.TaskID)))
	for seen := 0; seen < 2; {
		m := w.recv(t)
		switch {
		case !m.IsResponse():
			t.Fatalf("unexpected %s", m.Method)
		case m.ID.Raw() == "3":
			seen++
			wantErrorCode(t, m, jsonrpc.CodeInternalError)
			if string(m.Error.Data) != `{"status":"cancelled","taskId":"`+tk.TaskID+`"}` {
				t.Errorf("tasks/result of a cancelled task: %v %s", m.Error, m.Error.Data)
			}
		case m.ID.Raw() == "4":
			seen++
			if got := initializeTask(t, m.Result); got.Status != mcp.TaskCancelled || got.StatusMessage == "" {
				t.Errorf("tasks/cancel %s", m.Result)
			}
		}
	}
	m, _ = w.request(t, 5, "tasks/cancel", taskIDParams(tk.TaskID))
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	m, _ = w.request(t, 6, "tasks/get", taskIDParams(tk.TaskID))
	if got := initializeTask(t, m.Result); got.Status != mcp.TaskCancelled {
		t.Errorf("tasks/get after cancel %s", m.Result)
	}
	if st := w.srv.Stats(); st.TaskCancels != 1 || st.TasksRunning != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskInitializeRefusals: the errors of tools/call and of the tasks/
// methods.
func TestTaskInitializeRefusals(t *testing.T) {
	w := newStdioWire(t, context.Background(), tasksOn())
	w.initialize(t)
	for i, tc := range []struct {
		method, params string
		code           int64
	}{
		{"tools/call", callParamsJSON(TaskSleepTool, nil, nil), jsonrpc.CodeMethodNotFound}, // required, no task
		{"tools/call", callParamsJSON("echo", map[string]any{"text": "x"}, anyTTL), jsonrpc.CodeMethodNotFound},
		{"tools/call", `{"name":"task_sleep","task":"soon"}`, jsonrpc.CodeInvalidParams},
		{"tasks/get", taskIDParams("nope"), jsonrpc.CodeInvalidParams},
		{"tasks/get", "", jsonrpc.CodeInvalidParams},
		{"tasks/result", taskIDParams("nope"), jsonrpc.CodeInvalidParams},
		{"tasks/cancel", taskIDParams("nope"), jsonrpc.CodeInvalidParams},
		{"tasks/update", taskIDParams("nope"), jsonrpc.CodeMethodNotFound}, // the extension's
	} {
		m, _ := w.request(t, 10+i, tc.method, tc.params)
		if m.Error == nil || m.Error.Code != tc.code {
			t.Errorf("%s %s: %v %s, want %d", tc.method, tc.params, m.Error, m.Result, tc.code)
		}
	}
	// An optional tool runs as a plain call or as a task.
	m, _ := w.request(t, 30, "tools/call", callParamsJSON(TaskOptionalTool, map[string]any{"text": "plain"}, nil))
	if text, _ := toolText(t, m); text != "plain" {
		t.Errorf("task_optional without task: %q", text)
	}
	tk := initializeCreate(t, w, 31, TaskOptionalTool, map[string]any{"text": "tasked"}, anyTTL)
	m, _ = w.request(t, 32, "tasks/result", taskIDParams(tk.TaskID))
	if text, _ := taskResult(t, m, tk.TaskID); text != "tasked" {
		t.Errorf("task_optional as a task: %q", text)
	}
	if st := w.srv.Stats(); st.TaskExecutions[TaskOptionalTool] != 1 || st.ToolCalls[TaskOptionalTool] != 2 || st.TasksCreated != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskInitializeRefuseAsResult: with RefuseAsResult a plain call of a
// tool that requires a task is a result with isError, as the TypeScript
// SDK answers, and the tool does not run; asked as a task, it runs.
func TestTaskInitializeRefuseAsResult(t *testing.T) {
	w := newStdioWire(t, context.Background(), tasksOn(func(o *TaskOptions) { o.RefuseAsResult = true }))
	w.initialize(t)
	m, _ := w.request(t, 2, "tools/call", callParamsJSON(TaskSleepTool, map[string]any{"text": "x"}, nil))
	text, isError := toolText(t, m)
	if !isError || text != "Tool task_sleep requires task augmentation (taskSupport: 'required')" {
		t.Errorf("plain call: isError %v, %q", isError, text)
	}
	tk := initializeCreate(t, w, 3, TaskSleepTool, map[string]any{"text": "tasked"}, anyTTL)
	m, _ = w.request(t, 4, "tasks/result", taskIDParams(tk.TaskID))
	if text, _ := taskResult(t, m, tk.TaskID); text != "tasked" {
		t.Errorf("as a task: %q", text)
	}
	if st := w.srv.Stats(); st.TaskExecutions[TaskSleepTool] != 1 || st.TasksCreated != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskInitializeFailed: a JSON-RPC error fails the task and tasks/result
// returns that error; a result with isError fails it too, and
// tasks/result returns that result.
func TestTaskInitializeFailed(t *testing.T) {
	w := newStdioWire(t, context.Background(), tasksOn())
	w.initialize(t)
	for i, tc := range []struct {
		args map[string]any
		code int64
		msg  string
	}{
		{map[string]any{"code": -32000, "message": "boom"}, -32000, "boom"},
		{nil, DefaultTaskErrorCode, "task_error failed as asked"},
	} {
		tk := initializeCreate(t, w, 10*i+1, TaskErrorTool, tc.args, anyTTL)
		m, _ := w.request(t, 10*i+2, "tasks/result", taskIDParams(tk.TaskID))
		wantErrorCode(t, m, tc.code)
		if m.Error.Message != tc.msg {
			t.Errorf("tasks/result error %v", m.Error)
		}
		m, _ = w.request(t, 10*i+3, "tasks/get", taskIDParams(tk.TaskID))
		if got := initializeTask(t, m.Result); got.Status != mcp.TaskFailed || got.StatusMessage != tc.msg {
			t.Errorf("tasks/get %s", m.Result)
		}
	}
	tk := initializeCreate(t, w, 30, TaskIsErrorTool, map[string]any{"text": "bad input"}, anyTTL)
	m, _ := w.request(t, 31, "tasks/result", taskIDParams(tk.TaskID))
	if text, isErr := taskResult(t, m, tk.TaskID); text != "bad input" || !isErr {
		t.Errorf("tasks/result %q %v", text, isErr)
	}
	m, _ = w.request(t, 32, "tasks/get", taskIDParams(tk.TaskID))
	if got := initializeTask(t, m.Result); got.Status != mcp.TaskFailed || got.StatusMessage == "" {
		t.Errorf("tasks/get %s", m.Result)
	}
}

// TestTaskInitializeInputOnResultStream: over Streamable HTTP, a task that
// needs input waits in input_required until a tasks/result comes, sends
// its elicitation (tied to the task) on that request's SSE stream, goes
// back to working once answered and then completes; the status
// notifications go on that stream too.
func TestTaskInitializeInputOnResultStream(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Options: tasksOn(func(o *TaskOptions) { o.StatusNotifications = true })})
	srv := s.Server()
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskAskTool, nil, anyTTL)
	waitTaskStatus(t, srv, tk.TaskID, mcp.TaskInputRequired)
	get := w.do(t, http.MethodPost, reqJSON(2, "tasks/get", taskIDParams(tk.TaskID)), nil)
	if ct := get.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("tasks/get answered as %q, want no stream", ct)
	}
	m, _ := readAnswer(t, get, nil)
	get.Body.Close()
	if got := initializeTask(t, m.Result); got.Status != mcp.TaskInputRequired {
		t.Errorf("tasks/get %s", m.Result)
	}
	if st := srv.Stats(); st.TaskInputRequests != 0 {
		t.Errorf("an input request went out before any tasks/result: %+v", st)
	}
	resp := w.do(t, http.MethodPost, reqJSON(3, "tasks/result", taskIDParams(tk.TaskID)), nil)
	defer resp.Body.Close()
	m, others := readAnswer(t, resp, func(m *jsonrpc.Message) {
		if m.IsRequest() {
			w.send(t, elicitAnswer(m.ID, "Ann"))
		}
	})
	if text, _ := taskResult(t, m, tk.TaskID); text != "hello Ann" {
		t.Errorf("tasks/result %q", text)
	}
	var got []string
	for _, o := range others {
		what := o.Method
		if o.Method == "notifications/tasks/status" {
			st := initializeTask(t, o.Params)
			what += " " + string(st.Status)
			if st.TaskID != tk.TaskID {
				t.Errorf("status of task %s", st.TaskID)
			}
		} else if got := relatedTaskOf(t, o.Params); got != tk.TaskID {
			t.Errorf("%s related-task %q: %s", o.Method, got, o.Params)
		}
		got = append(got, what)
	}
	want := []string{"elicitation/create", "notifications/tasks/status working", "notifications/tasks/status completed"}
	if !slices.Equal(got, want) {
		t.Errorf("on the tasks/result stream %q, want %q", got, want)
	}
	if st := srv.Stats(); st.TaskInputRequests != 1 || st.TaskStatus[tk.TaskID] != mcp.TaskCompleted {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskInitializeInputAskedAgain: the input request of a task moves to the
// newest tasks/result (cancelled where it was), and when its tasks/result
// ends first it waits for the next one; every pending tasks/result gets
// the result.
func TestTaskInitializeInputAskedAgain(t *testing.T) {
	w := newStdioWire(t, context.Background(), tasksOn())
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskAskTool, map[string]any{"message": "name?"}, anyTTL)
	nextRequest := func() *jsonrpc.Message {
		t.Helper()
		m := w.recv(t)
		if !m.IsRequest() || m.Method != "elicitation/create" || relatedTaskOf(t, m.Params) != tk.TaskID {
			t.Fatalf("got %s %s, want an elicitation of the task", m.Method, m.Params)
		}
		return m
	}
	cancelled := func(of *jsonrpc.Message) {
		t.Helper()
		m := w.recv(t)
		var p mcp.CancelledParams
		_ = json.Unmarshal(m.Params, &p)
		if m.Method != "notifications/cancelled" || string(p.RequestID) != of.ID.Raw() {
			t.Fatalf("got %s %s, want the cancellation of %s", m.Method, m.Params, of.ID)
		}
	}
	w.send(t, reqJSON(2, "tasks/result", taskIDParams(tk.TaskID)))
	e1 := nextRequest()
	w.send(t, reqJSON(3, "tasks/result", taskIDParams(tk.TaskID)))
	cancelled(e1)
	e2 := nextRequest()
	// The client gives up on tasks/result 3: the request on it is
	// cancelled, and the task waits for another tasks/result (2 had its
	// chance).
	w.send(t, notifJSON("notifications/cancelled", `{"requestId":3}`))
	cancelled(e2)
	w.send(t, reqJSON(4, "tasks/result", taskIDParams(tk.TaskID)))
	e3 := nextRequest()
	if e1.ID.Raw() == e2.ID.Raw() || e2.ID.Raw() == e3.ID.Raw() {
		t.Errorf("request ids reused: %s %s %s", e1.ID, e2.ID, e3.ID)
	}
	w.send(t, elicitAnswer(e3.ID, "Bo"))
	answered := map[string]bool{}
	for len(answered) < 2 {
		m := w.recv(t)
		if !m.IsResponse() {
			t.Fatalf("unexpected %s", m.Method)
		}
		if text, _ := taskResult(t, m, tk.TaskID); text != "hello Bo" {
			t.Errorf("tasks/result %s: %q", m.ID, text)
		}
		answered[m.ID.Raw()] = true
	}
	if !answered["2"] || !answered["4"] {
		t.Errorf("answered %v, want 2 and 4", answered)
	}
	if st := w.srv.Stats(); st.TaskInputRequests != 3 || st.TaskResults != 3 || st.TaskExecutions[TaskAskTool] != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskInitializeInputWithoutResult: with InputWithoutResult the request
// goes out at once on the GET stream, without any tasks/result.
func TestTaskInitializeInputWithoutResult(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Options: tasksOn(func(o *TaskOptions) { o.InputWithoutResult = true })})
	w.initialize(t)
	get := w.do(t, http.MethodGet, "", nil)
	defer get.Body.Close()
	events := newSSEReader(get.Body)
	tk := initializeCreate(t, w, 1, TaskAskTool, nil, anyTTL)
	ev, err := events.next()
	if err != nil {
		t.Fatal(err)
	}
	e := mustDecode(t, ev.data)
	if e.Method != "elicitation/create" || relatedTaskOf(t, e.Params) != tk.TaskID {
		t.Fatalf("on the GET stream: %s", ev.data)
	}
	w.send(t, elicitAnswer(e.ID, "Cy"))
	waitTaskStatus(t, s.Server(), tk.TaskID, mcp.TaskCompleted)
	m, _ := w.request(t, 2, "tasks/result", taskIDParams(tk.TaskID))
	if text, _ := taskResult(t, m, tk.TaskID); text != "hello Cy" {
		t.Errorf("tasks/result %q", text)
	}
}

// TestTaskInitializeHTTPSSE: over HTTP+SSE (which speaks 2024-11-05, without
// tasks, unless told otherwise), the one stream carries the elicitation
// of a task (once a tasks/result is pending), the status notifications
// and the answers.
func TestTaskInitializeHTTPSSE(t *testing.T) {
	opts := tasksOn(func(o *TaskOptions) { o.StatusNotifications = true })
	opts.Versions = []string{mcp.Version20251125}
	s := startLegacy(t, LegacyOptions{Options: opts})
	w := dialLegacy(t, s.URL)
	w.initialize(t)
	m, others := w.request(t, 1, "tools/call", callParamsJSON(TaskAskTool, nil, anyTTL))
	if len(others) > 0 {
		t.Errorf("before the task's id: %s %s", others[0].Method, others[0].Params)
	}
	tk := initializeTask(t, result[struct {
		Task json.RawMessage `json:"task"`
	}](t, m).Task)
	if note := w.next(t); note.Method != "notifications/tasks/status" || initializeTask(t, note.Params).Status != mcp.TaskInputRequired {
		t.Fatalf("got %s %s", note.Method, note.Params)
	}
	w.send(t, reqJSON(2, "tasks/result", taskIDParams(tk.TaskID)))
	e := w.next(t)
	if e.Method != "elicitation/create" || relatedTaskOf(t, e.Params) != tk.TaskID {
		t.Fatalf("got %s %s", e.Method, e.Params)
	}
	w.send(t, elicitAnswer(e.ID, "Di"))
	var statuses []string
	for {
		m := w.next(t)
		if m.IsResponse() {
			if text, _ := taskResult(t, m, tk.TaskID); text != "hello Di" {
				t.Errorf("tasks/result %q", text)
			}
			break
		}
		statuses = append(statuses, string(initializeTask(t, m.Params).Status))
	}
	if !slices.Equal(statuses, []string{"working", "completed"}) {
		t.Errorf("statuses %v", statuses)
	}
}
