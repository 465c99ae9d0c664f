package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/internal/jsonschema"
	"github.com/anymcp/anymcp/mcp"
)

// Elicitation: the server asks the user for something. Form mode asks for
// the fields of a flat JSON Schema; URL mode asks the user to visit a page
// (the data never passes through mcpcall). On a terminal mcpcall asks the
// person (on stderr, reading stdin); in a script --elicit gives the answer;
// with neither, it declines, saying so.

// isElicitAction reports whether an --elicit value is an action alone.
func isElicitAction(s string) bool {
	return s == mcp.ElicitAccept || s == mcp.ElicitDecline || s == mcp.ElicitCancel
}

// elicitForm answers a form-mode elicitation/create.
func (c *cli) elicitForm(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	sch := parseSchema(p.RequestedSchema)
	switch e := c.answers.elicit; {
	case e == mcp.ElicitDecline, e == mcp.ElicitCancel:
		return &mcp.ElicitResult{Action: e}, nil
	case e == mcp.ElicitAccept:
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{}}, checkContent(sch, map[string]any{})
	case e != "":
		content, err := decodeObject(json.RawMessage(e))
		if err != nil {
			return nil, fmt.Errorf("--elicit: %w", err)
		}
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: content}, checkContent(sch, content)
	case !c.interactive():
		c.log.Warn("declined the server's request for input: no terminal to ask on (give --elicit JSON|@file|decline)", "message", p.Message)
		return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
	}
	c.prompt.mu.Lock()
	defer c.prompt.mu.Unlock()
	return c.askForm(ctx, p.Message, sch)
}

// checkContent is an error when content does not fit the form.
func checkContent(sch schema, content map[string]any) error {
	if problems := sch.validate(content); len(problems) > 0 {
		return fmt.Errorf("--elicit does not fit the form the server asked for: %s", strings.Join(problems, "; "))
	}
	return nil
}

// askForm asks the person on the terminal: accept, decline or cancel,
// then each field, typed by the schema, with its default.
func (c *cli) askForm(ctx context.Context, message string, sch schema) (*mcp.ElicitResult, error) {
	w := c.stderr
	fmt.Fprintf(w, "\nThe server asks: %s\n", message)
	action, err := c.askAction(ctx, "Answer it? [a]ccept, [d]ecline, [c]ancel (default a): ", mcp.ElicitAccept)
	if err != nil || action != mcp.ElicitAccept {
		return &mcp.ElicitResult{Action: action}, err
	}
	required := sch.required()
	content := map[string]any{}
	for _, name := range sch.propertyNames() {
		prop := sch.resolve(sch.property(name))
		v, ok, err := c.askField(ctx, sch, name, prop, slices.Contains(required, name))
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(w)
			return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
		}
		if err != nil {
			return nil, err
		}
		if ok {
			content[name] = v
		}
	}
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: content}, nil
}

// askAction reads accept, decline or cancel (EOF: cancel).
func (c *cli) askAction(ctx context.Context, question, dflt string) (string, error) {
	for {
		fmt.Fprint(c.stderr, question)
		line, err := c.prompt.readLine(ctx)
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(c.stderr)
			return mcp.ElicitCancel, nil
		}
		if err != nil {
			return "", err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "":
			return dflt, nil
		case "a", "accept", "y", "yes":
			return mcp.ElicitAccept, nil
		case "d", "decline", "n", "no":
			return mcp.ElicitDecline, nil
		case "c", "cancel":
			return mcp.ElicitCancel, nil
		}
	}
}

