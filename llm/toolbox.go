package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"

	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/internal/toolrank"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// ToolboxOptions shape a Toolbox.
type ToolboxOptions struct {
	// Budget is how many tokens the tool definitions may cost (estimated
	// by Estimator). 0 means no budget: every tool is sent.
	Budget int
	// Estimator counts tokens; nil means EstimatorFor(target.Provider).
	Estimator Estimator
	// Deferred, over the budget and for a provider that has its own
	// deferred loading (HasDeferredLoading), sends every tool marked
	// defer_loading with the provider's search tool, instead of
	// search_tools, describe_tool and call_tool. The budget then bounds
	// nothing: the provider loads tools as the model asks.
	Deferred bool
	// Result shapes every result (its cap, its store). With a Store, the
	// read_result tool is offered too.
	Result ResultOptions
}

// Toolbox is a host's tool set for one model: the definitions to send,
// within a budget, and the calls the model makes, checked, sent to the
// servers and answered in the provider's form. Its methods are safe for
// concurrent use. The tool list is read once, by NewToolbox: after a
// tools/list_changed, make a new Toolbox.
type Toolbox struct {
	src    Source
	target Target
	opts   ToolboxOptions
	est    Estimator

	tools  []Tool         // every server tool, converted, in the source's order
	source []string       // tools[i]'s Source name
	byName map[string]int // model name → index in tools
	docs   []toolrank.Doc // tools, for search
	extra  []Tool         // read_result, when there is a store
	meta   []Tool         // search_tools, describe_tool, call_tool
	mode   budgetMode
	// missing: the servers whose tools are not in the set, and why
	// (a Source that implements PartialSource says so)
	missing map[string]error

	mu       sync.Mutex
	revealed []int        // indexes in tools, in the order revealed
	shown    map[int]bool // revealed
	defs     json.RawMessage
}

type budgetMode int

const (
	modeAll      budgetMode = iota // every tool fits
	modeMeta                       // search, describe, call
	modeDeferred                   // the provider's deferred loading
)

// NewToolbox lists src's tools and converts them for target. Over
// opts.Budget, the model gets search_tools, describe_tool and call_tool
// (or the provider's deferred loading, when asked for and available).
func NewToolbox(ctx context.Context, src Source, target Target, opts ToolboxOptions) (*Toolbox, error) {
	if _, err := capsOf(target); err != nil {
		return nil, err
	}
	list, err := src.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the tools: %w", err)
	}
	tb := &Toolbox{src: src, target: target, opts: opts, est: opts.Estimator, byName: map[string]int{}, shown: map[int]bool{}}
	if ps, ok := src.(PartialSource); ok {
		tb.missing = ps.Missing()
	}
	if tb.est == nil {
		tb.est = EstimatorFor(target.Provider)
	}
	names := make([]string, len(list))
	mcpTools := make([]mcp.Tool, len(list))
	for i, st := range list {
		names[i], mcpTools[i] = st.Name, st.Tool
	}
	tb.tools = ConvertAll(names, mcpTools, target)
	for i, t := range tb.tools {
		tb.source = append(tb.source, list[i].Name)
		if t.Mode != ModeOmitted {
			tb.byName[t.Name] = i
		}
		tb.docs = append(tb.docs, toolrank.Doc{Key: t.Name, Name: t.Original.Name, Title: t.Original.Title, Description: t.Original.Description})
	}
	if opts.Result.Store != nil {
		tb.extra = []Tool{Convert(ReadResultName, ReadResultTool(), target)}
	}
	for _, m := range MetaTools() {
		tb.meta = append(tb.meta, Convert(m.Name, m, target))
	}
	switch {
	case opts.Budget <= 0 || definitionsTokens(tb.est, target, append(tb.extra, tb.tools...)) <= opts.Budget:
		tb.mode = modeAll
	case opts.Deferred && HasDeferredLoading(target.Provider):
		tb.mode = modeDeferred
	default:
		tb.mode = modeMeta
	}
	tb.defs = tb.build()
	return tb, nil
}

// exposedLocked is the tools the model sees, in order: what a reveal
// appends to, never reorders.
func (tb *Toolbox) exposedLocked() []Tool {
	switch tb.mode {
	case modeAll:
		return append(append([]Tool(nil), tb.tools...), tb.extra...)
	case modeDeferred:
		out := []Tool{{Definition: deferredSearchTool[tb.target.Provider]}}
		for _, t := range tb.tools {
			if t.Definition != nil {
				t.Definition = deferred(t.Definition)
			}
			out = append(out, t)
		}
		return append(out, tb.extra...)
	}
	out := append(append([]Tool(nil), tb.meta...), tb.extra...)
	for _, i := range tb.revealed {
		out = append(out, tb.tools[i])
	}
	return out
}

func (tb *Toolbox) build() json.RawMessage { return RequestTools(tb.target, tb.exposedLocked()) }

// Definitions returns the provider's tools array, as its request takes
// it. Tools revealed since (by describe_tool) come appended at its end:
// the bytes before them do not change, so a prompt cache survives.
func (tb *Toolbox) Definitions() json.RawMessage {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.defs
}

// Budgeted says whether the tools did not fit the budget: the model has
// the meta-tools (or the provider's deferred loading) instead.
func (tb *Toolbox) Budgeted() bool { return tb.mode != modeAll }

// Tokens estimates what Definitions costs now.
func (tb *Toolbox) Tokens() int { return tb.est.Tokens(string(tb.Definitions())) }

