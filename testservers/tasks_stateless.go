package testservers

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// The tasks extension of revision 2026-07-28 (io.modelcontextprotocol/tasks).
// A client declares it in the capabilities of each request; the server
// then answers a tools/call of a task tool with a task handle (resultType
// "task"). tasks/get returns the task with, by status, its result, its
// error or the input it needs (inputRequests, keyed, as in an
// input_required result); tasks/update carries the client's answers
// (inputResponses); tasks/cancel cancels it. Without the extension a tool
// that requires a task is refused with -32021, an optional one runs as a
// plain call.

// hasTasksExtension reports whether a stateless request declared the tasks
// extension in its client capabilities.
func hasTasksExtension(rq *reqInfo) bool {
	_, ok := rq.caps.Extensions[mcp.ExtensionTasks]
	return ok
}

// missingTasksExtension is error -32021 naming the tasks extension.
func missingTasksExtension() *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeMissingClientCapability,
		Message: "Server requires the " + mcp.ExtensionTasks + " extension for this request",
		Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + mcp.ExtensionTasks + `":{}}}}`),
	}
}

// statelessTaskCall serves a 2026-07-28 tools/call of a task tool; handled
// is false when it runs as a plain call. The task member of the params
// of 2025-11-25 is ignored. The input a tool needs is checked before the
// task exists: a missing capability is -32021 on the call itself.
func (ss *Session) statelessTaskCall(c *call, def *toolDef, args json.RawMessage) (res any, handled bool, err error) {
	support := def.taskSupport()
	if support != mcp.TaskSupportOptional && support != mcp.TaskSupportRequired {
		return nil, false, nil
	}
	if !hasTasksExtension(c.rq) {
		if support == mcp.TaskSupportRequired {
			return nil, true, missingTasksExtension()
		}
		return nil, false, nil
	}
	for _, cp := range def.taskNeeds {
		if err := c.need(cp); err != nil {
			return nil, true, err
		}
	}
	s := ss.srv
	t, err := s.newTask(eraStateless, def.tool.Name, s.taskTTL(0), nil)
	switch {
	case errors.Is(err, errTasksFull) && support == mcp.TaskSupportOptional:
		return nil, false, nil // the server decides: a plain call
	case errors.Is(err, errTasksFull):
		return nil, true, s.tasksFull()
	case err != nil:
		return nil, true, err
	}
	view := s.taskJSON(t, false) // working: before anything runs
	s.startTask(t, ss, def, args, c.rq)
	raw, err := s.withResultFields(view, map[string]any{"resultType": mcp.ResultTask})
	return raw, true, err
}

// statelessTask decodes the params of tasks/get, tasks/update and
// tasks/cancel into p and returns their task. A request that did not
// declare the extension gets -32021, as the extension says.
func (ss *Session) statelessTask(params json.RawMessage, rq *reqInfo, p any, id func() string) (*task, error) {
	if !hasTasksExtension(rq) {
		return nil, missingTasksExtension()
	}
	if err := decodeParams(params, p); err != nil {
		return nil, err
	}
	t, rpcErr := ss.srv.lookupTask(id(), eraStateless)
	if rpcErr != nil {
		return nil, rpcErr
	}
	return t, nil
}

// statelessGetTask serves tasks/get: the task with what its status carries.
func (ss *Session) statelessGetTask(params json.RawMessage, rq *reqInfo) (any, error) {
	var p mcp.TaskIDParams
	t, err := ss.statelessTask(params, rq, &p, func() string { return p.TaskID })
	if err != nil {
		return nil, err
	}
	view := ss.srv.taskJSON(t, true)
	ss.srv.polled(t)
	return view, nil
}

// statelessUpdateTask serves tasks/update: it records the answers to the
// task's outstanding input requests (others are ignored: unknown,
// already answered) and acknowledges with an empty result. Once every
// outstanding request has its answer, the task is working again before
// the acknowledgement goes out.
func (ss *Session) statelessUpdateTask(params json.RawMessage, rq *reqInfo) (any, error) {
	var p mcp.UpdateTaskParams
	t, err := ss.statelessTask(params, rq, &p, func() string { return p.TaskID })
	if err != nil {
		return nil, err
	}
	s := ss.srv
	s.count(func(st *Stats) { st.TaskUpdates++ })
	s.changeTask(t, func(t *task) bool {
		took := false
		for key, res := range p.InputResponses {
			if _, ok := t.asked[key]; !ok || len(res) == 0 || string(res) == "null" {
				continue
			}
			if _, done := t.answers[key]; done {
				continue
			}
			t.answers[key] = res
			took = true
		}
		if took && t.status == mcp.TaskInputRequired && len(outstanding(t)) == 0 {
			t.status, t.message = mcp.TaskWorking, ""
		}
		return took
	})
	return struct{}{}, nil
}

