package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/internal/jsonschema"
)

// ArgumentError says why a model's arguments do not fit the tool's
// original input schema. Its Error text is written for the model: hand it
// back as the tool's result so that the model can correct the call.
type ArgumentError struct {
	// Tool is the name the model called.
	Tool string
	// Problems lists each fault with its place, first to last.
	Problems []ArgumentProblem
}

// ArgumentProblem is one fault in a model's arguments.
type ArgumentProblem struct {
	// Path names the value: "arguments" for the whole object,
	// "arguments.a.b[2]" below it.
	Path string `json:"path"`
	// Message says what is wrong, e.g. "expected string, got number 5".
	Message string `json:"message"`
}

func (e *ArgumentError) Error() string {
	var b strings.Builder
	b.WriteString("the arguments for tool ")
	b.WriteString(strconv.Quote(e.Tool))
	b.WriteString(" do not fit its input schema; fix these and call it again:")
	for _, p := range e.Problems {
		b.WriteString("\n- ")
		b.WriteString(p.Path)
		b.WriteString(": ")
		b.WriteString(p.Message)
	}
	return b.String()
}

// Shaped is a model's arguments made ready for tools/call, and what was
// repaired on the way.
type Shaped struct {
	// Arguments is the JSON object to send as the call's arguments.
	Arguments json.RawMessage
	// Repairs lists each change made to what the model sent (a null that
	// strict mode forced, removed; a JSON string parsed into the object
	// the schema wants). Each Change's Path is a JSON Pointer into the
	// arguments.
	Repairs []Change
}

// Arguments checks the arguments a model sent for the tool against the
// tool's original input schema, shapes them back (see Shape) and returns
// the object to send. Its error is an *ArgumentError.
func (t *Tool) Arguments(fromModel []byte) (json.RawMessage, error) {
	s, err := t.Shape(fromModel)
	return s.Arguments, err
}

// Shape is Arguments with the report of what was repaired. Only what the
// original schema refuses is repaired, and only when the repair is
// unambiguous: a null for a property the schema does not require and
// whose schema refuses null is removed (strict mode makes every property
// required and nullable); a string where the schema wants an object or an
// array, and refuses a string, is replaced by the JSON it holds when it
// parses to exactly that. The result then must pass the original schema,
// or the error lists every problem left.
func (t *Tool) Shape(fromModel []byte) (Shaped, error) {
	fail := func(msg string) (Shaped, error) {
		return Shaped{}, &ArgumentError{Tool: t.Name, Problems: []ArgumentProblem{{Path: "arguments", Message: msg}}}
	}
	trimmed := bytes.TrimSpace(fromModel)
	if len(trimmed) == 0 {
		trimmed = []byte("{}") // no arguments at all: an empty object
	}
	v, err := decodeValue(trimmed)
	if err != nil {
		return fail("not valid JSON (" + err.Error() + "); send one JSON object")
	}
	if s, ok := v.(string); ok { // the whole object sent as a JSON string
		if inner, err := decodeValue([]byte(s)); err == nil {
			if _, ok := inner.(map[string]any); ok {
				v = inner
			}
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fail("expected a JSON object, got " + jsonschema.Describe(v))
	}
	sch := jsonschema.Parse(t.Original.InputSchema)
	var repairs []Change
	shapeValue(sch, sch.Root, obj, "", &repairs, 0)
	if problems := sch.Validate(obj); len(problems) > 0 {
		e := &ArgumentError{Tool: t.Name}
		for _, p := range problems {
			e.Problems = append(e.Problems, describeProblem(p))
		}
		return Shaped{}, e
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return fail("could not be encoded again: " + err.Error())
	}
	return Shaped{Arguments: out, Repairs: repairs}, nil
}

func describeProblem(p jsonschema.Problem) ArgumentProblem {
	path := "arguments"
	if p.Path != "" {
		if p.Path[0] == '[' {
			path += p.Path
		} else {
			path += "." + p.Path
		}
	}
	switch {
	case p.Missing:
		return ArgumentProblem{Path: path, Message: "required, but missing"}
	case p.Unknown:
		msg := "not a parameter of this tool; remove it"
		if len(p.Known) > 0 {
			msg += " (this object takes " + strings.Join(p.Known, ", ") + ")"
		}
		return ArgumentProblem{Path: path, Message: msg}
	}
	return ArgumentProblem{Path: path, Message: p.Message}
}

func decodeValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}
