package reqmeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// ParamHeader is one tool parameter mirrored into a header: the value at
// Path (a chain of properties keys from the schema root) of a call's
// arguments goes out as Mcp-Param-{Name}.
type ParamHeader struct {
	Name string   // the x-mcp-header value
	Path []string // property names from the root of inputSchema
	Type string   // "string", "integer" or "boolean"
}

// HeaderName returns the header the parameter goes out as, canonical.
func (p ParamHeader) HeaderName() string {
	return http.CanonicalHeaderKey(HeaderParamPrefix + p.Name)
}

// InvalidToolError says why a tool definition's x-mcp-header annotations
// break the rules of revision 2026-07-28; such a tool is left out of
// tools/list on Streamable HTTP.
type InvalidToolError struct {
	Tool   string
	Reason string
}

func (e *InvalidToolError) Error() string {
	return fmt.Sprintf("tool %q: invalid x-mcp-header: %s", e.Tool, e.Reason)
}

// keywords whose values are subschemas (objects) or maps or arrays of
// them: an annotation reached through any of these is not statically
// reachable from the root by properties keys alone.
var (
	subschemaKeywords   = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems"}
	schemaListKeywords  = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMapKeywords   = []string{"patternProperties", "$defs", "definitions", "dependentSchemas"}
	maxSchemaWalkDepth  = 64
	errSchemaTooDeep    = errors.New("schema nested deeper than 64 levels")
	errHeaderNotAllowed = errors.New("annotation not statically reachable through properties")
)

// ParamHeaders reads the x-mcp-header annotations of a tool's inputSchema
// and checks them against the rules: a non-empty RFC 9110 token, unique
// regardless of case, on a property of type string, integer or boolean,
// reached from the root through properties keys only (never through items,
// composition, conditionals or $ref). It returns the annotated
// parameters, or an *InvalidToolError.
func ParamHeaders(tool string, inputSchema json.RawMessage) ([]ParamHeader, error) {
	if len(inputSchema) == 0 || !bytes.Contains(inputSchema, []byte(`x-mcp-header`)) {
		return nil, nil // the common case: nothing to read
	}
	var root any
	if err := json.Unmarshal(inputSchema, &root); err != nil {
		return nil, &InvalidToolError{Tool: tool, Reason: "inputSchema is not JSON: " + err.Error()}
	}
	w := paramWalker{seen: map[string]bool{}}
	if err := w.walk(root, nil, true, 0); err != nil {
		return nil, &InvalidToolError{Tool: tool, Reason: err.Error()}
	}
	return w.found, nil
}

type paramWalker struct {
	found []ParamHeader
	seen  map[string]bool // lower-cased names
}

// walk visits schema node at path; reachable says node is the root or was
// reached through properties keys only.
func (w *paramWalker) walk(node any, path []string, reachable bool, depth int) error {
	if depth > maxSchemaWalkDepth {
		return errSchemaTooDeep
	}
	obj, ok := node.(map[string]any)
	if !ok {
		return nil // true/false schemas, or junk: nothing annotated here
	}
	if v, ok := obj["x-mcp-header"]; ok {
		if err := w.annotation(obj, v, path, reachable); err != nil {
			return err
		}
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		for name, sub := range props {
			if err := w.walk(sub, append(path[:len(path):len(path)], name), reachable, depth+1); err != nil {
				return err
			}
		}
	}
	for _, k := range subschemaKeywords {
		if err := w.walk(obj[k], path, false, depth+1); err != nil {
			return err
		}
	}
	for _, k := range schemaListKeywords {
		if list, ok := obj[k].([]any); ok {
			for _, sub := range list {
				if err := w.walk(sub, path, false, depth+1); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range schemaMapKeywords {
		if m, ok := obj[k].(map[string]any); ok {
			for _, sub := range m {
				if err := w.walk(sub, path, false, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (w *paramWalker) annotation(schema map[string]any, v any, path []string, reachable bool) error {
	name, ok := v.(string)
	where := "at the schema root"
	if len(path) > 0 {
		where = "on " + strings.Join(path, ".")
	}
	switch {
	case !ok:
		return fmt.Errorf("%s: the value is not a string", where)
	case !reachable || len(path) == 0:
		return fmt.Errorf("%q %s: %w", name, where, errHeaderNotAllowed)
	case name == "":
		return fmt.Errorf("%s: the value is empty", where)
	case !isToken(name):
		return fmt.Errorf("%q %s: not an HTTP field-name token", name, where)
	case w.seen[strings.ToLower(name)]:
		return fmt.Errorf("%q %s: used twice (names are compared without case)", name, where)
	}
	typ, _ := schema["type"].(string)
	switch typ {
	case "string", "integer", "boolean":
	default:
		return fmt.Errorf("%q %s: type %v is not string, integer or boolean", name, where, schema["type"])
	}
	w.seen[strings.ToLower(name)] = true
	w.found = append(w.found, ParamHeader{Name: name, Path: append([]string(nil), path...), Type: typ})
	return nil
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// maxSafeInteger is 2^53-1, the largest integer a JavaScript number holds
// exactly; x-mcp-header integers must stay within ±maxSafeInteger.
const maxSafeInteger = 1<<53 - 1

// AddParamHeaders reads the value of each parameter in ps from a call's
// arguments (a JSON object) and adds it to h as Mcp-Param-{Name}: a string
// as it is, an integer in decimal, a boolean as true or false, encoded by
// EncodeHeaderValue. A parameter with no value at its path (or null) gets
// no header. An integer out of the safe range, or a value of another type,
// is an error.
func AddParamHeaders(h http.Header, ps []ParamHeader, arguments json.RawMessage) error {
	if len(ps) == 0 || len(bytes.TrimSpace(arguments)) == 0 {
		return nil
	}
	var args any
	dec := json.NewDecoder(bytes.NewReader(arguments))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	for _, p := range ps {
		v, ok, err := p.value(args)
		if err != nil {
			return err
		}
		if ok {
			h[p.HeaderName()] = []string{v}
		}
	}
	return nil
}

func (p ParamHeader) value(args any) (string, bool, error) {
	cur := args
	for _, key := range p.Path {
		obj, isObj := cur.(map[string]any)
		if !isObj {
			return "", false, nil
		}
		if cur, isObj = obj[key]; !isObj {
			return "", false, nil
		}
	}
	switch v := cur.(type) {
	case nil:
		return "", false, nil
	case string:
		return EncodeHeaderValue(v), true, nil
	case bool:
		return strconv.FormatBool(v), true, nil
	case json.Number:
		f, ferr := v.Float64()
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
			return "", false, fmt.Errorf("argument %s = %s: not an integer within ±(2^53-1)", strings.Join(p.Path, "."), v)
		}
		return strconv.FormatInt(int64(f), 10), true, nil
	}
	return "", false, fmt.Errorf("argument %s: a %T cannot go in a header", strings.Join(p.Path, "."), cur)
}