// statelessCancelTask serves tasks/cancel: the task is cancelled (unless it
// already ended) and the answer is an empty acknowledgement.
func (ss *Session) statelessCancelTask(params json.RawMessage, rq *reqInfo) (any, error) {
	var p mcp.TaskIDParams
	t, err := ss.statelessTask(params, rq, &p, func() string { return p.TaskID })
	if err != nil {
		return nil, err
	}
	ss.srv.cancelTask(t)
	return struct{}{}, nil
}

// outstanding returns the input requests of t not answered yet.
func outstanding(t *task) map[string]mcp.InputRequest {
	out := map[string]mcp.InputRequest{}
	for key, r := range t.asked {
		if _, done := t.answers[key]; done {
			continue
		}
		params, _ := json.Marshal(r.Params)
		if r.Params == nil {
			params = nil
		}
		out[key] = mcp.InputRequest{Method: r.Method, Params: params}
	}
	return out
}

// statelessAsk gets the client's answers to reqs for a task of the
// extension: each request gets a key of the task's own (the tool's key
// and a number: never used before in the task), the task is
// input_required with them until tasks/update brings every answer, then
// working again.
func (s *Server) statelessAsk(c *call, t *task, reqs map[string]inputRequest) (map[string]json.RawMessage, error) {
	for _, r := range reqs {
		if err := c.need(capabilityOf(r.Method, r.Params)); err != nil {
			return nil, err
		}
	}
	toolKey := map[string]string{}
	s.count(func(st *Stats) { st.TaskInputRequests += len(reqs) })
	s.changeTask(t, func(t *task) bool {
		if t.asked == nil {
			t.asked, t.answers = map[string]inputRequest{}, map[string]json.RawMessage{}
		}
		for _, key := range slices.Sorted(maps.Keys(reqs)) {
			t.keys++
			k := key + "-" + strconv.Itoa(t.keys)
			t.asked[k] = reqs[key]
			toolKey[k] = key
		}
		if t.status == mcp.TaskWorking {
			t.status, t.message = mcp.TaskInputRequired, "waiting for the client's input"
		}
		return true
	})
	ts := &s.tasks
	for {
		ts.mu.Lock()
		got := map[string]json.RawMessage{}
		for k, key := range toolKey {
			if res, ok := t.answers[k]; ok {
				got[key] = res
			}
		}
		complete := len(got) == len(toolKey)
		if complete {
			for k := range toolKey {
				delete(t.asked, k)
				delete(t.answers, k)
			}
		}
		changed := t.changed
		ts.mu.Unlock()
		if complete {
			s.setStatus(t, mcp.TaskWorking, "")
			return got, nil
		}
		select {
		case <-changed:
		case <-t.ctx.Done():
			return nil, t.ctx.Err()
		}
	}
}

// taskAsk gets the client's answers to a task's input requests, as the
// task's era does it.
func (s *Server) taskAsk(c *call, reqs map[string]inputRequest) (map[string]json.RawMessage, error) {
	if c.task.era == eraStateless {
		return s.statelessAsk(c, c.task, reqs)
	}
	return s.initializeAsk(c.task, reqs)
}

// notifyTaskListeners sends notifications/tasks with the task (as
// tasks/get returns it) to the subscriptions/listen streams that asked
// for its id.
func (s *Server) notifyTaskListeners(id string, task json.RawMessage) int {
	n := 0
	for _, l := range s.liveListeners(nil) {
		if !slices.Contains(l.filter.TaskIDs, id) {
			continue
		}
		var params map[string]any
		if json.Unmarshal(task, &params) != nil {
			continue
		}
		l.mu.Lock()
		if l.send("notifications/tasks", params) == nil {
			n++
		}
		l.mu.Unlock()
	}
	return n
}

// acceptTaskIDs returns the ids of stateless tasks the server keeps among
// ids, each once: those a subscription gets notifications/tasks for.
func (s *Server) acceptTaskIDs(ids []string) []string {
	var out []string
	ts := &s.tasks
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, id := range ids {
		if t := ts.byID[id]; t != nil && t.era == eraStateless && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
