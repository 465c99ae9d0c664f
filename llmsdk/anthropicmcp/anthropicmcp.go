// Package anthropicmcp hands an llm.Toolbox's tools to the official
// Anthropic Go SDK (github.com/anthropics/anthropic-sdk-go/v2) and the
// model's tool_use blocks back. The core (package llm) emits the Messages
// API's wire JSON; this package turns it into the SDK's param types, so
// that the SDK sends what the core emitted, exactly. A definition that an
// SDK type would change goes as raw JSON (param.Override), its typed
// fields unset.
//
// A tool loop:
//
//	tools, _ := anthropicmcp.Tools(tb.Definitions())
//	msg, _ := ac.Messages.New(ctx, anthropic.MessageNewParams{Model: m, MaxTokens: 1024, Messages: msgs, Tools: tools})
//	msgs = append(msgs, msg.ToParam())
//	answer, _ := anthropicmcp.Answer(ctx, tb, msg) // a user message of tool_result blocks
//	msgs = append(msgs, answer)                    // and ask again, until no tool_use
package anthropicmcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/llmsdk/internal/exact"
)

// Call is a tool call the model made: the call (its ID and the name the
// model called) and its arguments, as Toolbox.Call takes them.
type Call struct {
	llm.ToolCall
	Args json.RawMessage
}

// Tools turns the tools array of an llm.Target{Provider: llm.Anthropic},
// as Toolbox.Definitions or llm.RequestTools give it, into the SDK's
// params.
func Tools(defs json.RawMessage) ([]anthropic.ToolUnionParam, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(defs, &items); err != nil {
		return nil, fmt.Errorf("Messages API tools: not a JSON array: %w", err)
	}
	out := make([]anthropic.ToolUnionParam, 0, len(items))
	for i, it := range items {
		v, err := one(it, param.Override[anthropic.ToolUnionParam])
		if err != nil {
			return nil, fmt.Errorf("Messages API tool %d: %w", i, err)
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

// Calls returns the tool_use blocks of a Messages answer.
func Calls(msg *anthropic.Message) []Call {
	var out []Call
	for _, b := range msg.Content {
		if b.Type != "tool_use" {
			continue
		}
		out = append(out, Call{ToolCall: llm.ToolCall{ID: b.ID, Name: b.Name}, Args: b.Input})
	}
	return out
}

// Block turns a result for the Messages API into its tool_result block,
// for the next user message.
func Block(r llm.ToolResult) (anthropic.ContentBlockParamUnion, error) {
	v, err := one(r.Message, param.Override[anthropic.ContentBlockParamUnion])
	if err != nil {
		return v, fmt.Errorf("Messages API tool_result: %w", err)
	}
	return v, nil
}

// Answer runs every tool_use of msg through tb and returns the user
// message of tool_result blocks that answers them, in order. A call the
// Toolbox cannot answer (the server unreachable, the outcome unknown)
// stops it with the Toolbox's error.
func Answer(ctx context.Context, tb *llm.Toolbox, msg *anthropic.Message) (anthropic.MessageParam, error) {
	var blocks []anthropic.ContentBlockParamUnion
	for _, c := range Calls(msg) {
		res, err := tb.Call(ctx, c.ToolCall, c.Args)
		if err != nil {
			return anthropic.MessageParam{}, err
		}
		b, err := Block(res)
		if err != nil {
			return anthropic.MessageParam{}, err
		}
		blocks = append(blocks, b)
	}
	return anthropic.NewUserMessage(blocks...), nil
}
