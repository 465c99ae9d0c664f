package testservers

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// TestTaskInitializeList: tasks/list returns the tasks oldest first, in pages
// of Options.PageSize; a made-up cursor is -32602.
func TestTaskInitializeList(t *testing.T) {
	opts := tasksOn()
	opts.PageSize = 2
	w := newStdioWire(t, context.Background(), opts)
	w.initialize(t)
	var ids []string
	for i := range 3 {
		ids = append(ids, initializeCreate(t, w, i+1, TaskSleepTool, map[string]any{"ms": 600000}, anyTTL).TaskID)
	}
	var got []string
	cursor := ""
	for page := 0; ; page++ {
		params := "{}"
		if cursor != "" {
			params = toJSON(map[string]string{"cursor": cursor})
		}
		m, _ := w.request(t, 10+page, "tasks/list", params)
		r := result[struct {
			Tasks      []json.RawMessage `json:"tasks"`
			NextCursor string            `json:"nextCursor"`
		}](t, m)
		if len(r.Tasks) > 2 {
			t.Errorf("page of %d", len(r.Tasks))
		}
		for _, raw := range r.Tasks {
			tk := initializeTask(t, raw)
			got = append(got, tk.TaskID)
			if tk.Status != mcp.TaskWorking {
				t.Errorf("listed %s", raw)
			}
		}
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	if strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Errorf("listed %v, want %v", got, ids)
	}
	m, _ := w.request(t, 20, "tasks/list", `{"cursor":"made-up"}`)
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	// A task ended is still listed, with its status.
	m, _ = w.request(t, 21, "tasks/cancel", taskIDParams(ids[0]))
	if m.Error != nil {
		t.Fatal(m.Error)
	}
	m, _ = w.request(t, 22, "tasks/list", "")
	if !strings.Contains(string(m.Result), `"status":"cancelled"`) {
		t.Errorf("tasks/list %s", m.Result)
	}
}

// TestTaskForgetAfterPolls: in both eras the server forgets a task after
// ForgetAfterPolls tasks/get answers, stopping it; then every tasks/
// method says -32602.
func TestTaskForgetAfterPolls(t *testing.T) {
	opts := tasksOn(func(o *TaskOptions) { o.ForgetAfterPolls = 2 })
	opts.Eras = DualEra
	w := newStdioWire(t, context.Background(), opts)
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskSleepTool, map[string]any{"ms": 600000}, anyTTL)
	for i := range 2 {
		m, _ := w.request(t, 2+i, "tasks/get", taskIDParams(tk.TaskID))
		if initializeTask(t, m.Result).Status != mcp.TaskWorking {
			t.Errorf("poll %d: %s", i+1, m.Result)
		}
	}
	for i, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		m, _ := w.request(t, 10+i, method, taskIDParams(tk.TaskID))
		wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
		if !strings.Contains(m.Error.Message, "not found") {
			t.Errorf("%s: %v", method, m.Error)
		}
	}
	// The extension's tasks are forgotten the same way.
	call := statelessParams(map[string]any{"name": TaskSleepTool, "arguments": map[string]any{"ms": 600000}}, tasksExt, nil)
	m, _ := w.request(t, 20, "tools/call", call)
	id := result[mcp.Task](t, m).TaskID
	get := statelessParams(map[string]any{"taskId": id}, tasksExt, nil)
	for i := range 2 {
		if m, _ := w.request(t, 21+i, "tasks/get", get); m.Error != nil {
			t.Fatalf("poll %d: %v", i+1, m.Error)
		}
	}
	m, _ = w.request(t, 23, "tasks/get", get)
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	st := w.srv.Stats()
	if st.TasksForgotten != 2 || st.TasksRunning != 0 || len(st.TaskStatus) != 0 || st.TaskPolls != 4 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskTTL: the ttl a task gets, and the end of an expired one.
