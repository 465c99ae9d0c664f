package main

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/internal/jsonschema"
)

// schema is a tool's inputSchema, decoded, with the root kept for local
// $ref. It checks arguments before they are sent, so that a mistake is
// named by its field instead of being found by the server. The checker is
// internal/jsonschema, shared with package llm: the keywords it covers and
// its bounds (a schema too deep to check accepts anything) are written
// there.
type schema struct {
	jsonschema.Schema
}

// maxCheckDepth bounds how deep a schema is followed (see jsonschema.MaxDepth).
const maxCheckDepth = jsonschema.MaxDepth

// parseSchema decodes a JSON Schema; an empty or non-object one accepts
// anything.
func parseSchema(raw json.RawMessage) schema { return schema{jsonschema.Parse(raw)} }

// property returns the schema of a top-level property, nil when the
// schema does not describe it.
func (s schema) property(name string) map[string]any { return s.Property(name) }

// propertyNames lists the top-level properties, sorted.
func (s schema) propertyNames() []string { return s.PropertyNames() }

// required lists the required top-level properties.
func (s schema) required() []string { return s.Required() }

// resolve follows a local $ref.
func (s schema) resolve(node map[string]any) map[string]any { return s.Resolve(node) }

// validate checks the arguments object against the schema and returns one
// message per problem, each naming its field.
func (s schema) validate(args map[string]any) []string {
	problems := s.Validate(args)
	if len(problems) == 0 {
		return nil
	}
	errs := make([]string, 0, len(problems))
	for _, p := range problems {
		switch {
		case p.Missing:
			errs = append(errs, fieldName(p.Path)+" is required")
		case p.Unknown:
			msg := fieldName(p.Path) + ": not accepted by the schema"
			if near := closest(lastKey(p.Path), p.Known, 3); len(near) > 0 {
				msg += "; did you mean " + quoteList(near) + "?"
			} else if len(p.Known) > 0 {
				msg += " (it takes " + joinNames(p.Known) + ")"
			}
			errs = append(errs, msg)
		default:
			errs = append(errs, fieldName(p.Path)+": "+p.Message)
		}
	}
	return errs
}

// lastKey is the property name a path ends with.
func lastKey(path string) string {
	return path[strings.LastIndexByte(path, '.')+1:]
}

func joinNames(names []string) string { return strings.Join(names, ", ") }

// fieldName names a path for a person: the top level is "arguments".
func fieldName(path string) string {
	if path == "" {
		return "arguments"
	}
	return "argument " + strconv.Quote(path)
}

func hasType(v any, t string) bool { return jsonschema.HasType(v, t) }
func stringList(v any) []string    { return jsonschema.StringList(v) }
func jsonEqual(a, b any) bool      { return jsonschema.Equal(a, b) }
func compactJSON(v any) string     { return jsonschema.Compact(v) }
