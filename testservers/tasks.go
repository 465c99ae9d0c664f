package testservers

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Tasks run a tool call in the background: the server answers the call at
// once with a task handle and the client polls it. The core keeps the
// tasks of both designs in one store (this file); tasks_initialize.go serves
// the experimental tasks of 2025-11-25 (tasks/get, tasks/result,
// tasks/cancel, tasks/list), tasks_stateless.go the tasks extension of
// 2026-07-28 (tasks/get, tasks/update, tasks/cancel), and tasks_tools.go
// holds the tools that run as tasks. A task belongs to the server, not to
// a session: any session (or stateless request) that names its id reaches
// it, as the id is unguessable; its execution runs on a goroutine of its
// own until it ends, is cancelled, forgotten, or the server ends its tasks
// (EndTasks, which closing a front-end does).

// Defaults of TaskOptions.
const (
	DefaultTaskPollInterval = 20 * time.Millisecond
	DefaultTaskTTL          = 5 * time.Minute
	DefaultMaxTasks         = 100
)

// maxKeptTasks bounds the tasks kept once they ended; the oldest go first.
const maxKeptTasks = 1000

// TaskOptions configure the tasks of a server (Options.Tasks).
type TaskOptions struct {
	// Enabled serves tasks: the tools of TaskToolNames are listed, the
	// 2025-11-25 capability tasks {list, cancel, requests.tools.call} is
	// declared in initialize (to a session of 2025-11-25 or later) and the
	// extension io.modelcontextprotocol/tasks in server/discover, and the
	// tasks/ methods are served. Off, none of this exists and every
	// default listing is as before.
	Enabled bool
	// PollInterval is the pollInterval (pollIntervalMs) every task
	// suggests; DefaultTaskPollInterval when zero.
	PollInterval time.Duration
	// TTL is the ttl (ttlMs) of every task when > 0; when zero, the ttl a
	// 2025-11-25 client asked for, else DefaultTaskTTL; when < 0,
	// unlimited (null). Once its ttl since its creation has passed, a
	// task is forgotten: -32602 "Task has expired".
	TTL time.Duration
	// ForgetAfterPolls, when > 0, makes the server forget a task (and
	// stop its execution) right after it answered that many tasks/get
	// for it: the next tasks/get, tasks/result, tasks/update or
	// tasks/cancel is answered -32602 "Task not found", as by a server
	// that lost it (the client cannot know the call's outcome).
	ForgetAfterPolls int
	// StatusNotifications sends the status of a task each time it
	// changes: 2025-11-25, notifications/tasks/status (on the stream of a
	// pending tasks/result for it, else outside any request: the GET
	// stream, the one stream of stdio or HTTP+SSE); 2026-07-28,
	// notifications/tasks on the subscriptions/listen streams that asked
	// for its id in notifications.taskIds (without it, taskIds are not
	// honoured: the acknowledgement leaves them out).
	StatusNotifications bool
	// MaxTasks bounds the tasks running at once (working or
	// input_required), over both eras; DefaultMaxTasks when zero. Beyond
	// it a tools/call that would create a task is refused with -32603,
	// except a 2026-07-28 call of an optional tool, which then runs as a
	// plain call (Stats.TasksRefused counts both).
	MaxTasks int
	// InputWithoutResult makes a 2025-11-25 task that needs input send
	// its request at once when no tasks/result for it is pending: outside
	// any request, on the GET stream (Streamable HTTP) or the one stream
	// (stdio, HTTP+SSE) of the session that last asked about the task.
	// Without it, the task waits in input_required for a tasks/result
	// and sends the request on its stream, as 2025-11-25 describes.
	InputWithoutResult bool
	// RefuseAsResult answers a 2025-11-25 plain call of a tool that
	// requires a task as the TypeScript SDK does: a result with isError
	// and the text "Tool NAME requires task augmentation (taskSupport:
	// 'required')", where the specification says -32601. The tool does
	// not run.
	RefuseAsResult bool
}

func (o TaskOptions) withDefaults() TaskOptions {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultTaskPollInterval
	}
	if o.MaxTasks <= 0 {
		o.MaxTasks = DefaultMaxTasks
	}
	return o
}

// task is one task: its execution and what the client sees of it.
type task struct {
	id      string
	era     era // the era it was created in, the only one that sees it
	tool    string
	created time.Time
	ttl     time.Duration // < 0: unlimited
	ctx     context.Context
	cancel  context.CancelFunc // stops the execution

	// The rest is guarded by taskStore.mu.
	status  mcp.TaskStatus
	message string    // statusMessage
	updated time.Time // of the last status change
	result  json.RawMessage
	rpcErr  *jsonrpc.Error // the JSON-RPC error that ended it (failed)
	polls   int            // tasks/get answered for it
	gone    bool           // forgotten: no longer in the store
	changed chan struct{}  // closed and replaced on every change
	noting  chan struct{}  // closed once the last status notification is sent

	// 2025-11-25: who hears of the task, and the pending tasks/result
	// requests its input requests go out on.
	owner      *Session // the session that last asked about the task
	waiters    []*resultWaiter
	lastWaiter uint64
	cancelSend context.CancelFunc // of an input request on a waiter's stream

	// 2026-07-28: the outstanding input requests (by key) and their
	// answers, and how many keys were ever issued (keys are never reused).
	asked   map[string]inputRequest
	answers map[string]json.RawMessage
	keys    int
}