func TestTaskTTL(t *testing.T) {
	for _, tc := range []struct {
		name  string
		knob  time.Duration
		asked *int64
		want  string // the ttl member
	}{
		{"asked", 0, ttlOf(1234), "1234"},
		{"asked for ever", 0, ttlOf(math.MaxInt64), "9223372036854"},
		{"default", 0, anyTTL, "300000"},
		{"server's", 2 * time.Second, ttlOf(1234), "2000"},
		{"unlimited", -1, ttlOf(1234), "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newStdioWire(t, context.Background(), tasksOn(func(o *TaskOptions) { o.TTL = tc.knob }))
			w.initialize(t)
			m, _ := w.request(t, 1, "tools/call", callParamsJSON(TaskSleepTool, nil, tc.asked))
			var r struct {
				Task map[string]json.RawMessage `json:"task"`
			}
			_ = json.Unmarshal(m.Result, &r)
			if got := string(r.Task["ttl"]); got != tc.want {
				t.Errorf("ttl %s, want %s: %s", got, tc.want, m.Result)
			}
		})
	}
	// A ttl of a nanosecond has passed by the first poll.
	opts := tasksOn(func(o *TaskOptions) { o.TTL = time.Nanosecond })
	opts.Eras = DualEra
	w := newStdioWire(t, context.Background(), opts)
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskSleepTool, map[string]any{"ms": 600000}, anyTTL)
	m, _ := w.request(t, 2, "tasks/get", taskIDParams(tk.TaskID))
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	if !strings.Contains(m.Error.Message, "expired") {
		t.Errorf("tasks/get of an expired task: %v", m.Error)
	}
	call := statelessParams(map[string]any{"name": TaskSleepTool, "arguments": map[string]any{"ms": 600000}}, tasksExt, nil)
	m, _ = w.request(t, 3, "tools/call", call)
	id := result[mcp.Task](t, m).TaskID
	m, _ = w.request(t, 4, "tasks/get", statelessParams(map[string]any{"taskId": id}, tasksExt, nil))
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	if st := w.srv.Stats(); st.TasksForgotten != 2 || st.TasksRunning != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskMaxTasks: beyond MaxTasks running tasks a task is refused with
// -32603 (a stateless optional tool runs as a plain call instead); once one
// ends there is room again.
func TestTaskMaxTasks(t *testing.T) {
	opts := tasksOn(func(o *TaskOptions) { o.MaxTasks = 1 })
	opts.Eras = DualEra
	w := newStdioWire(t, context.Background(), opts)
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskSleepTool, map[string]any{"ms": 600000}, anyTTL)
	m, _ := w.request(t, 2, "tools/call", callParamsJSON(TaskOptionalTool, nil, anyTTL))
	wantErrorCode(t, m, jsonrpc.CodeInternalError)
	m, _ = w.request(t, 3, "tools/call", statelessParams(map[string]any{"name": TaskSleepTool}, tasksExt, nil))
	wantErrorCode(t, m, jsonrpc.CodeInternalError)
	m, _ = w.request(t, 4, "tools/call", statelessParams(map[string]any{"name": TaskOptionalTool, "arguments": map[string]any{"text": "now"}}, tasksExt, nil))
	if text, _ := toolText(t, m); text != "now" || strings.Contains(string(m.Result), "taskId") {
		t.Errorf("task_optional beyond MaxTasks: %s", m.Result)
	}
	if m, _ := w.request(t, 5, "tasks/cancel", taskIDParams(tk.TaskID)); m.Error != nil {
		t.Fatal(m.Error)
	}
	initializeCreate(t, w, 6, TaskSleepTool, map[string]any{"ms": 600000}, anyTTL)
	if st := w.srv.Stats(); st.TasksRefused != 3 || st.TasksCreated != 2 || st.TasksRunning != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskOnce: task_once runs once per task, counted as the once tool
// counts.
func TestTaskOnce(t *testing.T) {
	w := newStdioWire(t, context.Background(), tasksOn())
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskOnceTool, map[string]any{"key": "pay-1"}, anyTTL)
	m, _ := w.request(t, 2, "tasks/result", taskIDParams(tk.TaskID))
	if text, _ := taskResult(t, m, tk.TaskID); text != "pay-1 executed 1 time(s)" {
		t.Errorf("tasks/result %q", text)
	}
	if m, _ := w.request(t, 3, "tasks/result", taskIDParams(tk.TaskID)); m.Error != nil {
		t.Fatal(m.Error)
	}
	st := w.srv.Stats()
	if w.srv.Executed("pay-1") != 1 || st.Executions != 1 || st.Duplicates != 0 || st.TaskExecutions[TaskOnceTool] != 1 || st.TaskResults != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestTaskShutdownHTTP: closing the server fails the running tasks; a
// pending tasks/result gets -32603, and the executions are gone when
// Close returns.
func TestTaskShutdownHTTP(t *testing.T) {
	s := StartStreamable(HTTPOptions{Options: tasksOn()})
	defer s.Close()
	srv := s.Server()
	w := newHTTPWire(t, s.URL)
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskSleepTool, map[string]any{"ms": 600000}, anyTTL)
	resp := w.do(t, http.MethodPost, reqJSON(2, "tasks/result", taskIDParams(tk.TaskID)), nil)
	defer resp.Body.Close()
	waitStats(t, srv, "tasks/result", func(st Stats) bool { return st.TaskResults == 1 })
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		s.Close()
	}()
	m, _ := readAnswer(t, resp, nil)
	wantErrorCode(t, m, jsonrpc.CodeInternalError)
	<-closed
	if st := srv.Stats(); st.TaskStatus[tk.TaskID] != mcp.TaskFailed || st.TasksRunning != 0 {
		t.Errorf("stats %+v", st)
	}
	// No task starts any more.
	if _, err := srv.newTask(eraInitialize, TaskSleepTool, time.Minute, nil); err == nil {
		t.Error("a task started after Close")
	}
}

// TestTaskShutdownStdio: at the end of stdin the tasks end first, so a
// pending tasks/result is answered and ServeStdio returns.
func TestTaskShutdownStdio(t *testing.T) {
	w := newStdioWire(t, context.Background(), tasksOn())
	w.initialize(t)
	tk := initializeCreate(t, w, 1, TaskAskTool, nil, anyTTL)
	w.send(t, reqJSON(2, "tasks/result", taskIDParams(tk.TaskID)))
	if m := w.recv(t); m.Method != "elicitation/create" {
		t.Fatalf("got %s", m.Method)
	}
	if err := w.shutdown(t); err != nil {
		t.Fatal(err)
	}
	for {
		m := w.recv(t)
		if m.IsResponse() {
			wantErrorCode(t, m, jsonrpc.CodeInternalError)
			break
		}
	}
	if st := w.srv.Stats(); st.TaskStatus[tk.TaskID] != mcp.TaskFailed {
		t.Errorf("stats %+v", st)
	}
}
