package testservers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// toolFunc runs a tool on its decoded arguments. It returns a
// *mcp.CallToolResult or a ready json.RawMessage. An error becomes a result
// with isError set and the error's text, unless the request was cancelled.
type toolFunc func(c *call, args json.RawMessage) (any, error)

type toolDef struct {
	tool mcp.Tool
	run  toolFunc
	// statelessOnly tools are offered to stateless requests only.
	statelessOnly bool
	// invalidHeaders: the tool's x-mcp-header annotations break the
	// rules; it is offered only with Options.InvalidHeaderTools.
	invalidHeaders bool
	// headers are the tool's valid x-mcp-header parameters.
	headers []headerParam
	// taskOnly tools are offered only with Options.Tasks; taskNeeds are
	// the client capabilities a 2026-07-28 task of the tool needs, checked
	// before the task is created.
	taskOnly  bool
	taskNeeds []capability
	// conformance tools are offered only with Options.ConformanceTools.
	conformance bool
}

// toolErr is a tool execution error: it is reported in the result.
type toolErr string

func (e toolErr) Error() string { return string(e) }

var (
	yes   = true
	no    = false
	tools = []toolDef{
		{tool: mcp.Tool{
			Name:        "echo",
			Title:       "Echo",
			Description: "Returns the text it is given.",
			InputSchema: schema(`{"type":"object","properties":{"text":{"type":"string","description":"text to echo"}},"required":["text"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &yes},
		}, run: toolEcho},
		{tool: mcp.Tool{
			Name:         "add",
			Title:        "Add",
			Description:  "Adds two numbers; the sum is also in structuredContent.",
			InputSchema:  schema(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
			OutputSchema: schema(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`),
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: &yes, IdempotentHint: &yes},
		}, run: toolAdd},
		{tool: mcp.Tool{
			Name:        "slow",
			Description: "Takes steps×delayMs milliseconds, reporting progress after each step when asked; stops when cancelled.",
			InputSchema: schema(`{"type":"object","properties":{"steps":{"type":"integer","minimum":0},"delayMs":{"type":"integer","minimum":0}},"required":["steps","delayMs"]}`),
		}, run: toolSlow},
		{tool: mcp.Tool{
			Name:        "fail",
			Description: "Fails: returns a result with isError and the message.",
			InputSchema: schema(`{"type":"object","properties":{"message":{"type":"string"}}}`),
		}, run: toolFail},
		{tool: mcp.Tool{
			Name:        "sample",
			Description: "Asks the client for an LLM completion of prompt (sampling/createMessage) and returns its text.",
			InputSchema: schema(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`),
		}, run: toolSample},
		{tool: mcp.Tool{
			Name:        "elicit",
			Description: "Asks the user, through the client, for a name (elicitation/create, form mode); returns the action and content.",
			InputSchema: schema(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
		}, run: toolElicit},
		{tool: mcp.Tool{
			Name:        "roots",
			Description: "Asks the client for its roots (roots/list); returns their URIs, one a line.",
			InputSchema: schema(`{"type":"object"}`),
		}, run: toolRoots},
		{tool: mcp.Tool{
			Name:        "big",
			Description: "Returns one text block of exactly mib MiB of 'x'.",
			InputSchema: schema(`{"type":"object","properties":{"mib":{"type":"integer","minimum":0,"maximum":1024}},"required":["mib"]}`),
		}, run: toolBig},
		{tool: mcp.Tool{
			Name:        "content_types",
			Description: "Returns one block of each content type: text, image, audio, resource_link, resource.",
			InputSchema: schema(`{"type":"object"}`),
		}, run: toolContentTypes},
		{tool: mcp.Tool{
			Name:        "log",
			Description: "Sends a log message (notifications/message) at level, if the session's level lets it through.",
			InputSchema: schema(`{"type":"object","properties":{"level":{"type":"string","enum":["debug","info","notice","warning","error","critical","alert","emergency"]},"message":{"type":"string"}},"required":["level","message"]}`),
		}, run: toolLog},
		{tool: mcp.Tool{
			Name:        "notify_changes",
			Description: "Sends the tools, resources and prompts list_changed notifications.",
			InputSchema: schema(`{"type":"object"}`),
		}, run: toolNotifyChanges},
		{tool: mcp.Tool{
			Name:        "touch",
			Description: "Sends notifications/resources/updated for uri if this session subscribed to it.",
			InputSchema: schema(`{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"]}`),
		}, run: toolTouch},
		{tool: mcp.Tool{
			Name:        "counter",
			Description: "Increments the server's execution counter and returns its new value.",
			InputSchema: schema(`{"type":"object"}`),
		}, run: toolCounter},
		{tool: mcp.Tool{
			Name:        "once",
			Description: "Executes once per key, as a payment would: counts its executions by key (Stats.Executions, Stats.Duplicates) and returns how many times key has run. Waits delayMs first when asked; the execution counts from the start. Cancelled while it waits, it takes lingerMs more to stop, when asked, as a tool slow to stop does.",
			InputSchema: schema(`{"type":"object","properties":{"key":{"type":"string","description":"what must not happen twice"},"delayMs":{"type":"integer","minimum":0},"lingerMs":{"type":"integer","minimum":0}},"required":["key"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &no, IdempotentHint: &no, DestructiveHint: &no},
		}, run: toolOnce},
	}
	toolsByName = func() map[string]*toolDef {
		m := make(map[string]*toolDef, len(tools)+len(statelessTools)+len(invalidHeaderTools)+len(taskTools)+len(conformanceTools))
		for _, list := range [][]toolDef{tools, statelessTools, invalidHeaderTools, taskTools, conformanceTools} {
			for i := range list {
				d := &list[i]
				m[d.tool.Name] = d
				hp, err := headerParams(d.tool.InputSchema)
				if err != nil != d.invalidHeaders {
					panic(fmt.Sprintf("testservers: tool %s: x-mcp-header validity %v, want invalid=%v", d.tool.Name, err, d.invalidHeaders))
				}
				d.headers = hp
			}
		}
		return m
	}()
	toolList = func() []mcp.Tool {
		l := make([]mcp.Tool, len(tools))
		for i := range tools {
			l[i] = tools[i].tool
		}
		return l
	}()
	statelessToolList = func() []mcp.Tool {
		l := slices.Clone(toolList)
		for i := range statelessTools {
			l = append(l, statelessTools[i].tool)
		}
		return l
	}()
	statelessToolListInvalid = func() []mcp.Tool {
		l := slices.Clone(statelessToolList)
		for i := range invalidHeaderTools {
			l = append(l, invalidHeaderTools[i].tool)
		}
		return l
	}()
)

// ToolNames returns the names of the tools every test server offers, in
// the order tools/list returns them.
func ToolNames() []string {
	names := make([]string, len(tools))
	for i := range tools {
		names[i] = tools[i].tool.Name
	}
	return names
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

func (ss *Session) listTools(params json.RawMessage, rq *reqInfo) (any, error) {
	list := toolList
	switch {
	case rq.era == eraStateless && ss.srv.opts.InvalidHeaderTools:
		list = statelessToolListInvalid
	case rq.era == eraStateless:
		list = statelessToolList
	}
	items, next, err := page(params, ss.srv.withConformanceTools(ss.srv.withTaskTools(list)), ss.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return mcp.ListToolsResult{Tools: items, NextCursor: next}, nil
}

// callParams is tools/call's params as the server reads them.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
	// Task asks for a task (2025-11-25): {ttl}.
	Task json.RawMessage `json:"task"`
	mrtrParams
}

// lookupTool returns the tool a request of era e may call.
func (s *Server) lookupTool(name string, e era) *toolDef {
	def := toolsByName[name]
	switch {
	case def == nil:
		return nil
	case def.statelessOnly && e != eraStateless:
		return nil
	case def.invalidHeaders && (e != eraStateless || !s.opts.InvalidHeaderTools):
		return nil
	case def.taskOnly && !s.opts.Tasks.Enabled:
		return nil
	case def.conformance && !s.opts.ConformanceTools:
		return nil
	}
	return def
}

func (ss *Session) callTool(ctx context.Context, id jsonrpc.ID, params json.RawMessage, rq *reqInfo) (any, error) {
	var p callParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, invalidParams("tools/call: name is required")
	}
	if p.Name == TraceContextTool {
		return traceContextResult(id.String(), params), nil
	}
	def := ss.srv.lookupTool(p.Name, rq.era)
	if def == nil {
		return nil, invalidParams("unknown tool: " + p.Name)
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	c := ss.newCall(ctx, id, rq, "tools/call", p.Name, p.mrtrParams)
	if res, handled, err := ss.taskCall(c, def, p, args); handled {
		return res, err
	}
	if len(p.Meta.ProgressToken) > 0 && string(p.Meta.ProgressToken) != "null" {
		c.progressToken = p.Meta.ProgressToken
	}
	ss.srv.count(func(st *Stats) { st.ToolCalls[p.Name]++ })
	res, err := def.run(c, args)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := c.protocolErr(err); err != nil {
			if _, ok := errors.AsType[*inputRequired](err); ok {
				ss.srv.count(func(st *Stats) { st.InputRequired[p.Name]++ })
			}
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(err.Error())}, IsError: true}, nil
	}
	return res, nil
}

// args decodes a tool's arguments; a mismatch is a tool execution error
// (as input validation errors are since 2025-11-25).
func args(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return toolErr("invalid arguments: " + err.Error())
	}
	return nil
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}}
}

func toolEcho(_ *call, raw json.RawMessage) (any, error) {
	var a struct {
		Text *string `json:"text"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Text == nil {
		return nil, toolErr("invalid arguments: text is required")
	}
	return textResult(*a.Text), nil
}

func toolAdd(_ *call, raw json.RawMessage) (any, error) {
	var a struct {
		A *float64 `json:"a"`
		B *float64 `json:"b"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.A == nil || a.B == nil {
		return nil, toolErr("invalid arguments: a and b are required")
	}
	sum := *a.A + *a.B
	structured, err := json.Marshal(map[string]float64{"sum": sum})
	if err != nil {
		return nil, err
	}
	res := textResult(formatNumber(*a.A) + "+" + formatNumber(*a.B) + "=" + formatNumber(sum))
	res.StructuredContent = structured
	return res, nil
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func toolSlow(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		Steps   int `json:"steps"`
		DelayMs int `json:"delayMs"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Steps < 0 || a.DelayMs < 0 {
		return nil, toolErr("invalid arguments: steps and delayMs must not be negative")
	}
	delay := time.Duration(a.DelayMs) * time.Millisecond
	for i := 1; i <= a.Steps; i++ {
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-c.ctx.Done():
			timer.Stop()
			return nil, c.ctx.Err()
		}
		if c.progressToken != nil {
			_ = c.notify("notifications/progress", mcp.ProgressParams{
				ProgressToken: c.progressToken,
				Progress:      float64(i),
				Total:         float64(a.Steps),
				Message:       fmt.Sprintf("step %d of %d", i, a.Steps),
			})
		}
	}
	return textResult(fmt.Sprintf("done %d steps", a.Steps)), nil
}

func toolFail(_ *call, raw json.RawMessage) (any, error) {
	var a struct {
		Message string `json:"message"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Message == "" {
		a.Message = "failed as asked"
	}
	return nil, toolErr(a.Message)
}

// clientRequestErr turns the failure of a server→client request into the
// tool's error text.
func clientRequestErr(method string, err error) error {
	if errors.Is(err, ErrNoChannel) {
		return toolErr(method + ": no channel to the client is available (open a GET stream or use SSE responses)")
	}
	return toolErr(method + " failed: " + err.Error())
}

func toolSample(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		Prompt string `json:"prompt"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if err := c.need(capSampling); err != nil {
		return nil, err
	}
	res, err := c.ask1("sample", "sampling/createMessage", mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: "user", Content: mcp.Contents{mcp.TextContent(a.Prompt)}}},
		MaxTokens: 100,
	})
	if err != nil {
		return nil, c.inputErr("sampling/createMessage", err)
	}
	var r mcp.CreateMessageResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, toolErr("sampling/createMessage: bad result: " + err.Error())
	}
	return textResult(sampledText(r)), nil
}

// sampledText is the text of a sampling result.
func sampledText(r mcp.CreateMessageResult) string {
	var text strings.Builder
	for _, b := range r.Content {
		if b.Type == mcp.ContentText {
			text.WriteString(b.Text)
		}
	}
	return text.String()
}

// elicitSchema is what the elicit tool asks the user for.
const elicitSchema = `{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"your name"}},"required":["name"]}`

func toolElicit(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		Message string `json:"message"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if err := c.need(capElicitForm); err != nil {
		return nil, err
	}
	res, err := c.ask1("elicit", "elicitation/create", mcp.ElicitParams{
		Mode:            mcp.ElicitModeForm,
		Message:         a.Message,
		RequestedSchema: json.RawMessage(elicitSchema),
	})
	if err != nil {
		return nil, c.inputErr("elicitation/create", err)
	}
	var r mcp.ElicitResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, toolErr("elicitation/create: bad result: " + err.Error())
	}
	text, err := elicitedText(r)
	if err != nil {
		return nil, err
	}
	return textResult(text), nil
}

// elicitedText is an elicitation's action, and its content as JSON.
func elicitedText(r mcp.ElicitResult) (string, error) {
	text := r.Action
	if len(r.Content) > 0 {
		b, err := json.Marshal(r.Content)
		if err != nil {
			return "", err
		}
		text += " " + string(b)
	}
	return text, nil
}

func toolRoots(c *call, _ json.RawMessage) (any, error) {
	if err := c.need(capRoots); err != nil {
		return nil, err
	}
	res, err := c.ask1("roots", "roots/list", struct{}{})
	if err != nil {
		return nil, c.inputErr("roots/list", err)
	}
	var r mcp.ListRootsResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, toolErr("roots/list: bad result: " + err.Error())
	}
	return textResult(rootURIs(r)), nil
}

// rootURIs are the URIs of roots, one a line.
func rootURIs(r mcp.ListRootsResult) string {
	uris := make([]string, len(r.Roots))
	for i, root := range r.Roots {
		uris[i] = root.URI
	}
	return strings.Join(uris, "\n")
}

// maxBigMiB bounds the big tool.
const maxBigMiB = 1024

func toolBig(_ *call, raw json.RawMessage) (any, error) {
	var a struct {
		MiB int `json:"mib"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.MiB < 0 || a.MiB > maxBigMiB {
		return nil, toolErr(fmt.Sprintf("invalid arguments: mib must be within 0…%d", maxBigMiB))
	}
	// Written directly: 'x' needs no escaping, and this spares encoding
	// (and copying) a large string.
	const head, tail = `{"content":[{"type":"text","text":"`, `"}]}`
	n := a.MiB << 20
	b := make([]byte, 0, len(head)+n+len(tail))
	b = append(b, head...)
	b = append(b, strings.Repeat("x", n)...)
	b = append(b, tail...)
	return json.RawMessage(b), nil
}

func toolContentTypes(_ *call, _ json.RawMessage) (any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{
		mcp.TextContent("hello"),
		{Type: mcp.ContentImage, Data: tinyPNG, MimeType: "image/png"},
		{Type: mcp.ContentAudio, Data: tinyWAV, MimeType: "audio/wav"},
		{Type: mcp.ContentResourceLink, URI: "test://static/text", Name: "text", MimeType: "text/plain"},
		{Type: mcp.ContentResource, Resource: &mcp.ResourceContents{URI: "test://static/text", MimeType: "text/plain", Text: staticText}},
	}}, nil
}

// LoggerName is the logger field of the log tool's notifications/message.
const LoggerName = "testserver"

func toolLog(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		Level   mcp.LoggingLevel `json:"level"`
		Message string           `json:"message"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if severity(a.Level) < 0 {
		return nil, toolErr("invalid arguments: unknown level " + strconv.Quote(string(a.Level)))
	}
	if !c.logEnabled(a.Level) {
		return textResult("filtered"), nil
	}
	data, err := json.Marshal(a.Message)
	if err != nil {
		return nil, err
	}
	if err := c.notify("notifications/message", mcp.LoggingMessageParams{Level: a.Level, Logger: LoggerName, Data: data}); err != nil {
		return nil, toolErr("notifications/message not sent: " + err.Error())
	}
	return textResult("logged"), nil
}

func toolNotifyChanges(c *call, _ json.RawMessage) (any, error) {
	if c.stateless() {
		// 2026-07-28: list changes reach the subscriptions/listen streams
		// that asked for them, never the stream of this request.
		n := c.ss.srv.notifyListeners(listChangedMethods...)
		return textResult(fmt.Sprintf("sent to %d subscription(s)", n)), nil
	}
	for _, method := range listChangedMethods {
		if err := c.notify(method, struct{}{}); err != nil {
			return nil, toolErr(method + " not sent: " + err.Error())
		}
	}
	return textResult("sent"), nil
}

func toolTouch(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		URI string `json:"uri"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if c.stateless() {
		n := c.ss.srv.notifyResourceListeners(a.URI)
		return textResult(fmt.Sprintf("notified %d subscription(s)", n)), nil
	}
	if !c.ss.Subscribed(a.URI) {
		return textResult("not subscribed"), nil
	}
	if err := c.notify("notifications/resources/updated", mcp.ResourceUpdatedParams{URI: a.URI}); err != nil {
		return nil, toolErr("notifications/resources/updated not sent: " + err.Error())
	}
	return textResult("notified"), nil
}

func toolCounter(c *call, _ json.RawMessage) (any, error) {
	var n int64
	c.ss.srv.count(func(st *Stats) {
		st.Counter++
		n = st.Counter
	})
	return textResult(strconv.FormatInt(n, 10)), nil
}

func toolOnce(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		Key      *string `json:"key"`
		DelayMs  int     `json:"delayMs"`
		LingerMs int     `json:"lingerMs"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Key == nil {
		return nil, toolErr("invalid arguments: key is required")
	}
	if a.DelayMs < 0 || a.LingerMs < 0 {
		return nil, toolErr("invalid arguments: delayMs and lingerMs must not be negative")
	}
	n := c.ss.srv.execute(*a.Key)
	if a.DelayMs > 0 {
		timer := time.NewTimer(time.Duration(a.DelayMs) * time.Millisecond)
		select {
		case <-timer.C:
		case <-c.ctx.Done():
			timer.Stop()
			time.Sleep(time.Duration(a.LingerMs) * time.Millisecond)
			return nil, c.ctx.Err()
		}
	}
	return textResult(fmt.Sprintf("%s executed %d time(s)", *a.Key, n)), nil
}