// signalLocked wakes whoever waits for a change of t.
func (t *task) signalLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// expired reports whether the task's ttl has passed at now.
func (t *task) expired(now time.Time) bool {
	return t.ttl > 0 && now.Sub(t.created) >= t.ttl
}

// taskStore holds a server's tasks.
type taskStore struct {
	mu     sync.Mutex
	closed bool // EndTasks was called: no task starts any more
	byID   map[string]*task
	order  []*task        // oldest first
	wg     sync.WaitGroup // the executions
	// waiting are the pending tasks/result requests that came before
	// EndTasks, until their answer is sent.
	waiting sync.WaitGroup
}

// errTasksFull refuses a task beyond Options.Tasks.MaxTasks.
var errTasksFull = errors.New("test server: too many tasks")

func taskNotFound(id string) *jsonrpc.Error {
	return invalidParams("Failed to retrieve task: Task not found: " + strconv.Quote(id))
}

func taskExpired(id string) *jsonrpc.Error {
	return invalidParams("Failed to retrieve task: Task has expired: " + strconv.Quote(id))
}

// errShutDown ends the tasks still running when the server ends them.
func errShutDown() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "the server shut down before the task finished")
}

// taskCall serves a tools/call that runs as a task, as the request's era
// says; handled is false for a plain call (always without
// Options.Tasks).
func (ss *Session) taskCall(c *call, def *toolDef, p callParams, args json.RawMessage) (res any, handled bool, err error) {
	if !ss.srv.opts.Tasks.Enabled {
		return nil, false, nil
	}
	if c.stateless() {
		return ss.statelessTaskCall(c, def, args)
	}
	return ss.initializeTaskCall(c, def, p, args)
}

// taskTTL is the ttl of a new task, given the one the client asked for.
func (s *Server) taskTTL(requested time.Duration) time.Duration {
	switch ttl := s.opts.Tasks.TTL; {
	case ttl != 0:
		return ttl
	case requested > 0:
		return requested
	}
	return DefaultTaskTTL
}

// newTask registers a task in the working status; errTasksFull (or a
// closing error) when it cannot. Its execution must then be started
// (startTask), which the registration counted on.
func (s *Server) newTask(e era, tool string, ttl time.Duration, owner *Session) (*task, error) {
	ts := &s.tasks
	now := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{
		id: rand.Text(), era: e, tool: tool, created: now, ttl: ttl, ctx: ctx, cancel: cancel,
		status: mcp.TaskWorking, updated: now, changed: make(chan struct{}), owner: owner,
	}
	ts.mu.Lock()
	if ts.closed {
		ts.mu.Unlock()
		cancel()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the server is shutting down")
	}
	dropped := ts.pruneLocked(now)
	running := 0
	for _, o := range ts.order {
		if !o.status.Terminal() {
			running++
		}
	}
	full := running >= s.opts.Tasks.MaxTasks
	if !full {
		ts.byID[t.id] = t
		ts.order = append(ts.order, t)
		ts.wg.Add(1)
	}
	ts.mu.Unlock()
	s.dropped(dropped)
	if full {
		cancel()
		s.count(func(st *Stats) { st.TasksRefused++ })
		return nil, errTasksFull
	}
	s.count(func(st *Stats) { st.TasksCreated++ })
	return t, nil
}

// tasksFull is the error of a task refused beyond MaxTasks.
func (s *Server) tasksFull() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "too many tasks: the server runs at most "+strconv.Itoa(s.opts.Tasks.MaxTasks)+" at once")
}

// pruneLocked forgets the tasks whose ttl passed and the oldest ended
// ones beyond maxKeptTasks; it returns them, for dropped.
func (ts *taskStore) pruneLocked(now time.Time) []*task {
	var out []*task
	ended := 0
	for _, t := range ts.order {
		if t.status.Terminal() {
			ended++
		}
	}
	for _, t := range slices.Clone(ts.order) {
		if t.expired(now) || (ended > maxKeptTasks && t.status.Terminal()) {
			if t.status.Terminal() {
				ended--
			}
			ts.removeLocked(t)
			out = append(out, t)
		}
	}
	return out
}

