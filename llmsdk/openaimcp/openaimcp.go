// Package openaimcp hands an llm.Toolbox's tools to the official OpenAI Go
// SDK (github.com/openai/openai-go/v3) and the model's tool calls back:
// Chat Completions and Responses. The core (package llm) emits each
// provider's wire JSON; this package turns it into the SDK's param types,
// so that the SDK sends what the core emitted, exactly. A definition that
// an SDK type would change goes as raw JSON (param.Override), its typed
// fields unset.
//
// A tool loop with Chat Completions:
//
//	tools, _ := openaimcp.ChatTools(tb.Definitions())
//	comp, _ := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: m, Messages: msgs, Tools: tools})
//	msg := comp.Choices[0].Message
//	msgs = append(msgs, msg.ToParam())
//	answers, _ := openaimcp.AnswerChat(ctx, tb, msg)
//	msgs = append(msgs, answers...) // and ask again, until no tool calls
package openaimcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/llmsdk/internal/exact"
)

// Call is a tool call the model made: the call (its ID and the name the
// model called) and its arguments, as Toolbox.Call takes them.
type Call struct {
	llm.ToolCall
	Args json.RawMessage
}

// ChatTools turns the tools array of an llm.Target{Provider:
// llm.OpenAIChat} (or OpenAICompatible), as Toolbox.Definitions or
// llm.RequestTools give it, into the Chat Completions params.
func ChatTools(defs json.RawMessage) ([]openai.ChatCompletionToolUnionParam, error) {
	return decodeAll(defs, "Chat Completions tool", param.Override[openai.ChatCompletionToolUnionParam])
}

// ResponsesTools turns the tools array of an llm.Target{Provider:
// llm.OpenAIResponses} into the Responses API params.
func ResponsesTools(defs json.RawMessage) ([]responses.ToolUnionParam, error) {
	return decodeAll(defs, "Responses tool", param.Override[responses.ToolUnionParam])
}

// decodeAll decodes each item of a JSON array into T, exactly, or as raw
// JSON where T would change it.
func decodeAll[T any](arr json.RawMessage, what string, raw func(any) T) ([]T, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(arr, &items); err != nil {
		return nil, fmt.Errorf("%ss: not a JSON array: %w", what, err)
	}
	out := make([]T, 0, len(items))
	for i, it := range items {
		v, err := one(it, raw)
		if err != nil {
			return nil, fmt.Errorf("%s %d: %w", what, i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func one[T any](it json.RawMessage, raw func(any) T) (T, error) {
	v, ok, err := exact.Decode[T](it)
	if err != nil {
		return v, err
	}
	if !ok {
		v = raw(it)
	}
	return v, nil
}

// ChatCalls returns the tool calls of a Chat Completions answer's message
// (function calls; custom tool calls are not MCP tools and are left out).
func ChatCalls(msg openai.ChatCompletionMessage) []Call {
	var out []Call
	for _, tc := range msg.ToolCalls {
		if tc.Type != "function" {
			continue
		}
		out = append(out, Call{ToolCall: llm.ToolCall{ID: tc.ID, Name: tc.Function.Name}, Args: json.RawMessage(tc.Function.Arguments)})
	}
	return out
}

// ResponsesCalls returns the function calls of a Responses answer.
func ResponsesCalls(r *responses.Response) []Call {
	var out []Call
	for _, it := range r.Output {
		if it.Type != "function_call" {
			continue
		}
		out = append(out, Call{ToolCall: llm.ToolCall{ID: it.CallID, Name: it.Name}, Args: json.RawMessage(it.Arguments.OfString)})
	}
	return out
}

// ChatMessages turns a result for Chat Completions into the messages to
// send: the tool message, and the follow-up user message with its images
// when the result has one (send those after all the turn's tool messages).
func ChatMessages(r llm.ToolResult) (tool openai.ChatCompletionMessageParamUnion, followup *openai.ChatCompletionMessageParamUnion, err error) {
	if tool, err = one(r.Message, param.Override[openai.ChatCompletionMessageParamUnion]); err != nil {
		return tool, nil, fmt.Errorf("Chat Completions tool message: %w", err)
	}
	if r.Followup != nil {
		f, err := one(r.Followup, param.Override[openai.ChatCompletionMessageParamUnion])
		if err != nil {
			return tool, nil, fmt.Errorf("Chat Completions follow-up message: %w", err)
		}
		followup = &f
	}
	return tool, followup, nil
}

// ResponsesItem turns a result for the Responses API into its
// function_call_output input item.
func ResponsesItem(r llm.ToolResult) (responses.ResponseInputItemUnionParam, error) {
	v, err := one(r.Message, param.Override[responses.ResponseInputItemUnionParam])
	if err != nil {
		return v, fmt.Errorf("Responses function_call_output: %w", err)
	}
	return v, nil
}

// AnswerChat runs every tool call of msg through tb and returns the
// messages that answer them, in order: the tool messages, then the
// follow-ups. A call the Toolbox cannot answer (the server unreachable,
// the outcome unknown) stops it with the Toolbox's error.
func AnswerChat(ctx context.Context, tb *llm.Toolbox, msg openai.ChatCompletionMessage) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out, later []openai.ChatCompletionMessageParamUnion
	for _, c := range ChatCalls(msg) {
		res, err := tb.Call(ctx, c.ToolCall, c.Args)
		if err != nil {
			return nil, err
		}
		tool, followup, err := ChatMessages(res)
		if err != nil {
			return nil, err
		}
		out = append(out, tool)
		if followup != nil {
			later = append(later, *followup)
		}
	}
	return append(out, later...), nil
}

// AnswerResponses runs every function call of r through tb and returns
// the function_call_output items that answer them, in order.
func AnswerResponses(ctx context.Context, tb *llm.Toolbox, r *responses.Response) ([]responses.ResponseInputItemUnionParam, error) {
	var out []responses.ResponseInputItemUnionParam
	for _, c := range ResponsesCalls(r) {
		res, err := tb.Call(ctx, c.ToolCall, c.Args)
		if err != nil {
			return nil, err
		}
		item, err := ResponsesItem(res)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}
