package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// taskOptions are test servers' options with tasks on.
var taskOptions = testservers.Options{Tasks: testservers.TaskOptions{Enabled: true}}

// taskIDIn returns the id of the task a "task ID: status" line names.
func taskIDIn(t *testing.T, stderr string) string {
	t.Helper()
	m := regexp.MustCompile(`task (\S+): working`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no task status on stderr: %q", stderr)
	}
	return m[1]
}

// tools call waits for a tool the server runs as a task, in both designs
// and over stdio too, shows its statuses on stderr, and prints its result
// as for any call; --json gives the result and one status line each.
func TestToolsCallTask(t *testing.T) {
	legacy := testservers.StartStreamable(testservers.HTTPOptions{Options: taskOptions})
	t.Cleanup(legacy.Close)
	modern := testservers.StartStateless(testservers.HTTPOptions{Options: taskOptions})
	t.Cleanup(modern.Close)
	for _, tc := range []struct {
		name   string
		target []string
	}{
		{"2025-11-25", []string{legacy.URL}},
		{"2026-07-28", []string{modern.URL}},
		{"stdio", stdioTarget(taskOptions)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			res := r.run(append([]string{"tools", "call", testservers.TaskSleepTool, "ms:=20", "text=slept"}, tc.target...)...)
			if res.code != 0 || strings.TrimSpace(res.stdout) != "slept" {
				t.Fatalf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
			}
			id := taskIDIn(t, res.stderr)
			if !strings.Contains(res.stderr, "task "+id+": completed") {
				t.Errorf("stderr %q: no completed status", res.stderr)
			}

			res = r.run(append([]string{"tools", "call", "--json", testservers.TaskIsErrorTool, "text=no"}, tc.target...)...)
			if res.code != exitToolError {
				t.Fatalf("isError task: exit %d, stderr %q", res.code, res.stderr)
			}
			var out struct {
				IsError bool `json:"isError"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || !out.IsError {
				t.Errorf("--json stdout %q: %v", res.stdout, err)
			}
			var line struct {
				Task struct {
					TaskID string `json:"taskId"`
					Status string `json:"status"`
				} `json:"task"`
			}
			first, _, _ := strings.Cut(res.stderr, "\n")
			if err := json.Unmarshal([]byte(first), &line); err != nil || line.Task.TaskID == "" || line.Task.Status != "working" {
				t.Errorf("--json stderr %q: want a task line first (%v)", res.stderr, err)
			}
		})
	}
}

// A wait given up (--timeout) exits 6 and names the task, which tasks get
// and tasks result reach by its id from a new run; tasks list lists it,
// and tasks cancel cancels one.
func TestTasksCommands(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{Options: taskOptions})
	t.Cleanup(srv.Close)
	r := newRunner(t)

	// A wait ended by --max-time: the task is cancelled with it.
	res := r.run("tools", "call", "--max-time", "1s", testservers.TaskSleepTool, "ms:=60000", "text=late", srv.URL)
	if res.code != exitTimeout {
		t.Fatalf("exit %d, want %d; stderr %q", res.code, exitTimeout, res.stderr)
	}
	id := taskIDIn(t, res.stderr)
	if !strings.Contains(res.stderr, "mcpcall tasks result "+id) {
		t.Errorf("stderr %q does not say how to wait for the task again", res.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := srv.Server().WaitStats(ctx, func(st testservers.Stats) bool { return st.TaskCancels == 1 }); err != nil {
		t.Fatalf("the task was not cancelled: %v", err)
	}
	res = r.runOK("tasks", "get", id, srv.URL)
	if !strings.HasPrefix(res.stdout, id+"\tcancelled") {
		t.Errorf("tasks get: %q", res.stdout)
	}

	// A task made by a run that went away is awaited by another.
	res = r.run("tools", "call", "--max-time", "1s", "--json", testservers.TaskSleepTool, "ms:=60000", "text=x", srv.URL)
	other := ""
	for _, l := range strings.Split(res.stderr, "\n") {
		var line struct {
			Task struct{ TaskID string } `json:"task"`
		}
		if json.Unmarshal([]byte(l), &line) == nil && line.Task.TaskID != "" {
			other = line.Task.TaskID
		}
	}
	if other == "" || other == id {
		t.Fatalf("no second task in %q", res.stderr)
	}
	res = r.run("tools", "call", testservers.TaskSleepTool, "ms:=300", "text=kept", "--max-time", "5s", srv.URL)
	if res.code != 0 || strings.TrimSpace(res.stdout) != "kept" {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	kept := taskIDIn(t, res.stderr)
	res = r.runOK("tasks", "result", kept, srv.URL)
	if strings.TrimSpace(res.stdout) != "kept" {
		t.Errorf("tasks result %s: %q", kept, res.stdout)
	}

	// tasks list has them all; tasks cancel of an ended task is the
	// server's -32602 (exit 5).
	res = r.runOK("tasks", "list", "--json", srv.URL)
	for _, want := range []string{id, other, kept} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("tasks list: %s not in %q", want, res.stdout)
		}
	}
	res = r.run("tasks", "cancel", kept, srv.URL)
	if res.code != exitRPC {
		t.Errorf("tasks cancel of a completed task: exit %d, stderr %q", res.code, res.stderr)
	}
}

// A task the server forgets exits 5 (the tool ran, may run again if tried
// again), not 4, which scripts retry.
func TestTaskForgottenExits5(t *testing.T) {
	o := taskOptions
	o.Tasks.ForgetAfterPolls = 1
	srv := testservers.StartStreamable(testservers.HTTPOptions{Options: o})
	t.Cleanup(srv.Close)
	res := newRunner(t).run("tools", "call", testservers.TaskSleepTool, "ms:=60000", "text=x", srv.URL)
	if res.code != exitRPC || !strings.Contains(res.stderr, "no longer knows") {
		t.Fatalf("exit %d, stderr %q; want 5 and why", res.code, res.stderr)
	}
}

// A tool that requires a task, on a server that answers a plain call of it
// with an isError result (as the TypeScript SDK's servers do), runs as a
// task: tools call lists through the Conn, which then asks for a task at
// once (one tools/call); with --no-validate nothing is listed first, the
// refusal leads to a listing, and the call goes out again as a task.
func TestToolsCallRequiredTaskRefusedAsResult(t *testing.T) {
	opts := testservers.Options{Tasks: testservers.TaskOptions{Enabled: true, RefuseAsResult: true}}
	srv := testservers.StartStreamable(testservers.HTTPOptions{Options: opts})
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name   string
		flags  []string
		target []string
		calls  int // tools/call requests the HTTP server sees (0: not counted)
	}{
		{"http", nil, []string{srv.URL}, 1},
		{"http, --no-validate", []string{"--no-validate"}, []string{srv.URL}, 2},
		{"stdio", nil, stdioTarget(opts), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.Server().Stats().Requests["tools/call"]
			r := newRunner(t)
			args := append([]string{"tools", "call", testservers.TaskSleepTool, "text=slept"}, tc.flags...)
			res := r.run(append(args, tc.target...)...)
			if res.code != 0 || strings.TrimSpace(res.stdout) != "slept" {
				t.Fatalf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
			}
			if !strings.Contains(res.stderr, "task "+taskIDIn(t, res.stderr)+": completed") {
				t.Errorf("stderr %q: no completed status", res.stderr)
			}
			if got := srv.Server().Stats().Requests["tools/call"] - before; got != tc.calls && tc.calls > 0 {
				t.Errorf("%d tools/call requests, want %d", got, tc.calls)
			}
		})
	}
}
