package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Tasks: a tool call the server runs in the background. The server answers
// the call at once with a handle, a task, and the Conn polls the task until
// it ends and returns the result the call would have had, so CallTool works
// the same whether or not the server made a task of the call. There are
// two designs (see package mcp); the dialect says which the Conn asks for
// and accepts, from the era and the server's capabilities, and each wait
// follows the design of the handle it got:
//
//   - revision 2025-11-25 (tasksRequested): when a legacy server's
//     capabilities offer tasks for tools/call, the client asks for a task,
//     in the call's params, for a tool whose listing says its taskSupport
//     is "required" (the Conn always asks: the server refuses the plain
//     call with -32601) or "optional" (when the host asks: AsTask).
//     2026-07-28 has no such tasks: a dual-era server that offers them in
//     server/discover too (mcp-go v1.2.1 does) makes the task but refuses
//     tasks/result, so the tool would run with no way to fetch its result.
//     The Conn does not ask for them in the modern era; the server's
//     refusal of the plain call says to connect in the legacy era. The Conn polls tasks/get and fetches the result with
//     tasks/result, which it also calls, and waits on, as soon as the task
//     needs input: the server then sends its requests (elicitation,
//     sampling) on that exchange, and the host's handlers answer them as
//     any request of the server's.
//   - the tasks extension of 2026-07-28 (tasksExtension): every modern
//     request declares the extension, and the server decides which calls
//     become tasks (resultType "task"). tasks/get carries the result, the
//     error or the input the server needs; the Conn answers that input
//     with the host's handlers (each key once) and sends the answers with
//     tasks/update.
//
// Between two polls the Conn waits what the server suggests, within the
// bounds of the TaskPolicy (WithTaskPolicy); without a suggestion, a wait
// that starts short and doubles. A status notification of the task
// (notifications/tasks/status, notifications/tasks) ends the wait at once;
// the Conn does not rely on them, as the specification says. Once a task exists the tool
// may have run, whatever happens next: a call that ends before its task
// does — its context done, the server forgetting the task, the task
// cancelled — fails with a *TaskError, which matches
// jsonrpc.ErrOutcomeUnknown and names the task, so that the host may
// AwaitTask it later; a call whose context ends asks the server to cancel
// the task (tasks/cancel), in the background. Polls and fetches are safe to
// repeat, and the Conn repeats them through lost answers and expired
// sessions as it does any such request; it never sends the tool call again.

// TaskPolicy says how the Conn runs and waits for tasks. The zero value
// takes the defaults.
type TaskPolicy struct {
	// TTL is how long a server of revision 2025-11-25 is asked to keep a
	// task after creating it; zero leaves it to the server. (In the tasks
	// extension of 2026-07-28 the server alone decides.)
	TTL time.Duration
	// Poll is the longest wait between two polls when the server
	// suggests none: the first poll comes after MinPoll, and each wait
	// doubles up to Poll. DefaultTaskPoll when zero.
	Poll time.Duration
	// MinPoll and MaxPoll bound the wait between two polls, whatever the
	// server suggests: DefaultTaskMinPoll and DefaultTaskMaxPoll when zero.
	MinPoll, MaxPoll time.Duration
	// Never turns tasks off: the Conn neither declares the extension nor
	// asks for a task, so a server that can only run a tool as a task
	// refuses the call.
	Never bool
}

// Defaults of TaskPolicy.
const (
	DefaultTaskPoll    = 2 * time.Second
	DefaultTaskMinPoll = 100 * time.Millisecond
	DefaultTaskMaxPoll = 30 * time.Second
)

// WithTaskPolicy sets how the Conn runs and waits for tasks.
func WithTaskPolicy(p TaskPolicy) Option { return func(o *options) { o.tasks = p } }

// AsTask asks a server of revision 2025-11-25 to run the tool call as a
// task, when the tool's listing says it may ("optional"); a tool that must
// run as one always does. A task outlives the connection: a call whose
// context ends can be awaited again (TaskError, AwaitTask). It has no
// effect on a 2026-07-28 server, which decides for itself.
func AsTask() CallOption { return func(c *callOptions) { c.asTask = true } }

// OnTask tells the host of the task the call became, and of each status
// of it the Conn sees while it waits: f gets the task as the server
// described it (its id is what AwaitTask, GetTask and CancelTask take).
// f runs on the caller's goroutine, between two polls.
func OnTask(f func(mcp.Task)) CallOption { return func(c *callOptions) { c.onTask = f } }

