package testservers

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Names of the tools that run as tasks (Options.Tasks), in the order
// tools/list returns them after the others.
const (
	// TaskSleepTool (required) works for ms milliseconds, then returns
	// text.
	TaskSleepTool = "task_sleep"
	// TaskOptionalTool (optional) is task_sleep, as a task or a plain
	// call.
	TaskOptionalTool = "task_optional"
	// TaskAskTool (required) works for ms, then asks the user's name
	// (elicitation/create, form, key "name") and returns "hello NAME".
	TaskAskTool = "task_ask"
	// TaskErrorTool (required) works for ms, then ends with the JSON-RPC
	// error code (-32603 when absent) and message.
	TaskErrorTool = "task_error"
	// TaskIsErrorTool (required) works for ms, then returns a result
	// with isError and text.
	TaskIsErrorTool = "task_iserror"
	// TaskOnceTool (required) counts its executions by key, as the once
	// tool does (Stats.Executions, Stats.Duplicates, Server.Executed),
	// works for ms, then returns "KEY executed N time(s)".
	TaskOnceTool = "task_once"
)

// DefaultTaskErrorCode is the code task_error ends with when it is
// given none.
const DefaultTaskErrorCode = jsonrpc.CodeInternalError

func taskExecution(support string) *mcp.ToolExecution {
	return &mcp.ToolExecution{TaskSupport: support}
}

// sleepSchema are the arguments of task_sleep and task_optional.
const sleepSchema = `{"type":"object","properties":{"ms":{"type":"integer","minimum":0},"text":{"type":"string"}}}`

var taskTools = []toolDef{
	{tool: mcp.Tool{
		Name:        TaskSleepTool,
		Description: "Works for ms milliseconds, then returns text. Runs only as a task.",
		InputSchema: schema(sleepSchema),
		Execution:   taskExecution(mcp.TaskSupportRequired),
	}, run: toolTaskSleep, taskOnly: true},
	{tool: mcp.Tool{
		Name:        TaskOptionalTool,
		Description: "Works for ms milliseconds, then returns text. Runs as a task or as a plain call.",
		InputSchema: schema(sleepSchema),
		Execution:   taskExecution(mcp.TaskSupportOptional),
	}, run: toolTaskSleep, taskOnly: true},
	{tool: mcp.Tool{
		Name:        TaskAskTool,
		Description: "Works for ms milliseconds, then asks the user's name (elicitation, form mode) and returns \"hello NAME\". Runs only as a task; needs elicitation.",
		InputSchema: schema(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0},"message":{"type":"string"}}}`),
		Execution:   taskExecution(mcp.TaskSupportRequired),
	}, run: toolTaskAsk, taskOnly: true, taskNeeds: []capability{capElicitForm}},
	{tool: mcp.Tool{
		Name:        TaskErrorTool,
		Description: "Works for ms milliseconds, then fails with the JSON-RPC error code (-32603 by default) and message. Runs only as a task.",
		InputSchema: schema(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0},"code":{"type":"integer"},"message":{"type":"string"}}}`),
		Execution:   taskExecution(mcp.TaskSupportRequired),
	}, run: toolTaskError, taskOnly: true},
	{tool: mcp.Tool{
		Name:        TaskIsErrorTool,
		Description: "Works for ms milliseconds, then returns text in a result with isError. Runs only as a task.",
		InputSchema: schema(sleepSchema),
		Execution:   taskExecution(mcp.TaskSupportRequired),
	}, run: toolTaskIsError, taskOnly: true},
	{tool: mcp.Tool{
		Name:        TaskOnceTool,
		Description: "Executes once per key, as a payment would: counts its executions by key (Stats.Executions, Stats.Duplicates), works for ms milliseconds, then returns how many times key has run. Runs only as a task.",
		InputSchema: schema(`{"type":"object","properties":{"key":{"type":"string"},"ms":{"type":"integer","minimum":0}},"required":["key"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &no, IdempotentHint: &no, DestructiveHint: &no},
		Execution:   taskExecution(mcp.TaskSupportRequired),
	}, run: toolTaskOnce, taskOnly: true},
}

// TaskToolNames returns the names of the tools listed with Options.Tasks,
// after the others, in their order.
func TaskToolNames() []string {
	names := make([]string, len(taskTools))
	for i := range taskTools {
		names[i] = taskTools[i].tool.Name
	}
	return names
}

// withTaskTools returns list followed, with Options.Tasks, by the task
// tools.
func (s *Server) withTaskTools(list []mcp.Tool) []mcp.Tool {
	if !s.opts.Tasks.Enabled {
		return list
	}
	out := slices.Clip(list)
	for i := range taskTools {
		out = append(out, taskTools[i].tool)
	}
	return out
}

// taskSupport is the tool's execution.taskSupport, forbidden when absent.
func (d *toolDef) taskSupport() string {
	if d.tool.Execution == nil || d.tool.Execution.TaskSupport == "" {
		return mcp.TaskSupportForbidden
	}
	return d.tool.Execution.TaskSupport
}

// work waits ms milliseconds, or until the call is cancelled.
func work(c *call, ms int) error {
	if ms < 0 {
		return toolErr("invalid arguments: ms must not be negative")
	}
	if ms == 0 {
		return c.ctx.Err()
	}
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

type sleepArgs struct {
	MS   int    `json:"ms"`
	Text string `json:"text"`
}

func toolTaskSleep(c *call, raw json.RawMessage) (any, error) {
	var a sleepArgs
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if err := work(c, a.MS); err != nil {
		return nil, err
	}
	return textResult(a.Text), nil
}

func toolTaskIsError(c *call, raw json.RawMessage) (any, error) {
	var a sleepArgs
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if err := work(c, a.MS); err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(a.Text)}, IsError: true}, nil
}

func toolTaskError(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		MS      int    `json:"ms"`
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if err := work(c, a.MS); err != nil {
		return nil, err
	}
	if a.Code == 0 {
		a.Code = DefaultTaskErrorCode
	}
	if a.Message == "" {
		a.Message = "task_error failed as asked"
	}
	return nil, jsonrpc.NewError(a.Code, a.Message)
}

func toolTaskAsk(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		MS      int    `json:"ms"`
		Message string `json:"message"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Message == "" {
		a.Message = "What is your name?"
	}
	if err := c.need(capElicitForm); err != nil {
		return nil, err
	}
	if err := work(c, a.MS); err != nil {
		return nil, err
	}
	res, err := c.ask1("name", "elicitation/create", mcp.ElicitParams{
		Mode: mcp.ElicitModeForm, Message: a.Message, RequestedSchema: json.RawMessage(elicitSchema),
	})
	if err != nil {
		return nil, c.inputErr("elicitation/create", err)
	}
	var r mcp.ElicitResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, toolErr("elicitation/create: bad result: " + err.Error())
	}
	name, _ := r.Content["name"].(string)
	if r.Action != mcp.ElicitAccept || name == "" {
		return nil, toolErr("no name given (" + r.Action + ")")
	}
	return textResult("hello " + name), nil
}

func toolTaskOnce(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		Key *string `json:"key"`
		MS  int     `json:"ms"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Key == nil {
		return nil, toolErr("invalid arguments: key is required")
	}
	n := c.ss.srv.execute(*a.Key)
	if err := work(c, a.MS); err != nil {
		return nil, err
	}
	return textResult(fmt.Sprintf("%s executed %d time(s)", *a.Key, n)), nil
}
