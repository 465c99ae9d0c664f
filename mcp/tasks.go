package mcp

import (
	"encoding/json"
	"time"
)

// Tasks: a tool call that the server runs in the background, answered at
// once with a handle (a Task) that the client polls until the task ends.
// Two designs carry them:
//
//   - revision 2025-11-25 (experimental): the client asks for a task by
//     putting Task (TaskParams) into the tools/call params, for a tool whose
//     Execution.TaskSupport allows it and a server whose capabilities have
//     tasks.requests.tools.call; the answer is a CreateTaskResult; the
//     client polls tasks/get and fetches the tool's result with
//     tasks/result, which blocks until the task ends and carries the
//     server's requests for input while the task waits for them.
//   - revision 2026-07-28, the extension ExtensionTasks: the client declares
//     the extension in its capabilities on every request, and the server
//     decides, call by call, to answer with a task (resultType "task", the
//     Task members at the top of the result); tasks/get returns the task
//     with its result, error or inputRequests inline, and tasks/update
//     carries the client's answers to those.
//
// Task holds the members of both: TTL and PollInterval of 2025-11-25, TTLMs
// and PollIntervalMs of the extension, read through TTLDuration and
// PollEvery.

// ExtensionTasks identifies the tasks extension of revision 2026-07-28 in
// the extensions of client and server capabilities.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// MetaRelatedTask is the _meta key of 2025-11-25 that ties a message (a
// request of the server's, a tasks/result answer) to a task:
// {"taskId": "..."}.
const MetaRelatedTask = "io.modelcontextprotocol/related-task"

// ResultTask is the resultType of a result that is a task handle (the
// tasks extension of 2026-07-28).
const ResultTask = "task"

// TaskStatus is where a task stands.
type TaskStatus string

// The statuses of a task. Completed, Failed and Cancelled are terminal: a
// task in one of them never changes again.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether the status is one a task ends in.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task support of a tool (Tool.Execution.TaskSupport, revision 2025-11-25).
const (
	TaskSupportForbidden = "forbidden" // the default: never as a task
	TaskSupportOptional  = "optional"  // as a task or a plain call
	TaskSupportRequired  = "required"  // only as a task
)

// ToolExecution is the execution member of a Tool.
type ToolExecution struct {
	TaskSupport string `json:"taskSupport,omitempty"`
}

// TaskParams is the task member of a request's params that asks for it to
// run as a task (revision 2025-11-25). TTL is how long, in milliseconds,
// the server is asked to keep the task after its creation; 0 leaves it to
// the server.
type TaskParams struct {
	TTL int64 `json:"ttl,omitempty"`
}

// Task is the state of a task, as tasks/get, tasks/cancel, tasks/list, a
// status notification or the answer that created it give it.
type Task struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     string     `json:"createdAt,omitempty"`
	LastUpdatedAt string     `json:"lastUpdatedAt,omitempty"`

	// TTL and PollInterval are the members of revision 2025-11-25,
	// TTLMs and PollIntervalMs those of the tasks extension: how long the
	// task is kept after its creation and how often the server would
	// like to be polled, in milliseconds. Nil when absent (for the TTL:
	// also when null, unlimited). Each is read from any JSON number, as
	// a TTL is: 60000.0 and 6e4 are integers too, as JSON Schema counts
	// them.
	TTL            *TTL `json:"ttl,omitempty"`
	TTLMs          *TTL `json:"ttlMs,omitempty"`
	PollInterval   *TTL `json:"pollInterval,omitempty"`
	PollIntervalMs *TTL `json:"pollIntervalMs,omitempty"`

	// What a task of the extension carries inline, by status: the
	// result of the request (completed), the JSON-RPC error that ended it
	// (failed), the input the server needs (input_required, answered with
	// tasks/update).
	Result        raw                     `json:"result,omitempty"`
	Error         raw                     `json:"error,omitempty"`
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`

	Meta Meta `json:"_meta,omitempty"`
}

// PollEvery returns the polling interval the server suggested, zero when
// it gave none (or none that is positive).
func (t *Task) PollEvery() time.Duration {
	return millis(firstSet(t.PollIntervalMs, t.PollInterval))
}

// TTLDuration returns how long the server keeps the task after its
// creation, zero when it said nothing or unlimited.
func (t *Task) TTLDuration() time.Duration {
	return millis(firstSet(t.TTLMs, t.TTL))
}

func firstSet(a, b *TTL) *TTL {
	if a != nil {
		return a
	}
	return b
}

// maxMillis is the most milliseconds a time.Duration holds.
const maxMillis = int64(1<<63-1) / int64(time.Millisecond)

// millis converts milliseconds from a server, saturating, to a duration;
// nil or not positive is zero.
func millis(ms *TTL) time.Duration {
	if ms == nil || *ms <= 0 {
		return 0
	}
	return time.Duration(min(int64(*ms), maxMillis)) * time.Millisecond
}

// CreateTaskResult is the answer of revision 2025-11-25 to a request that
// asked to run as a task.
type CreateTaskResult struct {
	Task Task `json:"task"`
	Meta Meta `json:"_meta,omitempty"`
}

// TaskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type TaskIDParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// UpdateTaskParams are the params of tasks/update (the tasks extension):
// the client's answers to the task's inputRequests, by their keys.
type UpdateTaskParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	Meta           Meta                       `json:"_meta,omitempty"`
}

// ListTasksResult is one page of tasks/list (revision 2025-11-25).
type ListTasksResult struct {
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"nextCursor,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// TasksCap is the tasks capability of revision 2025-11-25: which task
// operations a party serves, and which of its requests may run as tasks.
type TasksCap struct {
	List     *struct{}         `json:"list,omitempty"`
	Cancel   *struct{}         `json:"cancel,omitempty"`
	Requests *TaskRequestsCaps `json:"requests,omitempty"`
}

// TaskRequestsCaps are the requests that may run as tasks, by feature
// (a client's sampling and elicitation requests, which a server may run
// as tasks, are not listed: this client never does).
type TaskRequestsCaps struct {
	Tools *TaskToolsCap `json:"tools,omitempty"`
}

// TaskToolsCap: Call set means tools/call may run as a task.
type TaskToolsCap struct {
	Call *struct{} `json:"call,omitempty"`
}

// ToolCalls reports whether tools/call may run as a task.
func (c *TasksCap) ToolCalls() bool {
	return c != nil && c.Requests != nil && c.Requests.Tools != nil && c.Requests.Tools.Call != nil
}