// AllTokens estimates what every tool's definition would cost, sent at
// once: the cost the budget saves.
func (tb *Toolbox) AllTokens() int { return definitionsTokens(tb.est, tb.target, tb.tools) }

// Report returns every server tool's report: its mode and changes, in
// the source's order, omitted tools included.
func (tb *Toolbox) Report() []Report {
	out := make([]Report, len(tb.tools))
	for i := range tb.tools {
		out[i] = tb.tools[i].Report()
	}
	return out
}

// ToolCallError is a call the Toolbox could not answer to the model: the
// server could not be reached, or the call's outcome is unknown. Err
// keeps the cause: errors.Is(err, jsonrpc.ErrOutcomeUnknown) says that
// the tool may have run.
type ToolCallError struct {
	Tool string // the name the model called
	Err  error
}

func (e *ToolCallError) Error() string {
	return "tool call " + strconv.Quote(e.Tool) + ": " + e.Err.Error()
}
func (e *ToolCallError) Unwrap() error { return e.Err }

// Call answers the model's call of a tool with arguments argsFromModel.
// The meta-tools are answered here; a server tool's arguments are checked
// against its original schema and shaped back (a fault is a result with
// isError that says what to fix), the call goes to its server, and the
// result is converted with opts.Result. A server's refusal is a result
// too. The error, a *ToolCallError, is only for what the model cannot be
// answered: the server unreachable, the outcome unknown, ctx done.
func (tb *Toolbox) Call(ctx context.Context, call ToolCall, argsFromModel []byte) (ToolResult, error) {
	res, err := tb.call(ctx, call.Name, argsFromModel, true)
	if err != nil {
		return ToolResult{}, &ToolCallError{Tool: call.Name, Err: err}
	}
	return Result(ctx, res, call, tb.target, tb.opts.Result)
}

func (tb *Toolbox) call(ctx context.Context, name string, args []byte, meta bool) (*mcp.CallToolResult, error) {
	if meta && tb.mode == modeMeta {
		switch name {
		case SearchToolsName:
			return tb.search(args), nil
		case DescribeToolName:
			return tb.describe(args), nil
		case CallToolName:
			var a struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal(args, &a); err != nil || a.Name == "" {
				return toolError(`call_tool takes {"name": string, "arguments": object}`), nil
			}
			return tb.call(ctx, a.Name, a.Arguments, false)
		}
	}
	if meta && tb.extra != nil && name == ReadResultName {
		return ReadResult(ctx, tb.opts.Result.Store, args, readChunk(tb.opts.Result.withDefaults().MaxBytes))
	}
	i, ok := tb.byName[name]
	if !ok {
		hint := ""
		if tb.mode == modeMeta {
			hint = "; find the right one with " + SearchToolsName
		}
		return toolError("no tool is named " + strconv.Quote(clip(name, 100)) + hint), nil
	}
	t := &tb.tools[i]
	shaped, err := t.Arguments(args)
	var ae *ArgumentError
	if errors.As(err, &ae) {
		return toolError(ae.Error()), nil
	}
	if err != nil {
		return toolError(err.Error()), nil
	}
	res, err := tb.src.CallTool(ctx, tb.source[i], shaped)
	var rpcErr *jsonrpc.Error
	var unknown *fleet.UnknownToolError
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil, errors.Is(err, jsonrpc.ErrOutcomeUnknown):
		// (a bridge's JSON-RPC error may say the call may have run: that
		// is no refusal)
		return nil, err
	case errors.As(err, &rpcErr):
		return toolError("the server refused the call: " + clip(rpcErr.Message, 2000)), nil
	case errors.As(err, &unknown):
		return toolError("the tool " + strconv.Quote(name) + " is gone from its server"), nil
	}
	return nil, err
}

// search answers search_tools: the best matches, with their names and
// descriptions (toolrank.Search, the gateway's answer too).
func (tb *Toolbox) search(args []byte) *mcp.CallToolResult {
	text, ok := toolrank.Search(tb.docs, args, func(i int) bool { return tb.tools[i].Mode != ModeOmitted })
	if !ok {
		return toolError(text)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}}
}

// describe answers describe_tool: the tool's definition for this target,
// and reveals the tool when the budget has room for it.
func (tb *Toolbox) describe(args []byte) *mcp.CallToolResult {
	var a struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.Name == "" {
		return toolError(`describe_tool takes {"name": string}`)
	}
	i, ok := tb.byName[a.Name]
	if !ok {
		return toolError("no tool is named " + strconv.Quote(clip(a.Name, 100)) + "; find the right one with " + SearchToolsName)
	}
	how := "It is now in your tools: call it directly."
	if !tb.reveal(i) {
		how = "Call it with " + CallToolName + "."
	}
	text := string(tb.tools[i].Definition) + "\n" + how
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}}
}

// reveal appends tool i to the definitions when the budget has room for
// it, and says whether the model can call it directly.
func (tb *Toolbox) reveal(i int) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.shown[i] {
		return true
	}
	tb.revealed = append(tb.revealed, i)
	next := tb.build()
	if tb.est.Tokens(string(next)) > tb.opts.Budget {
		tb.revealed = tb.revealed[:len(tb.revealed)-1]
		return false
	}
	tb.shown[i] = true
	tb.defs = next
	return true
}

// Missing returns the servers whose tools are not in the set, each with
// why (a fleet's server that could not be reached, or refused to list).
// It is empty for a single Conn, whose listing fails NewToolbox instead.
func (tb *Toolbox) Missing() map[string]error { return maps.Clone(tb.missing) }
