package mcp

import (
	"encoding/json"
	"testing"
	"time"
)

func TestTaskBothShapes(t *testing.T) {
	// The 2025-11-25 answer to a task-augmented tools/call, and a task of
	// the 2026-07-28 extension as tasks/get returns it once completed.
	var created CreateTaskResult
	if err := json.Unmarshal([]byte(`{"task":{"taskId":"t-1","status":"working","createdAt":"2025-11-25T10:30:00Z",
		"lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":250}}`), &created); err != nil {
		t.Fatal(err)
	}
	if got := created.Task; got.TaskID != "t-1" || got.Status != TaskWorking || got.PollEvery() != 250*time.Millisecond ||
		got.TTLDuration() != time.Minute || got.Status.Terminal() {
		t.Errorf("2025-11-25 task = %+v (poll %v, ttl %v)", got, got.PollEvery(), got.TTLDuration())
	}

	var done Task
	if err := json.Unmarshal([]byte(`{"resultType":"complete","taskId":"t-2","status":"completed","createdAt":"x","lastUpdatedAt":"y",
		"ttlMs":null,"pollIntervalMs":5000,"result":{"content":[{"type":"text","text":"hi"}]}}`), &done); err != nil {
		t.Fatal(err)
	}
	if done.PollEvery() != 5*time.Second || done.TTLDuration() != 0 || !done.Status.Terminal() {
		t.Errorf("extension task: poll %v, ttl %v, terminal %v", done.PollEvery(), done.TTLDuration(), done.Status.Terminal())
	}
	var res CallToolResult
	if err := json.Unmarshal(done.Result, &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != "hi" {
		t.Errorf("inline result %s: %+v, %v", done.Result, res, err)
	}
}

func TestTaskDurationsFromHostileServers(t *testing.T) {
	for _, tc := range []struct {
		name string
		json string
		poll time.Duration
	}{
		{"negative", `{"taskId":"a","status":"working","pollIntervalMs":-5}`, 0},
		{"zero", `{"taskId":"a","status":"working","pollInterval":0}`, 0},
		{"huge saturates", `{"taskId":"a","status":"working","pollIntervalMs":9223372036854775807}`, time.Duration(maxMillis) * time.Millisecond},
		{"extension member first", `{"taskId":"a","status":"working","pollInterval":1,"pollIntervalMs":2}`, 2 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var task Task
			if err := json.Unmarshal([]byte(tc.json), &task); err != nil {
				t.Fatal(err)
			}
			if got := task.PollEvery(); got != tc.poll || got < 0 {
				t.Errorf("PollEvery = %v, want %v", got, tc.poll)
			}
		})
	}
}

func TestTasksCapToolCalls(t *testing.T) {
	for _, tc := range []struct {
		json string
		want bool
	}{
		{`{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`, true},
		{`{"tasks":{"list":{},"cancel":{}}}`, false},
		{`{"tasks":{"requests":{"tools":{}}}}`, false},
		{`{}`, false},
	} {
		var caps ServerCapabilities
		if err := json.Unmarshal([]byte(tc.json), &caps); err != nil {
			t.Fatal(err)
		}
		if got := caps.Tasks.ToolCalls(); got != tc.want {
			t.Errorf("%s: ToolCalls = %v, want %v", tc.json, got, tc.want)
		}
	}
	var caps ServerCapabilities
	if err := json.Unmarshal([]byte(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`), &caps); err != nil {
		t.Fatal(err)
	}
	if !caps.HasExtension(ExtensionTasks) || caps.HasExtension("io.modelcontextprotocol/ui") {
		t.Errorf("extensions = %v", caps.Extensions)
	}
}
