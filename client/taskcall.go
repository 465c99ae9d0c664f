package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// How a call becomes a task (the design and the rules are in tasks.go):
// the Conn asks for one, in revision 2025-11-25, for a tool that must run
// as a task, and takes the server's answer for a handle when it is one.

// taskDesign is how a task is run and waited for.
type taskDesign int

const (
	tasksRequested taskDesign = iota // revision 2025-11-25: asked for per call, fetched with tasks/result
	tasksExtension                   // the tasks extension of 2026-07-28: the server decides, tasks/get carries all
)

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

// callTool sends a tools/call (callRaw). With params a
// *mcp.CallToolParams that asks for no task, it asks for one when the
// tool must run as one (askTask); a plain call refused as an unknown
// method is sent again as a task when the tool, looked up, must be one
// (mustLearnTask).
func (c *Conn) callTool(ctx context.Context, ob *observed, params any, opts []CallOption) (json.RawMessage, error) {
	p, ok := params.(*mcp.CallToolParams)
	if !ok || p.Task != nil || c.opts.tasks.Never {
		return c.send(ctx, ob, "tools/call", params, opts...)
	}
	var co callOptions
	for _, opt := range opts {
		opt(&co)
	}
	if c.askTask(p.Name, co.asTask) {
		asTask := *p
		asTask.Task = c.taskParams()
		return c.send(ctx, ob, "tools/call", &asTask, opts...)
	}
	raw, err := c.send(ctx, ob, "tools/call", p, opts...)
	if (err != nil || c.dialect().askTasks && refusedAsPlainCall(raw)) && c.mustLearnTask(ctx, p.Name, err) {
		asTask := *p
		asTask.Task = c.taskParams()
		raw, err = c.send(ctx, ob, "tools/call", &asTask, opts...)
	}
	if err != nil {
		return nil, c.explainTaskRefusal(err)
	}
	return raw, nil
}

// mustLearnTask answers a plain call to the tool name that a server
// offering the tasks of revision 2025-11-25 refused, the tool not being
// known to the Conn: err is -32601 (what the specification says of a tool
// that only runs as a task), or err is nil and the answer was a result
// refusing the call (refusedAsPlainCall; the TypeScript SDK's servers
// answer so). It lists the tools, and reports whether the listing says the
// tool must run as a task. Such a tool cannot have run as a plain call: the
// refusal says so, and the listing confirms it, so it may be sent again.
// A tool the listing does not require to be a task is not: then the
// result stands as the tool's.
func (c *Conn) mustLearnTask(ctx context.Context, name string, err error) bool {
	var rpcErr *jsonrpc.Error
	if err != nil && (!errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound) || !c.dialect().askTasks {
		return false
	}
	c.mu.Lock()
	known := c.tools.known(name)
	c.mu.Unlock()
	if known {
		return false // its listing said it needs no task: the refusal is the server's answer
	}
	for t, err := range c.Tools(ctx) {
		if err != nil {
			return false
		}
		if t.Name == name {
			return c.askTask(name, false)
		}
	}
	return false
}

// maxRefusalScan bounds the answer refusedAsPlainCall reads: a refusal is
// one short sentence, and a tool's real result may be large.
const maxRefusalScan = 4 << 10

// refusedAsPlainCall reports whether raw, the answer to a plain
// tools/call, is a result that may be a refusal to run the tool other than
// as a task: isError, with text that speaks of a task ("Tool delay
// requires task augmentation (taskSupport: 'required')" from the
// TypeScript SDK's servers). It is only a hint: mustLearnTask calls again
// as a task only when the tool's listing says it must run as one.
func refusedAsPlainCall(raw json.RawMessage) bool {
	if len(raw) > maxRefusalScan || !bytes.Contains(raw, []byte(`"isError"`)) {
		return false
	}
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if jsondec.Unmarshal(raw, &res) != nil || !res.IsError {
		return false
	}
	for _, c := range res.Content {
		if c.Type == "text" && strings.Contains(strings.ToLower(c.Text), "task") {
			return true
		}
	}
	return false
}

// explainTaskRefusal adds to the -32601 of a stateless server that offers the
// tasks of revision 2025-11-25 what it likely means: the tool runs only as
// such a task, which 2026-07-28 does not have (see tasks.go).
func (c *Conn) explainTaskRefusal(err error) error {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound ||
		!c.dialect().noRequestedTasks || !c.Info().Capabilities.Tasks.ToolCalls() {
		return err
	}
	return fmt.Errorf("%w (the server offers the tasks of revision 2025-11-25, which 2026-07-28 does not have: a tool that runs only as such a task needs the initialize era (era policy \"initialize\"))", err)
}

// askedTask reports whether params ask for the request to run as a task
// (revision 2025-11-25).
func askedTask(params any) bool {
	p, ok := params.(*mcp.CallToolParams)
	return ok && p.Task != nil
}

// createdTask reads the answer of revision 2025-11-25 to a call that
// asked to run as a task: a CreateTaskResult, or nil when the answer has
// no task member, that of a server that ran the call as any other (one
// that does not offer tasks for it ignores the task member, as 2025-11-25
// says it must; a 2026-07-28 one decides for itself, resultType task).
func createdTask(method string, raw json.RawMessage) (*mcp.Task, error) {
	var created struct {
		Task *mcp.Task `json:"task"`
	}
	if err := jsondec.Unmarshal(raw, &created); err != nil {
		return nil, &ResultError{Method: method, Err: fmt.Errorf("the answer to a call run as a task: %w", err)}
	}
	if created.Task == nil {
		return nil, nil
	}
	if created.Task.TaskID == "" {
		return nil, &ResultError{Method: method, Err: errors.New("the answer to a call run as a task names no task")}
	}
	return created.Task, nil
}

// extensionTask reads a result of type task (the tasks extension), which
// only tools/call may get.
func extensionTask(method string, raw json.RawMessage) (*mcp.Task, error) {
	if method != "tools/call" {
		return nil, &ResultError{Method: method, Err: errors.New("the server answered with a task, which only tools/call may become")}
	}
	var t mcp.Task
	if err := jsondec.Unmarshal(raw, &t); err != nil {
		return nil, &ResultError{Method: method, Err: fmt.Errorf("task handle: %w", err)}
	}
	if t.TaskID == "" {
		return nil, &ResultError{Method: method, Err: errors.New("task handle without a taskId")}
	}
	return &t, nil
}
