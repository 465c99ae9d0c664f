package testservers

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// The experimental tasks of revision 2025-11-25. A client asks for a task
// by putting task {ttl} into the params of tools/call, for a tool whose
// execution.taskSupport is optional or required; the answer is at once
// {"task": Task}. tasks/get returns the task, tasks/result waits for its
// end and returns what the call would have returned, tasks/cancel cancels
// it, tasks/list lists the tasks. While the tool needs input from the
// client, the task is input_required and its request goes out on the
// stream of a pending tasks/result (see initializeAsk).

// initializeTasks reports whether the session serves the tasks of
// 2025-11-25: the server serves tasks and the session negotiated that
// revision or a later one. Otherwise the task member of tools/call is
// ignored and the tasks/ methods do not exist.
func (ss *Session) initializeTasks() bool {
	return ss.srv.opts.Tasks.Enabled && ss.ProtocolVersion() >= mcp.Version20251125
}

// initializeTasksCap is the tasks capability the server declares in
// initialize.
func initializeTasksCap() *mcp.TasksCap {
	return &mcp.TasksCap{
		List:     &struct{}{},
		Cancel:   &struct{}{},
		Requests: &mcp.TaskRequestsCaps{Tools: &mcp.TaskToolsCap{Call: &struct{}{}}},
	}
}

func methodNotFound(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, msg)
}

// RequiredTaskRefusal is the answer of a server with
// TaskOptions.RefuseAsResult to a plain call of the tool name, which
// requires a task: the words of the TypeScript SDK's servers.
func RequiredTaskRefusal(name string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
		mcp.TextContent("Tool " + name + " requires task augmentation (taskSupport: 'required')")}}
}

// initializeTaskCall serves a 2025-11-25 tools/call whose tool or params
// involve tasks; handled is false when it is a plain call. A task asked
// of a tool that forbids it, and a plain call of a tool that requires a
// task, are -32601, as the specification says.
func (ss *Session) initializeTaskCall(c *call, def *toolDef, p callParams, args json.RawMessage) (res any, handled bool, err error) {
	if !ss.initializeTasks() {
		return nil, false, nil
	}
	asked := len(p.Task) > 0 && string(p.Task) != "null"
	support := def.taskSupport()
	switch {
	case asked && support == mcp.TaskSupportForbidden:
		return nil, true, methodNotFound("tool " + def.tool.Name + " does not support task execution (execution.taskSupport is forbidden)")
	case !asked && support == mcp.TaskSupportRequired && ss.srv.opts.Tasks.RefuseAsResult:
		return RequiredTaskRefusal(def.tool.Name), true, nil
	case !asked && support == mcp.TaskSupportRequired:
		return nil, true, methodNotFound("tool " + def.tool.Name + " requires task execution (execution.taskSupport is required): call it with params.task")
	case !asked:
		return nil, false, nil
	}
	var tp mcp.TaskParams
	if err := json.Unmarshal(p.Task, &tp); err != nil {
		return nil, true, invalidParams("tools/call: task: " + err.Error())
	}
	s := ss.srv
	ttl := time.Duration(min(tp.TTL, int64(math.MaxInt64/time.Millisecond))) * time.Millisecond
	t, err := s.newTask(eraInitialize, def.tool.Name, s.taskTTL(ttl), ss)
	if errors.Is(err, errTasksFull) {
		return nil, true, s.tasksFull()
	}
	if err != nil {
		return nil, true, err
	}
	// The answer goes out before the task runs: nothing of the task (a
	// status notification, an input request) comes before its id.
	view := s.taskJSON(t, false)
	answer, err := json.Marshal(map[string]json.RawMessage{"task": view})
	if err == nil {
		_ = ss.peer.Reply(c.ctx, c.id, ss.response(c.id, answer, nil))
	}
	s.startTask(t, ss, def, args, initializeInfo)
	if err != nil {
		return nil, true, err
	}
	return nil, true, errNoResponse
}

// initializeTask decodes the params of tasks/get, tasks/result and
// tasks/cancel and returns their task; the session becomes the one that
// hears of it.
func (ss *Session) initializeTask(params json.RawMessage) (*task, error) {
	if !ss.initializeTasks() {
		return nil, errNoTasks
	}
	var p mcp.TaskIDParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	t, rpcErr := ss.srv.lookupTask(p.TaskID, eraInitialize)
	if rpcErr != nil {
		return nil, rpcErr
	}
	ss.srv.tasks.mu.Lock()
	t.owner = ss
	ss.srv.tasks.mu.Unlock()
	return t, nil
}

