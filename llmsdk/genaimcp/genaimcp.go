// Package genaimcp hands an llm.Toolbox's tools to Google's Gen AI Go SDK
// (google.golang.org/genai) and the model's function calls back. The core
// (package llm) emits Gemini's wire JSON; this package turns it into the
// SDK's types, so that the SDK sends what the core emitted: a
// parametersJsonSchema goes as the core's raw JSON, and an OpenAPI-subset
// parameters schema must survive the SDK's Schema type unchanged, or Tools
// says which tool it cannot carry.
//
// A tool loop:
//
//	tools, _ := genaimcp.Tools(tb.Definitions())
//	resp, _ := gc.Models.GenerateContent(ctx, model, contents, &genai.GenerateContentConfig{Tools: tools})
//	contents = append(contents, resp.Candidates[0].Content)
//	answer, _ := genaimcp.Answer(ctx, tb, resp) // a user Content of functionResponse parts
//	contents = append(contents, answer)        // and ask again, until no function calls
package genaimcp

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/genai"

	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/llmsdk/internal/exact"
)

// Call is a function call the model made: the call (its ID, often empty
// with Gemini, and the name the model called) and its arguments, as
// Toolbox.Call takes them.
type Call struct {
	llm.ToolCall
	Args json.RawMessage
}

// declaration is a functionDeclaration as the core writes it.
type declaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJsonSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
}

// Tools turns the tools array of an llm.Target{Provider: llm.Gemini} (or
// GeminiOpenAPI), as Toolbox.Definitions or llm.RequestTools give it
// ([{"functionDeclarations":[...]}]), into the SDK's tools.
func Tools(defs json.RawMessage) ([]*genai.Tool, error) {
	var groups []struct {
		FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
	}
	if err := json.Unmarshal(defs, &groups); err != nil {
		return nil, fmt.Errorf("Gemini tools: not a JSON array of tools: %w", err)
	}
	out := make([]*genai.Tool, 0, len(groups))
	for _, g := range groups {
		t := &genai.Tool{}
		for _, raw := range g.FunctionDeclarations {
			d, err := Declaration(raw)
			if err != nil {
				return nil, err
			}
			t.FunctionDeclarations = append(t.FunctionDeclarations, d)
		}
		out = append(out, t)
	}
	return out, nil
}

// Declaration turns one functionDeclaration of the core into the SDK's.
func Declaration(raw json.RawMessage) (*genai.FunctionDeclaration, error) {
	var d declaration
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("Gemini functionDeclaration: %w", err)
	}
	fd := &genai.FunctionDeclaration{Name: d.Name, Description: d.Description}
	if d.ParametersJsonSchema != nil {
		fd.ParametersJsonSchema = d.ParametersJsonSchema // sent as it is
	}
	if d.Parameters != nil {
		s, ok, err := exact.Decode[*genai.Schema](d.Parameters)
		if err != nil || !ok {
			return nil, fmt.Errorf("Gemini functionDeclaration %q: its OpenAPI parameters do not survive the SDK's Schema type unchanged", d.Name)
		}
		fd.Parameters = s
	}
	back, err := json.Marshal(fd)
	if err != nil || !exact.Equal(back, raw) {
		return nil, fmt.Errorf("Gemini functionDeclaration %q: has fields the SDK's type does not carry", d.Name)
	}
	return fd, nil
}

// Calls returns the function calls of a generateContent answer.
func Calls(resp *genai.GenerateContentResponse) ([]Call, error) {
	var out []Call
	for _, fc := range resp.FunctionCalls() {
		args := json.RawMessage(`{}`)
		if fc.Args != nil {
			b, err := json.Marshal(fc.Args)
			if err != nil {
				return nil, fmt.Errorf("Gemini function call %q: its arguments: %w", fc.Name, err)
			}
			args = b
		}
		out = append(out, Call{ToolCall: llm.ToolCall{ID: fc.ID, Name: fc.Name}, Args: args})
	}
	return out, nil
}

// Part turns a result for Gemini into its functionResponse part, for the
// next user Content.
func Part(r llm.ToolResult) (*genai.Part, error) {
	p, ok, err := exact.Decode[*genai.Part](r.Message)
	if err != nil {
		return nil, fmt.Errorf("Gemini functionResponse part: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("Gemini functionResponse part: has fields the SDK's type does not carry")
	}
	return p, nil
}

// Answer runs every function call of resp through tb and returns the user
// Content of functionResponse parts that answers them, in order. A call
// the Toolbox cannot answer (the server unreachable, the outcome
// unknown) stops it with the Toolbox's error.
func Answer(ctx context.Context, tb *llm.Toolbox, resp *genai.GenerateContentResponse) (*genai.Content, error) {
	calls, err := Calls(resp)
	if err != nil {
		return nil, err
	}
	var parts []*genai.Part
	for _, c := range calls {
		res, err := tb.Call(ctx, c.ToolCall, c.Args)
		if err != nil {
			return nil, err
		}
		p, err := Part(res)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return genai.NewContentFromParts(parts, genai.RoleUser), nil
}
