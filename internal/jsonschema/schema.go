// Package jsonschema checks JSON values against the JSON Schemas that MCP
// tools carry: the input schema of a tool, the requested schema of an
// elicitation. It is shared by mcpcall (arguments typed on a command line)
// and package llm (arguments a model sends).
//
// It covers the keywords tool schemas use: type, enum, const, properties,
// required, additionalProperties, patternProperties, items (a schema or a
// tuple), prefixItems, min/max (and exclusive), minLength/maxLength,
// pattern, minItems/maxItems, allOf/anyOf/oneOf/not, if/then/else, and
// $ref into $defs, definitions or any local JSON Pointer. Unknown keywords
// are ignored, and a schema too deep to check in the budget accepts
// anything (see MaxDepth).
package jsonschema

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

// Schema is a decoded JSON Schema, with the root kept for local $ref.
type Schema struct {
	Root map[string]any
}

// Parse decodes a JSON Schema with numbers kept as json.Number; an empty
// or non-object one accepts anything.
func Parse(raw []byte) Schema {
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&root) != nil {
		root = nil
	}
	return Schema{Root: root}
}

// Property returns the schema of a top-level property, nil when the
// schema does not describe it.
func (s Schema) Property(name string) map[string]any {
	props, _ := s.Resolve(s.Root)["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return s.Resolve(p)
}

// PropertyNames lists the top-level properties, sorted.
func (s Schema) PropertyNames() []string {
	props, _ := s.Resolve(s.Root)["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Required lists the required top-level properties.
func (s Schema) Required() []string { return StringList(s.Resolve(s.Root)["required"]) }

// Resolve follows a local $ref ("#", "#/$defs/X", "#/properties/x/…").
func (s Schema) Resolve(node map[string]any) map[string]any {
	for range 32 { // bounded: refs may loop
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		target, ok := s.Pointer(ref)
		if !ok {
			return node
		}
		node = target
	}
	return node
}

// Pointer returns the subschema a local reference names.
func (s Schema) Pointer(ref string) (map[string]any, bool) {
	if ref == "#" {
		return s.Root, s.Root != nil
	}
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	var cur any = s.Root
	for _, part := range strings.Split(path, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

// Problem is one way a value fails its schema.
type Problem struct {
	// Path names the value: "" for the whole value, "a.b[2]" below it.
	Path string
	// Message says what is wrong, e.g. "expected string, got number 5".
	// It is empty when Missing or Unknown says it all.
	Message string
	// Missing: Path is a required property that is absent.
	Missing bool
	// Unknown: Path is a property the schema does not accept; Known
	// lists the ones its object takes, sorted.
	Unknown bool
	Known   []string
}

// Validate checks a value decoded with UseNumber (json.Number, string,
// bool, nil, []any, map[string]any) and returns one Problem per fault.
// A schema too deep or too wide to check in the budget accepts the value.
func (s Schema) Validate(v any) []Problem { return s.ValidateAt(s.Root, v) }

// ValidateAt is Validate against a subschema of s (its $refs resolved
// against s's root). A nil node accepts anything.
func (s Schema) ValidateAt(node map[string]any, v any) []Problem {
	if node == nil {
		return nil
	}
	var errs []Problem
	c := &checker{Schema: s, steps: MaxSteps}
	c.check(v, node, "", 0, &errs)
	if c.exhausted {
		return nil
	}
	return errs
}

// The check is bounded. A schema may refer to itself for the same value
// ("allOf": [{"$ref": "#"}], an anyOf whose $ref names an ancestor), and
// would be followed for ever; alternatives that share a subschema multiply
// the work at every level they nest. So the check goes at most MaxDepth
// subschemas deep and looks at MaxSteps subschemas in all. A schema that
// needs more is taken as one the check does not know, whole: the value is
// accepted and the server has the last word. (Accepting only the subschema
// past the bound would make the verdict on a loop depend on where it was
// cut: a oneOf whose alternatives refer to their parent would refuse every
// value.)
const (
	MaxDepth = 128
	MaxSteps = 200_000
)

type checker struct {
	Schema
	steps     int
	exhausted bool
}

// JoinPath appends a property name to a path.
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (s *checker) check(v any, node map[string]any, path string, depth int, errs *[]Problem) {
	if depth >= MaxDepth || s.steps <= 0 {
		s.exhausted = true
		return
	}
	s.steps--
	node = s.Resolve(node)
	if node == nil {
		return
	}
	add := func(format string, a ...any) {
		*errs = append(*errs, Problem{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	if types := StringList(node["type"]); len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return HasType(v, t) }) {
		add("expected %s, got %s", strings.Join(types, " or "), Describe(v))
		return
	}
	if enum, ok := node["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return Equal(e, v) }) {
		add("must be one of %s, got %s", Compact(enum), Compact(v))
	}
	if c, ok := node["const"]; ok && !Equal(c, v) {
		add("must be %s, got %s", Compact(c), Compact(v))
	}
	switch v := v.(type) {
	case map[string]any:
		s.checkObject(v, node, path, depth, errs)
	case []any:
		s.checkArray(v, node, path, depth, errs)
	case string:
		n := utf8.RuneCountInString(v)
		if m, ok := Number(node["minLength"]); ok && float64(n) < m {
			add("must be at least %v characters long", m)
		}
		if m, ok := Number(node["maxLength"]); ok && float64(n) > m {
			add("must be at most %v characters long", m)
		}
		if p, ok := node["pattern"].(string); ok {
			if re := compile(p); re != nil && !re.MatchString(v) {
				add("must match the pattern %s", p)
			}
		}
	case json.Number:
		f, _ := v.Float64()
		if m, ok := Number(node["minimum"]); ok && f < m {
			add("must be ≥ %v, got %v", m, v)
		}
		if m, ok := Number(node["maximum"]); ok && f > m {
			add("must be ≤ %v, got %v", m, v)
		}
		if m, ok := Number(node["exclusiveMinimum"]); ok && f <= m {
			add("must be > %v, got %v", m, v)
		}
		if m, ok := Number(node["exclusiveMaximum"]); ok && f >= m {
			add("must be < %v, got %v", m, v)
		}
	}
	s.checkCombinators(v, node, path, depth, errs)
}

// compile compiles a pattern, nil when Go's regexp cannot: such a pattern
// is not checked.
func compile(p string) *regexp.Regexp {
	if len(p) > 4096 {
		return nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil
	}
	return re
}

func (s *checker) checkObject(obj map[string]any, node map[string]any, path string, depth int, errs *[]Problem) {
	props, _ := node["properties"].(map[string]any)
	for _, r := range StringList(node["required"]) {
		if _, ok := obj[r]; !ok {
			*errs = append(*errs, Problem{Path: JoinPath(path, r), Missing: true})
		}
	}
	patterns, _ := node["patternProperties"].(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if p, ok := props[k].(map[string]any); ok {
			s.check(obj[k], p, JoinPath(path, k), depth+1, errs)
			continue
		}
		matched := false
		for pat, sub := range patterns {
			if re := compile(pat); re != nil && re.MatchString(k) {
				matched = true
				if m, ok := sub.(map[string]any); ok {
					s.check(obj[k], m, JoinPath(path, k), depth+1, errs)
				}
			}
		}
		if matched {
			continue
		}
		switch ap := node["additionalProperties"].(type) {
		case bool:
			if !ap {
				names := make([]string, 0, len(props))
				for n := range props {
					names = append(names, n)
				}
				slices.Sort(names)
				*errs = append(*errs, Problem{Path: JoinPath(path, k), Unknown: true, Known: names})
			}
		case map[string]any:
			s.check(obj[k], ap, JoinPath(path, k), depth+1, errs)
		}
	}
}

func (s *checker) checkArray(arr []any, node map[string]any, path string, depth int, errs *[]Problem) {
	if m, ok := Number(node["minItems"]); ok && float64(len(arr)) < m {
		*errs = append(*errs, Problem{Path: path, Message: fmt.Sprintf("must have at least %v items, got %d", m, len(arr))})
	}
	if m, ok := Number(node["maxItems"]); ok && float64(len(arr)) > m {
		*errs = append(*errs, Problem{Path: path, Message: fmt.Sprintf("must have at most %v items, got %d", m, len(arr))})
	}
	prefix, _ := node["prefixItems"].([]any)
	rest := node["items"]
	if tuple, ok := node["items"].([]any); ok { // draft 7 tuples
		prefix, rest = tuple, node["additionalItems"]
	}
	for i, item := range arr {
		p := path + "[" + strconv.Itoa(i) + "]"
		if i < len(prefix) {
			if ps, ok := prefix[i].(map[string]any); ok {
				s.check(item, ps, p, depth+1, errs)
			}
			continue
		}
		switch r := rest.(type) {
		case map[string]any:
			s.check(item, r, p, depth+1, errs)
		case bool:
			if !r {
				*errs = append(*errs, Problem{Path: path, Message: fmt.Sprintf("must have at most %d items, got %d", len(prefix), len(arr))})
				return
			}
		}
	}
}

func (s *checker) checkCombinators(v any, node map[string]any, path string, depth int, errs *[]Problem) {
	if all, ok := node["allOf"].([]any); ok {
		for _, sub := range all {
			if m, ok := sub.(map[string]any); ok {
				s.check(v, m, path, depth+1, errs)
			}
		}
	}
	passes := func(sub any) bool {
		m, ok := sub.(map[string]any)
		if !ok {
			return sub != false
		}
		var sink []Problem
		s.check(v, m, path, depth+1, &sink)
		return len(sink) == 0
	}
	matches := func(list []any) int {
		n := 0
		for _, sub := range list {
			if passes(sub) {
				n++
			}
		}
		return n
	}
	if alts, ok := node["anyOf"].([]any); ok && matches(alts) == 0 {
		*errs = append(*errs, Problem{Path: path, Message: "matches none of the schema's anyOf alternatives"})
	}
	if one, ok := node["oneOf"].([]any); ok && matches(one) != 1 {
		*errs = append(*errs, Problem{Path: path, Message: "must match exactly one of the schema's oneOf alternatives"})
	}
	if not, ok := node["not"]; ok && passes(not) {
		*errs = append(*errs, Problem{Path: path, Message: "must not match the schema under \"not\""})
	}
	if cond, ok := node["if"].(map[string]any); ok {
		branch := node["else"]
		if passes(cond) {
			branch = node["then"]
		}
		if m, ok := branch.(map[string]any); ok {
			s.check(v, m, path, depth+1, errs)
		}
	}
}

// HasType reports whether v, decoded with UseNumber, is of JSON Schema type t.
func HasType(v any, t string) bool {
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

// Describe names the JSON type of v, with the value when it is short.
func Describe(v any) string {
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

// StringList reads a keyword that holds a string or a list of strings.
func StringList(v any) []string {
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

// Number reads a json.Number keyword.
func Number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// Equal compares two decoded JSON values, numbers by value.
func Equal(a, b any) bool {
	na, aok := a.(json.Number)
	nb, bok := b.(json.Number)
	if aok && bok {
		fa, _ := na.Float64()
		fb, _ := nb.Float64()
		return fa == fb
	}
	return reflect.DeepEqual(a, b)
}

// Compact is v as compact JSON.
func Compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