// errNoTasks answers the tasks/ methods where tasks are not served.
var errNoTasks = methodNotFound("method not found: this server serves no tasks here")

// initializeGetTask serves tasks/get: the task, without related-task _meta.
func (ss *Session) initializeGetTask(params json.RawMessage) (any, error) {
	t, err := ss.initializeTask(params)
	if err != nil {
		return nil, err
	}
	view := ss.srv.taskJSON(t, false)
	ss.srv.polled(t)
	return view, nil
}

// initializeCancelTask serves tasks/cancel: the task, now cancelled; -32602
// when it had already ended.
func (ss *Session) initializeCancelTask(params json.RawMessage) (any, error) {
	t, err := ss.initializeTask(params)
	if err != nil {
		return nil, err
	}
	if !ss.srv.cancelTask(t) {
		ss.srv.tasks.mu.Lock()
		status := t.status
		ss.srv.tasks.mu.Unlock()
		return nil, invalidParams("Cannot cancel task: already in terminal status '" + string(status) + "'")
	}
	return ss.srv.taskJSON(t, false), nil
}

// initializeListTasks serves tasks/list: the tasks of 2025-11-25 the server
// keeps, oldest first, in pages of Options.PageSize.
func (ss *Session) initializeListTasks(params json.RawMessage) (any, error) {
	if !ss.initializeTasks() {
		return nil, errNoTasks
	}
	s := ss.srv
	ts := &s.tasks
	ts.mu.Lock()
	dropped := ts.pruneLocked(time.Now())
	var views []json.RawMessage
	for _, t := range ts.order {
		if t.era == eraInitialize {
			views = append(views, s.taskJSONLocked(t, false))
		}
	}
	ts.mu.Unlock()
	s.dropped(dropped)
	items, next, err := page(params, views, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return struct {
		Tasks      []json.RawMessage `json:"tasks"`
		NextCursor string            `json:"nextCursor,omitempty"`
	}{append([]json.RawMessage{}, items...), next}, nil
}

// resultWaiter is a pending tasks/result: the session and context its
// messages go out under, numbered in the order they came.
type resultWaiter struct {
	ss  *Session
	ctx context.Context
	seq uint64
}

// initializeTaskResult serves tasks/result: it waits until the task ends,
// then returns what the tools/call would have returned: its result,
// whose _meta names the task (related-task), or its JSON-RPC error. A
// cancelled task has neither: -32603 with data {taskId, status}. While
// it waits, the task's input requests go out on its stream. It answers
// by itself, so that EndTasks knows when the answer is out.
func (ss *Session) initializeTaskResult(ctx context.Context, m *jsonrpc.Message) (any, error) {
	t, err := ss.initializeTask(m.Params)
	if err != nil {
		return nil, err
	}
	s := ss.srv
	s.count(func(st *Stats) { st.TaskResults++ })
	ts := &s.tasks
	ts.mu.Lock()
	t.lastWaiter++
	w := &resultWaiter{ss: ss, ctx: ctx, seq: t.lastWaiter}
	t.waiters = append(t.waiters, w)
	if t.cancelSend != nil {
		t.cancelSend() // an input request on an older stream: ask again here
	}
	t.signalLocked()
	counted := !ts.closed
	if counted {
		ts.waiting.Add(1)
	}
	ts.mu.Unlock()
	res, err := awaitTaskEnd(ctx, s, t)
	ts.mu.Lock()
	if i := slices.Index(t.waiters, w); i >= 0 {
		t.waiters = slices.Delete(t.waiters, i, i+1)
	}
	ts.mu.Unlock()
	if !counted {
		return res, err
	}
	defer ts.waiting.Done()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	_ = ss.peer.Reply(ctx, m.ID, ss.response(m.ID, res, err))
	return nil, errNoResponse
}

// awaitTaskEnd waits until t ends and returns what tasks/result answers.
func awaitTaskEnd(ctx context.Context, s *Server, t *task) (json.RawMessage, error) {
	ts := &s.tasks
	for {
		ts.mu.Lock()
		gone, status, changed, noting := t.gone, t.status, t.changed, t.noting
		result, rpcErr := t.result, t.rpcErr
		ts.mu.Unlock()
		if status.Terminal() && noting != nil {
			<-noting // the notification of the end goes first
		}
		switch {
		case gone:
			return nil, taskNotFound(t.id)
		case status == mcp.TaskCancelled:
			data, _ := json.Marshal(map[string]string{"taskId": t.id, "status": string(status)})
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task was cancelled", Data: data}
		case rpcErr != nil:
			return nil, rpcErr
		case status.Terminal():
			return withRelatedTask(result, t.id)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// relatedTask is the _meta member that ties a message to task id.
func relatedTask(id string) map[string]any {
	return map[string]any{mcp.MetaRelatedTask: map[string]string{"taskId": id}}
}

// withRelatedTask returns the JSON object obj with the related-task
// member added to its _meta.
func withRelatedTask(obj json.RawMessage, id string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
	}
	for k, v := range relatedTask(id) {
		meta[k], _ = json.Marshal(v)
	}
	m["_meta"], _ = json.Marshal(meta)
	return json.Marshal(m)
}

// initializeAsk gets the client's answers to reqs for a task of 2025-11-25,
// one request after the other in the order of their keys. The task is
// input_required meanwhile. Each request carries related-task _meta and
// goes out on the stream of the newest pending tasks/result for the task
// (with InputWithoutResult, at once outside any request when there is
// none); when none is pending, the task waits for one. When that stream
// fails, or its tasks/result ends before the answer, or a newer
// tasks/result comes, the request is cancelled and sent again on the next
// one. A JSON-RPC error from the client is the tool's to handle.
func (s *Server) initializeAsk(t *task, reqs map[string]inputRequest) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(reqs))
	ts := &s.tasks
	for _, key := range slices.Sorted(maps.Keys(reqs)) {
		r := reqs[key]
		params, err := withRelatedTaskParams(r.Params, t.id)
		if err != nil {
			return nil, err
		}
		var tried uint64 // the newest waiter tried
		outside := s.opts.Tasks.InputWithoutResult
		for {
			s.setStatus(t, mcp.TaskInputRequired, "waiting for the client's answer to "+r.Method)
			w, sendCtx, cancel, changed := s.inputChannel(t, tried, &outside)
			if w == nil {
				select {
				case <-changed:
					continue
				case <-t.ctx.Done():
					return nil, t.ctx.Err()
				}
			}
			stop := context.AfterFunc(t.ctx, cancel)
			s.count(func(st *Stats) { st.TaskInputRequests++ })
			res, err := w.ss.request(sendCtx, r.Method, params)
			stop()
			cancel()
			ts.mu.Lock()
			t.cancelSend = nil
			ts.mu.Unlock()
			if t.ctx.Err() != nil {
				return nil, t.ctx.Err()
			}
			if err == nil {
				out[key] = res
				break
			}
			if _, ok := errors.AsType[*jsonrpc.Error](err); ok {
				return nil, err
			}
			tried = w.seq
		}
	}
	s.setStatus(t, mcp.TaskWorking, "")
	return out, nil
}

// inputChannel returns where the next input request of t goes: the
// newest pending tasks/result newer than tried, whose new tasks/result
// cancels the request's context; else, when *outside (which it then
// clears), the session that last asked about t, outside any request; else
// nil, and what to wait on for a change.
func (s *Server) inputChannel(t *task, tried uint64, outside *bool) (*resultWaiter, context.Context, context.CancelFunc, <-chan struct{}) {
	ts := &s.tasks
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if n := len(t.waiters); n > 0 && t.waiters[n-1].seq > tried {
		w := t.waiters[n-1]
		ctx, cancel := context.WithCancel(w.ctx)
		t.cancelSend = cancel
		return w, ctx, cancel, t.changed
	}
	if *outside && t.owner != nil {
		*outside = false
		w := &resultWaiter{ss: t.owner, ctx: context.Background(), seq: tried}
		ctx, cancel := context.WithCancel(w.ctx)
		return w, ctx, cancel, t.changed
	}
	return nil, nil, nil, t.changed
}

// withRelatedTaskParams returns params as a JSON object with the
// related-task member added to its _meta.
func withRelatedTaskParams(params any, id string) (json.RawMessage, error) {
	raw := json.RawMessage(`{}`)
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return withRelatedTask(raw, id)
}