// TaskError is the error of a call that became a task and ended before the
// task delivered its result: the tool may have run, in part or in full, so
// it matches jsonrpc.ErrOutcomeUnknown. TaskID names the task: unless the
// server forgot it, AwaitTask can wait for it again.
type TaskError struct {
	Method string
	TaskID string
	Status mcp.TaskStatus // the last status the Conn saw
	Reason string
	Err    error // what ended the wait, when something did (the context's cause, the server's error)
}

func (e *TaskError) Error() string {
	s := fmt.Sprintf("%s: task %q (%s): %s", e.Method, e.TaskID, e.Status, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *TaskError) Unwrap() error { return e.Err }

// Is matches jsonrpc.ErrOutcomeUnknown: the task existed.
func (e *TaskError) Is(target error) bool { return target == jsonrpc.ErrOutcomeUnknown }

// taskDesign is how a task is run and waited for.
type taskDesign int

const (
	tasksRequested taskDesign = iota // revision 2025-11-25: asked for per call, fetched with tasks/result
	tasksExtension                   // the tasks extension of 2026-07-28: the server decides, tasks/get carries all
)

// maxTaskInputs bounds how many input requests of one task the Conn
// answers (and remembers, so as to answer each key once).
const maxTaskInputs = 256

// askTask reports whether a call to the tool name goes out as a task of
// revision 2025-11-25: the server offers tasks for tools/call and the
// tool's listing says it must run as one, or may and the host asked.
func (c *Conn) askTask(name string, asTask bool) bool {
	if !c.dialect().askTasks {
		return false
	}
	c.mu.Lock()
	support := c.tools.taskSupport(name)
	c.mu.Unlock()
	return support == mcp.TaskSupportRequired || support == mcp.TaskSupportOptional && asTask
}

// taskParams returns the task member of a call that asks for a task.
func (c *Conn) taskParams() *mcp.TaskParams {
	return &mcp.TaskParams{TTL: c.opts.tasks.TTL.Milliseconds()}
}

// taskHandle reads a result that is a task handle, and says by which
// design: in revision 2025-11-25 the answer to a call that asked for a task
// (asked), in the extension a result whose resultType is "task". ok is
// false for any other result; a handle that does not decode, or comes for
// a request that cannot become a task, is an error.
func (d *dialect) taskHandle(method string, raw json.RawMessage, asked bool) (task *mcp.Task, design taskDesign, ok bool, err error) {
	switch {
	case asked:
		var created mcp.CreateTaskResult
		if err := jsondec.Unmarshal(raw, &created); err != nil {
			return nil, 0, true, &ResultError{Method: method, Err: fmt.Errorf("the answer to a call run as a task: %w", err)}
		}
		if created.Task.TaskID == "" {
			return nil, 0, true, &ResultError{Method: method, Err: errors.New("the answer to a call run as a task names no task")}
		}
		return &created.Task, tasksRequested, true, nil
	case !d.taskResults || !bytes.Contains(raw, []byte(`"task"`)):
		return nil, 0, false, nil
	}
	var head struct {
		ResultType string `json:"resultType"`
	}
	if jsondec.Unmarshal(raw, &head) != nil || head.ResultType != mcp.ResultTask {
		return nil, 0, false, nil // a result that is not JSON fails in its own decode
	}
	if method != "tools/call" {
		return nil, 0, true, &ResultError{Method: method, Err: errors.New("the server answered with a task, which only tools/call may become")}
	}
	var t mcp.Task
	if err := jsondec.Unmarshal(raw, &t); err != nil {
		return nil, 0, true, &ResultError{Method: method, Err: fmt.Errorf("task handle: %w", err)}
	}
	if t.TaskID == "" {
		return nil, 0, true, &ResultError{Method: method, Err: errors.New("task handle without a taskId")}
	}
	return &t, tasksExtension, true, nil
}

// awaitDesign is the design AwaitTask waits by, for a task it knows only
// by its id: the extension when the server declared it, else the design of
// 2025-11-25 when it offers that, else the era's.
func (c *Conn) awaitDesign() taskDesign {
	d := c.dialect()
	caps := c.Info().Capabilities
	switch {
	case d.taskResults && caps.HasExtension(mcp.ExtensionTasks):
		return tasksExtension
	case caps.Tasks.ToolCalls() || !d.taskResults:
		return tasksRequested
	}
	return tasksExtension
}

// taskWait is one wait for a task to end.
type taskWait struct {
	c        *Conn
	design   taskDesign
	method   string // the request the task runs
	co       *callOptions
	last     mcp.Task
	answered map[string]bool // input keys answered (the extension)
	backoff  time.Duration   // the last wait, when the server suggests none
	wake     chan struct{}   // a status notification of the task came
}

// awaitTask waits for the task a call became, from its first state, and
// returns the result the call would have had.
func (c *Conn) awaitTask(ctx context.Context, method string, first *mcp.Task, design taskDesign, co *callOptions) (json.RawMessage, error) {
	w := &taskWait{c: c, design: design, method: method, co: co, last: *first, wake: make(chan struct{}, 1)}
	c.mu.Lock()
	if c.taskWakes == nil {
		c.taskWakes = make(map[string][]chan struct{})
	}
	c.taskWakes[first.TaskID] = append(c.taskWakes[first.TaskID], w.wake)
	c.mu.Unlock()
	defer c.unwatchTask(first.TaskID, w.wake)
	w.tell()
	c.opts.logger.Debug("anymcp: the call runs as a task", "method", method, "task", first.TaskID, "status", first.Status)
	return w.run(ctx)
}

// tell hands the task's latest state to the host's OnTask.
func (w *taskWait) tell() {
	if w.co.onTask != nil {
		w.co.onTask(w.last)
	}
}

// run polls until the task ends, then returns its result.
func (w *taskWait) run(ctx context.Context) (json.RawMessage, error) {
	for {
		switch st := w.last.Status; {
		case st.Terminal():
			return w.result(ctx)
		case st == mcp.TaskInputRequired && w.design == tasksRequested:
			// Revision 2025-11-25: the server sends its requests on
			// the tasks/result exchange, which ends with the result.
			return w.result(ctx)
		case st == mcp.TaskInputRequired && len(w.last.InputRequests) > 0:
			if err := w.answerInputs(ctx); err != nil {
				return nil, err
			}
		}
		if err := w.sleep(ctx); err != nil {
			return nil, w.interrupted(ctx, err)
		}
		if err := w.poll(ctx); err != nil {
			return nil, err
		}
	}
}

// sleep waits the interval the server suggested, within the policy's
// bounds (without one, a wait that doubles from MinPoll up to Poll), until
// a status notification of the task comes, or until ctx ends.
func (w *taskWait) sleep(ctx context.Context) error {
	t := time.NewTimer(w.interval())
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-w.wake:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// interval is the wait before the next poll.
func (w *taskWait) interval() time.Duration {
	p := w.c.opts.tasks
	lo, hi := cmp0(p.MinPoll, DefaultTaskMinPoll), cmp0(p.MaxPoll, DefaultTaskMaxPoll)
	d := w.last.PollEvery()
	if d == 0 {
		d = lo
		if w.backoff > 0 {
			d = min(2*w.backoff, cmp0(p.Poll, DefaultTaskPoll))
		}
		w.backoff = d
	}
	return min(max(d, lo), hi)
}

// wakeTask ends the wait of the calls waiting for the task a status
// notification names (params: a task, with its taskId).
func (c *Conn) wakeTask(params json.RawMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.taskWakes[p.TaskID] {
		select {
		case ch <- struct{}{}:
		default: // woken already
		}
	}
}

// unwatchTask forgets the wake channel of a wait for the task id.
func (c *Conn) unwatchTask(id string, ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ws := slices.DeleteFunc(c.taskWakes[id], func(w chan struct{}) bool { return w == ch })
	if len(ws) == 0 {
		delete(c.taskWakes, id)
	} else {
		c.taskWakes[id] = ws
	}
}

// cmp0 returns v, or def when v is not positive.
func cmp0(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// poll asks for the task's state (tasks/get) and tells the host of a new
// status.
func (w *taskWait) poll(ctx context.Context) error {
	t, err := w.c.getTask(ctx, w.last.TaskID)
	if err != nil {
		return w.failed(ctx, "polling it failed", err)
	}
	if t.TaskID != "" && t.TaskID != w.last.TaskID {
		return w.failed(ctx, "tasks/get answered for another task", fmt.Errorf("task %q", t.TaskID))
	}
	t.TaskID = w.last.TaskID
	changed := t.Status != w.last.Status || t.StatusMessage != w.last.StatusMessage
	w.last = *t
	if changed {
		w.tell()
	}
	return nil
}

// result returns the result of a task that ended (or, in revision
// 2025-11-25, that needs input: tasks/result carries the server's requests
// and then the result).
func (w *taskWait) result(ctx context.Context) (json.RawMessage, error) {
	t := &w.last
	if t.Status == mcp.TaskCancelled {
		// Not by this Conn: it waits no more once it asks for that.
		return nil, &TaskError{Method: w.method, TaskID: t.TaskID, Status: t.Status, Reason: "the server cancelled it: " + t.StatusMessage}
	}
	if w.design == tasksExtension {
		switch t.Status {
		case mcp.TaskCompleted:
			if len(t.Result) == 0 {
				return nil, &ResultError{Method: w.method, Err: fmt.Errorf("task %q completed without a result", t.TaskID)}
			}
			return t.Result, nil
		case mcp.TaskFailed:
			var rpcErr jsonrpc.Error
			if len(t.Error) == 0 || jsondec.Unmarshal(t.Error, &rpcErr) != nil {
				return nil, &TaskError{Method: w.method, TaskID: t.TaskID, Status: t.Status, Reason: "it failed: " + t.StatusMessage}
			}
			return nil, &rpcErr
		}
	}
	var opts []CallOption
	if !t.Status.Terminal() {
		// It waits for the task to end, as long as the task runs;
		// the call's own context bounds it.
		opts = append(opts, WithTimeout(0))
	}
	raw, err := w.c.callRaw(ctx, "tasks/result", &mcp.TaskIDParams{TaskID: t.TaskID}, append(opts, Repeatable())...)
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && t.Status == mcp.TaskFailed {
			return nil, rpcErr // the error the request itself ended with
		}
		return nil, w.failed(ctx, "fetching its result failed", err)
	}
	return raw, nil
}

// answerInputs answers, with the host's handlers, the input requests of a
// task of the extension that the Conn has not answered yet, and sends the
// answers with tasks/update.
func (w *taskWait) answerInputs(ctx context.Context) error {
	t := &w.last
	keys := make([]string, 0, len(t.InputRequests))
	for k := range t.InputRequests {
		if !w.answered[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil // answered already; the server has not caught up
	}
	if len(w.answered)+len(keys) > maxTaskInputs {
		return &TaskError{Method: w.method, TaskID: t.TaskID, Status: t.Status,
			Reason: fmt.Sprintf("the server asked for more than %d inputs", maxTaskInputs)}
	}
	slices.Sort(keys)
	answers := make(map[string]json.RawMessage, len(keys))
	for _, k := range keys {
		a, err := w.c.answerInput(ctx, w.method, k, t.InputRequests[k])
		if err != nil {
			return &TaskError{Method: w.method, TaskID: t.TaskID, Status: t.Status, Reason: "answering its input failed", Err: err}
		}
		answers[k] = a
	}
	if err := w.c.Call(ctx, "tasks/update", &mcp.UpdateTaskParams{TaskID: t.TaskID, InputResponses: answers}, nil, Repeatable()); err != nil {
		return w.failed(ctx, "sending its input failed", err)
	}
	if w.answered == nil {
		w.answered = make(map[string]bool, len(keys))
	}
	for _, k := range keys {
		w.answered[k] = true
	}
	return nil
}

// failed is the error of a wait that a request about the task ended: the
// context's end (the task is cancelled, as for interrupted), or the
// server's or the connection's error.
func (w *taskWait) failed(ctx context.Context, reason string, err error) error {
	if ctx.Err() != nil {
		return w.interrupted(ctx, context.Cause(ctx))
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams {
		reason = "the server no longer knows it"
	}
	return &TaskError{Method: w.method, TaskID: w.last.TaskID, Status: w.last.Status, Reason: reason, Err: err}
}

// interrupted is the error of a wait whose context ended: the server is
// asked, in the background, to cancel the task.
func (w *taskWait) interrupted(ctx context.Context, cause error) error {
	w.c.cancelTaskLater(w.last.TaskID, w.design)
	reason := "the wait was given up; the server was asked to cancel it"
	if te, ok := cause.(*TimeoutError); ok {
		t := *te
		t.MayHaveRun = true
		cause = &t
	}
	return &TaskError{Method: w.method, TaskID: w.last.TaskID, Status: w.last.Status, Reason: reason, Err: cause}
}

// cancelTaskLater sends tasks/cancel for the task without making the
// caller wait, as sendCancelled does notifications/cancelled: Close lets it
// go out (for a short while) first.
func (c *Conn) cancelTaskLater(id string, design taskDesign) {
	if design == tasksRequested {
		if caps := c.Info().Capabilities.Tasks; caps == nil || caps.Cancel == nil {
			return // the server does not take tasks/cancel
		}
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	c.cancels.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer c.cancels.Done()
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		defer cancel()
		if err := c.CancelTask(ctx, id); err != nil {
			c.opts.logger.Debug("anymcp: could not cancel a task", "task", id, "err", err)
		}
	}()
}

// getTask is tasks/get.
func (c *Conn) getTask(ctx context.Context, id string) (*mcp.Task, error) {
	var t mcp.Task
	if err := c.Call(ctx, "tasks/get", &mcp.TaskIDParams{TaskID: id}, &t, Repeatable()); err != nil {
		return nil, err
	}
	return &t, nil
}

// GetTask returns the state of the task id (tasks/get): in the tasks
// extension of 2026-07-28, with the result, error or input requests inline.
func (c *Conn) GetTask(ctx context.Context, id string) (*mcp.Task, error) {
	t, err := c.getTask(ctx, id)
	if err == nil && t.TaskID == "" {
		t.TaskID = id
	}
	return t, err
}

// CancelTask asks the server to cancel the task id (tasks/cancel). The
// server may finish the task all the same; its status says what became of
// it.
func (c *Conn) CancelTask(ctx context.Context, id string) error {
	return c.Call(ctx, "tasks/cancel", &mcp.TaskIDParams{TaskID: id}, nil)
}

// AwaitTask waits for the task id, made of a tools/call (by this Conn or
// an earlier one: a task outlives its connection), as CallTool does once
// its call became a task: it polls the task, answers its input with the
// host's handlers, and returns the tool's result. Its errors are those of
// CallTool after the task was made.
func (c *Conn) AwaitTask(ctx context.Context, id string, opts ...CallOption) (*mcp.CallToolResult, error) {
	co := callOptions{}
	for _, opt := range opts {
		opt(&co)
	}
	if c.opts.tasks.Never {
		return nil, errors.New("anymcp: AwaitTask: tasks are off (TaskPolicy.Never)")
	}
	design := c.awaitDesign()
	first, err := c.getTask(ctx, id)
	if err != nil {
		return nil, (&taskWait{c: c, design: design, method: "tools/call", co: &co, last: mcp.Task{TaskID: id}}).failed(ctx, "polling it failed", err)
	}
	first.TaskID = id
	raw, err := c.awaitTask(ctx, "tools/call", first, design, &co)
	if err != nil {
		return nil, err
	}
	var res mcp.CallToolResult
	if err := decodeResult("tools/call", callResult{raw: raw}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Tasks iterates over the server's tasks (tasks/list, revision 2025-11-25:
// the tasks extension of 2026-07-28 has no listing), following pagination
// cursors.
func (c *Conn) Tasks(ctx context.Context) iter.Seq2[mcp.Task, error] {
	return pages(ctx, c, "tasks/list", func(r *mcp.ListTasksResult) ([]mcp.Task, string) {
		return r.Tasks, r.NextCursor
	})
}

// askedTask reports whether params ask for the request to run as a task
// (revision 2025-11-25).
func askedTask(params any) bool {
	p, ok := params.(*mcp.CallToolParams)
	return ok && p.Task != nil
}

// awaitTaskOf waits for the task a call became (awaitTask), keeping the
// call's progress token alive meanwhile: the server may send progress for
// it as long as the task runs.
func (c *Conn) awaitTaskOf(ctx context.Context, method string, task *mcp.Task, design taskDesign, token int64, co *callOptions) (json.RawMessage, error) {
	if token != 0 {
		cl := &call{method: method, progress: co.progress}
		c.mu.Lock()
		c.tokens[token] = cl
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			if c.tokens[token] == cl {
				delete(c.tokens, token)
			}
			c.mu.Unlock()
		}()
	}
	return c.awaitTask(ctx, method, task, design, co)
}