// askField asks for one field until the answer fits its schema. ok is
// false for an optional field left empty without a default.
func (c *cli) askField(ctx context.Context, sch schema, name string, prop map[string]any, required bool) (any, bool, error) {
	w := c.stderr
	label := name
	if title, _ := prop["title"].(string); title != "" {
		label = title
	}
	types := schemaTypes(sch, prop)
	choices := enumChoices(prop)
	hint := strings.Join(types, "|")
	if len(choices) > 0 {
		hint = "one of"
		for i, ch := range choices {
			hint += fmt.Sprintf(" %d) %s", i+1, ch.label)
		}
	}
	if desc, _ := prop["description"].(string); desc != "" {
		hint = desc + "; " + hint
	}
	dflt, hasDefault := prop["default"]
	prompt := "  " + label + " (" + hint + ")"
	switch {
	case hasDefault:
		prompt += " [" + compactJSON(dflt) + "]"
	case !required:
		prompt += " [optional]"
	}
	prompt += ": "
	single := schema{jsonschema.Schema{Root: map[string]any{"type": "object", "properties": map[string]any{name: prop}}}}
	for {
		fmt.Fprint(w, prompt)
		line, err := c.prompt.readLine(ctx)
		if err != nil {
			return nil, false, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if hasDefault {
				return dflt, true, nil
			}
			if !required {
				return nil, false, nil
			}
			fmt.Fprintln(w, "  (required)")
			continue
		}
		v := fieldValue(sch, prop, choices, line)
		if problems := single.validate(map[string]any{name: v}); len(problems) > 0 {
			why := strings.Join(problems, "; ")
			fmt.Fprintln(w, "  "+strings.TrimPrefix(why, fieldName(name)+": "))
			continue
		}
		return v, true, nil
	}
}

// choice is one value an enum field allows, with what to show for it.
type choice struct {
	value any
	label string
}

// enumChoices lists what an enum field allows: enum (with enumNames), or
// oneOf/anyOf of const with title, as elicitation schemas write them.
func enumChoices(prop map[string]any) []choice {
	var out []choice
	if enum, ok := prop["enum"].([]any); ok {
		names, _ := prop["enumNames"].([]any)
		for i, v := range enum {
			label := fmt.Sprint(v)
			if i < len(names) {
				if n, ok := names[i].(string); ok && n != label {
					label = n + " (" + label + ")"
				}
			}
			out = append(out, choice{v, label})
		}
		return out
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, _ := prop[key].([]any)
		for _, a := range alts {
			m, _ := a.(map[string]any)
			v, ok := m["const"]
			if !ok {
				return nil
			}
			label := fmt.Sprint(v)
			if t, _ := m["title"].(string); t != "" && t != label {
				label = t + " (" + label + ")"
			}
			out = append(out, choice{v, label})
		}
	}
	return out
}

// fieldValue turns what the person typed into the field's value: a
// choice's number or value, yes/no for a boolean, else as key=value
// arguments are typed.
func fieldValue(sch schema, prop map[string]any, choices []choice, text string) any {
	if len(choices) > 0 {
		if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(choices) {
			return choices[n-1].value
		}
		for _, ch := range choices {
			if fmt.Sprint(ch.value) == text {
				return ch.value
			}
		}
	}
	if slices.Contains(schemaTypes(sch, prop), "boolean") {
		switch strings.ToLower(text) {
		case "y", "yes":
			return true
		case "n", "no":
			return false
		}
	}
	return typeValue(sch, prop, text)
}

// elicitURL answers a URL-mode elicitation/create: the URL is shown (its
// host apart, against look-alike names) and never opened by mcpcall; on a
// terminal mcpcall waits until the person has been there.
func (c *cli) elicitURL(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	host := "?"
	if u, err := url.Parse(p.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	switch e := c.answers.elicit; {
	case isElicitAction(e):
		c.log.Warn("the server asks you to visit a page", "message", p.Message, "url", p.URL, "host", host, "answer", e)
		return &mcp.ElicitResult{Action: e}, nil
	case !c.interactive():
		c.log.Warn("declined the server's request to visit a page: no terminal to ask on (give --elicit accept to go on once you have been there)", "message", p.Message, "url", p.URL, "host", host)
		return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
	}
	c.prompt.mu.Lock()
	defer c.prompt.mu.Unlock()
	fmt.Fprintf(c.stderr, "\nThe server asks you to visit a page on %s: %s\n  %s\n", host, p.Message, p.URL)
	action, err := c.askAction(ctx, "Open it in your browser; then press Enter to go on, or [d]ecline, [c]ancel: ", mcp.ElicitAccept)
	return &mcp.ElicitResult{Action: action}, err
}
