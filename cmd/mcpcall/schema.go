package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// schema is a tool's inputSchema, decoded, with the root kept for local
// $ref. It checks arguments before they are sent, so that a mistake is
// named by its field instead of being found by the server. It covers the
// keywords tool schemas use: type, enum, const, properties, required,
// additionalProperties, items, prefixItems, min/max (and exclusive),
// minLength/maxLength, pattern, minItems/maxItems, allOf/anyOf/oneOf, $ref
// into $defs or definitions. Unknown keywords are ignored, and a schema too
// deep to check in the budget accepts anything (see maxCheckDepth).
type schema struct {
	root map[string]any
}

// parseSchema decodes a JSON Schema; an empty or non-object one accepts
// anything.
func parseSchema(raw json.RawMessage) schema {
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&root) != nil {
		root = nil
	}
	return schema{root: root}
}

// property returns the schema of a top-level property, nil when the
// schema does not describe it.
func (s schema) property(name string) map[string]any {
	props, _ := s.resolve(s.root)["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return s.resolve(p)
}

// propertyNames lists the top-level properties, sorted.
func (s schema) propertyNames() []string {
	props, _ := s.resolve(s.root)["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// required lists the required top-level properties.
func (s schema) required() []string { return stringList(s.resolve(s.root)["required"]) }

// resolve follows a local $ref ("#/$defs/X", "#/definitions/X", "#").
func (s schema) resolve(node map[string]any) map[string]any {
	for range 32 { // bounded: refs may loop
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		target, ok := s.pointer(ref)
		if !ok {
			return node
		}
		node = target
	}
	return node
}

func (s schema) pointer(ref string) (map[string]any, bool) {
	if ref == "#" {
		return s.root, true
	}
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	var cur any = s.root
	for _, part := range strings.Split(path, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

// validate checks the arguments object against the schema and returns one
// message per problem, each naming its field.
func (s schema) validate(args map[string]any) []string {
	if s.root == nil {
		return nil
	}
	var errs []string
	c := &checker{schema: s, steps: maxCheckSteps}
	c.check(args, s.root, "", 0, &errs)
	if c.exhausted {
		return nil
	}
	return errs
}

// The check is bounded. A schema may refer to itself for the same value
// ("allOf": [{"$ref": "#"}], an anyOf whose $ref names an ancestor), and
// would be followed for ever, until the Go runtime aborts mcpcall with a
// stack overflow; and alternatives that share a subschema multiply the work
// at every level they nest. So the check goes at most maxCheckDepth
// subschemas deep and looks at maxCheckSteps subschemas in all. A schema
// that needs more is taken as one the check does not know, whole: the
// arguments are sent as they are and the server has the last word, as with
// --no-validate. (Accepting only the subschema past the bound would make
// the verdict on a loop depend on where it was cut: a oneOf whose
// alternatives refer to their parent would refuse every value.)
const (
	maxCheckDepth = 128
	maxCheckSteps = 200_000
)

// checker is one validation under way: the schema, the subschemas the
// budget still allows, and whether it ran out.
type checker struct {
	schema
	steps     int
	exhausted bool
}

// fieldName names a path for a person: the top level is "arguments".
func fieldName(path string) string {
	if path == "" {
		return "arguments"
	}
	return "argument " + strconv.Quote(path)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (s *checker) check(v any, node map[string]any, path string, depth int, errs *[]string) {
	if depth >= maxCheckDepth || s.steps <= 0 {
		s.exhausted = true
		return
	}
	s.steps--
	node = s.resolve(node)
	if node == nil {
		return
	}
	add := func(format string, a ...any) {
		*errs = append(*errs, fieldName(path)+": "+fmt.Sprintf(format, a...))
	}
	if types := stringList(node["type"]); len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return hasType(v, t) }) {
		add("expected %s, got %s", strings.Join(types, " or "), describe(v))
		return
	}
	if enum, ok := node["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return jsonEqual(e, v) }) {
		add("must be one of %s, got %s", compactJSON(enum), compactJSON(v))
	}
	if c, ok := node["const"]; ok && !jsonEqual(c, v) {
		add("must be %s, got %s", compactJSON(c), compactJSON(v))
	}
	switch v := v.(type) {
	case map[string]any:
		s.checkObject(v, node, path, depth, errs)
	case []any:
		s.checkArray(v, node, path, depth, errs)
	case string:
		n := utf8.RuneCountInString(v)
		if m, ok := number(node["minLength"]); ok && float64(n) < m {
			add("must be at least %v characters long", m)
		}
		if m, ok := number(node["maxLength"]); ok && float64(n) > m {
			add("must be at most %v characters long", m)
		}
		if p, ok := node["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err == nil && !re.MatchString(v) {
				add("must match the pattern %s", p)
			}
		}
	case json.Number:
		f, _ := v.Float64()
		if m, ok := number(node["minimum"]); ok && f < m {
			add("must be ≥ %v, got %v", m, v)
		}
		if m, ok := number(node["maximum"]); ok && f > m {
			add("must be ≤ %v, got %v", m, v)
		}
		if m, ok := number(node["exclusiveMinimum"]); ok && f <= m {
			add("must be > %v, got %v", m, v)
		}
		if m, ok := number(node["exclusiveMaximum"]); ok && f >= m {
			add("must be < %v, got %v", m, v)
		}
	}
	s.checkCombinators(v, node, path, depth, errs)
}

func (s *checker) checkObject(obj map[string]any, node map[string]any, path string, depth int, errs *[]string) {
	props, _ := node["properties"].(map[string]any)
	for _, r := range stringList(node["required"]) {
		if _, ok := obj[r]; !ok {
			*errs = append(*errs, fieldName(joinPath(path, r))+" is required")
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if p, ok := props[k].(map[string]any); ok {
			s.check(obj[k], p, joinPath(path, k), depth+1, errs)
			continue
		}
		switch ap := node["additionalProperties"].(type) {
		case bool:
			if !ap {
				msg := fieldName(joinPath(path, k)) + ": not accepted by the schema"
				names := make([]string, 0, len(props))
				for n := range props {
					names = append(names, n)
				}
				slices.Sort(names)
				if near := closest(k, names, 3); len(near) > 0 {
					msg += "; did you mean " + quoteList(near) + "?"
				} else if len(names) > 0 {
					msg += " (it takes " + strings.Join(names, ", ") + ")"
				}
				*errs = append(*errs, msg)
			}
		case map[string]any:
			s.check(obj[k], ap, joinPath(path, k), depth+1, errs)
		}
	}
}

func (s *checker) checkArray(arr []any, node map[string]any, path string, depth int, errs *[]string) {
	if m, ok := number(node["minItems"]); ok && float64(len(arr)) < m {
		*errs = append(*errs, fmt.Sprintf("%s: must have at least %v items, got %d", fieldName(path), m, len(arr)))
	}
	if m, ok := number(node["maxItems"]); ok && float64(len(arr)) > m {
		*errs = append(*errs, fmt.Sprintf("%s: must have at most %v items, got %d", fieldName(path), m, len(arr)))
	}
	prefix, _ := node["prefixItems"].([]any)
	for i, item := range arr {
		p := path + "[" + strconv.Itoa(i) + "]"
		if i < len(prefix) {
			if ps, ok := prefix[i].(map[string]any); ok {
				s.check(item, ps, p, depth+1, errs)
			}
			continue
		}
		if items, ok := node["items"].(map[string]any); ok {
			s.check(item, items, p, depth+1, errs)
		}
	}
}

func (s *checker) checkCombinators(v any, node map[string]any, path string, depth int, errs *[]string) {
	if all, ok := node["allOf"].([]any); ok {
		for _, sub := range all {
			if m, ok := sub.(map[string]any); ok {
				s.check(v, m, path, depth+1, errs)
			}
		}
	}
	matches := func(list []any) int {
		n := 0
		for _, sub := range list {
			if m, ok := sub.(map[string]any); ok {
				var sink []string
				s.check(v, m, path, depth+1, &sink)
				if len(sink) == 0 {
					n++
				}
			}
		}
		return n
	}
	if alts, ok := node["anyOf"].([]any); ok && matches(alts) == 0 {
		*errs = append(*errs, fieldName(path)+": matches none of the schema's anyOf alternatives")
	}
	if one, ok := node["oneOf"].([]any); ok && matches(one) != 1 {
		*errs = append(*errs, fieldName(path)+": must match exactly one of the schema's oneOf alternatives")
	}
}

// hasType reports whether v, decoded with UseNumber, is of JSON Schema type t.
func hasType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return true // a type this check does not know: accept
}

// describe names the JSON type of v, with the value when it is short.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 40 {
			return "a string"
		}
		return "string " + strconv.Quote(v)
	case json.Number:
		return "number " + v.String()
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// jsonEqual compares two decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	na, aok := a.(json.Number)
	nb, bok := b.(json.Number)
	if aok && bok {
		fa, _ := na.Float64()
		fb, _ := nb.Float64()
		return fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
