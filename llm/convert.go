package llm

import (
	"encoding/json"

	"github.com/anymcp/anymcp/mcp"
)

// convert is the first, simple conversion: the schema as sent, its root
// made an object with properties, wrapped in the provider's tool object.
func convert(name string, t mcp.Tool, target Target) Tool {
	out := Tool{Name: name, Original: t, Target: target, Mode: ModeLoose}
	var schema map[string]any
	if json.Unmarshal(t.InputSchema, &schema) != nil || schema == nil {
		schema = map[string]any{}
	}
	if schema["type"] != "object" {
		schema["type"] = "object"
	}
	if _, ok := schema["properties"]; !ok {
		schema["properties"] = map[string]any{}
	}
	def, err := wrap(target, name, t.Description, schema, false)
	if err != nil {
		out.Mode = ModeOmitted
		out.Changes = append(out.Changes, Change{Action: Omitted, Why: err.Error()})
		return out
	}
	out.Definition = def
	return out
}

// wrap builds the provider's tool object around a converted schema.
func wrap(target Target, name, description string, params map[string]any, strict bool) (json.RawMessage, error) {
	var v any
	switch target.Provider {
	case OpenAIResponses:
		v = struct {
			Type        string         `json:"type"`
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters"`
			Strict      bool           `json:"strict"`
		}{"function", name, description, params, strict}
	case Anthropic:
		v = struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			InputSchema map[string]any `json:"input_schema"`
			Strict      bool           `json:"strict,omitempty"`
		}{name, description, params, strict}
	case Gemini:
		v = struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parametersJsonSchema"`
		}{name, description, params}
	case GeminiOpenAPI:
		v = struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters"`
		}{name, description, params}
	default: // OpenAIChat, OpenAICompatible
		type function struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters"`
			Strict      bool           `json:"strict,omitempty"`
		}
		v = struct {
			Type     string   `json:"type"`
			Function function `json:"function"`
		}{"function", function{name, description, params, strict}}
	}
	return json.Marshal(v)
}

func uniqueName(name string, target Target, used map[string]bool) string { return name }
func renameWhy(from, to string) string                                   { return "renamed " + from + " to " + to }
func withoutRename(c []Change) []Change {
	out := c[:0:0]
	for _, x := range c {
		if x.Action != Renamed {
			out = append(out, x)
		}
	}
	return out
}