// removeLocked takes t out of the store.
func (ts *taskStore) removeLocked(t *task) {
	delete(ts.byID, t.id)
	if i := slices.Index(ts.order, t); i >= 0 {
		ts.order = slices.Delete(ts.order, i, i+1)
	}
	t.gone = true
	t.signalLocked()
}

// dropped stops the executions of tasks taken out of the store.
func (s *Server) dropped(ts []*task) {
	for _, t := range ts {
		t.cancel()
	}
	if len(ts) > 0 {
		s.count(func(st *Stats) { st.TasksForgotten += len(ts) })
	}
}

// lookupTask returns the task id of era e: -32602 when there is none, or
// when its ttl has passed (it is forgotten then).
func (s *Server) lookupTask(id string, e era) (*task, *jsonrpc.Error) {
	ts := &s.tasks
	ts.mu.Lock()
	t := ts.byID[id]
	if t == nil || t.era != e {
		ts.mu.Unlock()
		return nil, taskNotFound(id)
	}
	if t.expired(time.Now()) {
		ts.removeLocked(t)
		ts.mu.Unlock()
		s.dropped([]*task{t})
		return nil, taskExpired(id)
	}
	ts.mu.Unlock()
	return t, nil
}

// polled records a tasks/get answered for t, and forgets t after
// Options.Tasks.ForgetAfterPolls of them.
func (s *Server) polled(t *task) {
	ts := &s.tasks
	n := s.opts.Tasks.ForgetAfterPolls
	ts.mu.Lock()
	t.polls++
	forget := n > 0 && t.polls >= n && !t.gone
	if forget {
		ts.removeLocked(t)
	}
	ts.mu.Unlock()
	s.count(func(st *Stats) { st.TaskPolls++ })
	if forget {
		s.dropped([]*task{t})
	}
}

// changeTask applies f to t under the store's lock; f reports whether it
// changed anything. A change of status stamps lastUpdatedAt and, with
// Options.Tasks.StatusNotifications, is notified before the waiters of t
// (a pending tasks/result) wake up. A forgotten task does not change.
func (s *Server) changeTask(t *task, f func(t *task) bool) bool {
	ts := &s.tasks
	ts.mu.Lock()
	before := t.status
	if t.gone || !f(t) {
		ts.mu.Unlock()
		return false
	}
	var note func()
	var noted chan struct{}
	if t.status != before {
		t.updated = time.Now()
		if s.opts.Tasks.StatusNotifications {
			note = s.statusNoteLocked(t)
		}
		if note != nil {
			noted = make(chan struct{})
			t.noting = noted
		}
	}
	ts.mu.Unlock()
	if note != nil {
		note()
		close(noted)
	}
	ts.mu.Lock()
	t.signalLocked()
	ts.mu.Unlock()
	s.count(func(*Stats) {}) // wakes WaitStats
	return true
}

// statusNoteLocked returns what sends the status notification of t.
func (s *Server) statusNoteLocked(t *task) func() {
	if t.era == eraStateless {
		raw := s.taskJSONLocked(t, true)
		return func() { s.notifyTaskListeners(t.id, raw) }
	}
	raw := s.taskJSONLocked(t, false)
	ss, ctx := t.owner, context.Background()
	if n := len(t.waiters); n > 0 {
		ss, ctx = t.waiters[n-1].ss, t.waiters[n-1].ctx
	}
	if ss == nil {
		return nil
	}
	return func() { _ = ss.notify(ctx, "notifications/tasks/status", raw) }
}

// setStatus moves t to status with msg, unless it ended.
func (s *Server) setStatus(t *task, status mcp.TaskStatus, msg string) {
	s.changeTask(t, func(t *task) bool {
		if t.status.Terminal() || t.status == status {
			return false
		}
		t.status, t.message = status, msg
		return true
	})
}

// startTask runs the tool of a task registered by newTask on a goroutine
// of its own, in the call ss, rq describe, and records how it ends.
func (s *Server) startTask(t *task, ss *Session, def *toolDef, args json.RawMessage, rq *reqInfo) {
	go func() {
		defer s.tasks.wg.Done()
		defer t.cancel()
		name := def.tool.Name
		c := &call{ss: ss, ctx: t.ctx, rq: rq, method: "tools/call", name: name, task: t}
		s.count(func(st *Stats) {
			st.ToolCalls[name]++
			st.TaskExecutions[name]++
		})
		res, err := def.run(c, args)
		s.finishTask(t, res, err)
	}()
}

