package testservers

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

var promptList = []mcp.Prompt{
	{
		Name:        "greet",
		Title:       "Greet",
		Description: "Asks for a greeting of someone, in a style.",
		Arguments: []mcp.PromptArgument{
			{Name: "name", Description: "who to greet", Required: true},
			{Name: "style", Description: "formal, friendly or funny"},
		},
	},
	{
		Name:        "simple",
		Title:       "Simple",
		Description: "A prompt without arguments.",
	},
}

// greetStyles are the completions of greet's style argument.
var greetStyles = []string{"formal", "friendly", "funny"}

// itemIDs is how many ids the completion of test://items/{id} offers.
const itemIDs = 20

func (ss *Session) listPrompts(params json.RawMessage, rq *reqInfo) (any, error) {
	list := promptList
	if rq.era == eraStateless {
		list = statelessPromptList
	}
	items, next, err := page(params, list, ss.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return mcp.ListPromptsResult{Prompts: items, NextCursor: next}, nil
}

func (ss *Session) getPrompt(ctx context.Context, id jsonrpc.ID, params json.RawMessage, rq *reqInfo) (any, error) {
	var p struct {
		mcp.GetPromptParams
		mrtrParams
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if rq.era == eraStateless {
		switch p.Name {
		case "ask_name":
			c := ss.newCall(ctx, id, rq, "prompts/get", p.Name, p.mrtrParams)
			if err := c.need(capElicitForm); err != nil {
				return nil, err
			}
			res, err := ss.askName(c)
			if _, ok := errors.AsType[*inputRequired](err); ok {
				ss.srv.count(func(st *Stats) { st.InputRequired[p.Name]++ })
			}
			return res, err
		case NonASCIIPromptName:
			return mcp.GetPromptResult{
				Description: "Grüße",
				Messages:    []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("Sag grüße.")}},
			}, nil
		}
	}
	switch p.Name {
	case "greet":
		name := p.Arguments["name"]
		if name == "" {
			return nil, invalidParams("prompts/get greet: argument name is required")
		}
		style := p.Arguments["style"]
		if style == "" {
			style = "friendly"
		}
		return mcp.GetPromptResult{
			Description: "Greeting for " + name,
			Messages: []mcp.PromptMessage{{
				Role:    "user",
				Content: mcp.TextContent("Please greet " + name + " in a " + style + " style."),
			}},
		}, nil
	case "simple":
		return mcp.GetPromptResult{
			Description: "A simple prompt",
			Messages:    []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("Say hello.")}},
		}, nil
	case "":
		return nil, invalidParams("prompts/get: name is required")
	default:
		return nil, invalidParams("unknown prompt: " + p.Name)
	}
}

func (ss *Session) complete(params json.RawMessage) (any, error) {
	var p mcp.CompleteParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	var candidates []string
	switch {
	case p.Ref.Type == mcp.RefPrompt && p.Ref.Name == "greet":
		if p.Argument.Name == "style" {
			candidates = greetStyles
		}
	case p.Ref.Type == mcp.RefPrompt && p.Ref.Name == "simple":
	case p.Ref.Type == mcp.RefPrompt:
		return nil, invalidParams("completion/complete: unknown prompt " + strconv.Quote(p.Ref.Name))
	case p.Ref.Type == mcp.RefResource && p.Ref.URI == ItemTemplate:
		if p.Argument.Name == "id" {
			for i := 1; i <= itemIDs; i++ {
				candidates = append(candidates, strconv.Itoa(i))
			}
		}
	case p.Ref.Type == mcp.RefResource:
		return nil, invalidParams("completion/complete: unknown resource template " + strconv.Quote(p.Ref.URI))
	default:
		return nil, invalidParams("completion/complete: unknown ref type " + strconv.Quote(p.Ref.Type))
	}
	values := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(c, p.Argument.Value) {
			values = append(values, c)
		}
	}
	total := len(values)
	return mcp.CompleteResult{Completion: mcp.Completion{Values: values, Total: &total}}, nil
}