// finishTask records the end of t's execution: a JSON-RPC error fails
// it; a result completes it, except that in 2025-11-25 a result with
// isError fails it too (tasks/result still returns that result). Any
// other error is a tool execution error, as for a plain call. A task
// that was cancelled or forgotten meanwhile stays as it is.
func (s *Server) finishTask(t *task, res any, err error) {
	var (
		raw    json.RawMessage
		rpcErr *jsonrpc.Error
	)
	switch e, isRPC := errors.AsType[*jsonrpc.Error](err); {
	case err != nil && t.ctx.Err() != nil:
		rpcErr = jsonrpc.NewError(jsonrpc.CodeInternalError, "the task was stopped")
	case isRPC:
		rpcErr = e
	case err != nil:
		raw, _ = json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(err.Error())}, IsError: true})
	default:
		var ok bool
		if raw, ok = res.(json.RawMessage); !ok {
			if raw, err = json.Marshal(res); err != nil {
				rpcErr = jsonrpc.NewError(jsonrpc.CodeInternalError, err.Error())
			}
		}
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(raw, &r)
	s.changeTask(t, func(t *task) bool {
		if t.status.Terminal() {
			return false
		}
		switch {
		case rpcErr != nil:
			t.status, t.rpcErr, t.message = mcp.TaskFailed, rpcErr, rpcErr.Message
		case r.IsError && t.era == eraInitialize:
			t.status, t.result, t.message = mcp.TaskFailed, raw, "the tool reported an error (isError)"
		default:
			t.status, t.result, t.message = mcp.TaskCompleted, raw, ""
		}
		return true
	})
}

// cancelTask moves t to cancelled and stops its execution; false when t
// had already ended.
func (s *Server) cancelTask(t *task) bool {
	ok := s.changeTask(t, func(t *task) bool {
		if t.status.Terminal() {
			return false
		}
		t.status, t.message = mcp.TaskCancelled, "The task was cancelled by request."
		return true
	})
	if ok {
		t.cancel()
		s.count(func(st *Stats) { st.TaskCancels++ })
	}
	return ok
}

// EndTasks ends the server's tasks, as a server shutting down does: every
// task still running fails with -32603 (a pending tasks/result gets that
// error), its execution is stopped, and no task starts any more. It
// returns once the executions are gone and the pending tasks/result
// answered. Closing a front-end, or the end of ServeStdio, does it; it is
// idempotent.
func (s *Server) EndTasks() {
	ts := &s.tasks
	ts.mu.Lock()
	ts.closed = true
	all := slices.Clone(ts.order)
	ts.mu.Unlock()
	for _, t := range all {
		s.changeTask(t, func(t *task) bool {
			if t.status.Terminal() {
				return false
			}
			e := errShutDown()
			t.status, t.rpcErr, t.message = mcp.TaskFailed, e, e.Message
			return true
		})
		t.cancel()
	}
	ts.wg.Wait()
	ts.waiting.Wait()
}

// taskStatuses returns the status of every task kept, by id, and how many
// are running.
func (s *Server) taskStatuses() (map[string]mcp.TaskStatus, int) {
	ts := &s.tasks
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make(map[string]mcp.TaskStatus, len(ts.order))
	running := 0
	for _, t := range ts.order {
		out[t.id] = t.status
		if !t.status.Terminal() {
			running++
		}
	}
	return out, running
}

// stamp formats a time as tasks carry it (RFC 3339, UTC, milliseconds).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// taskJSONLocked is t as the client sees it, in the members of its era:
// 2025-11-25 ttl and pollInterval; 2026-07-28 ttlMs and pollIntervalMs
// and, when detailed (tasks/get, notifications/tasks), what the status
// carries inline: result, error or inputRequests. An unlimited ttl is
// null.
func (s *Server) taskJSONLocked(t *task, detailed bool) json.RawMessage {
	v := mcp.Task{
		TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: stamp(t.created), LastUpdatedAt: stamp(t.updated),
	}
	ttl, poll := mcp.TTL(t.ttl.Milliseconds()), mcp.TTL(s.opts.Tasks.PollInterval.Milliseconds())
	ttlKey := "ttl"
	if t.era == eraStateless {
		ttlKey = "ttlMs"
		v.PollIntervalMs = &poll
		if t.ttl >= 0 {
			v.TTLMs = &ttl
		}
	} else {
		v.PollInterval = &poll
		if t.ttl >= 0 {
			v.TTL = &ttl
		}
	}
	if detailed && t.era == eraStateless {
		switch t.status {
		case mcp.TaskCompleted:
			v.Result = t.result
		case mcp.TaskFailed:
			v.Error, _ = json.Marshal(t.rpcErr)
		case mcp.TaskInputRequired:
			v.InputRequests = outstanding(t)
		}
	}
	b, _ := json.Marshal(v)
	if t.ttl < 0 { // the member is required: null says unlimited
		b = append([]byte(`{"`+ttlKey+`":null,`), b[1:]...)
	}
	return b
}

// taskJSON is taskJSONLocked under the store's lock.
func (s *Server) taskJSON(t *task, detailed bool) json.RawMessage {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	return s.taskJSONLocked(t, detailed)
}
