package llm

import (
	"slices"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/internal/jsonschema"
)

// maxShapeDepth bounds how deep Shape walks a model's arguments.
const maxShapeDepth = 64

// shapeValue repairs, in place, what the original schema refuses and a
// model commonly sends: nulls for optional properties (strict mode makes
// every property required and nullable) and objects or arrays sent as
// JSON strings. ptr is the JSON Pointer of v in the arguments.
func shapeValue(sch jsonschema.Schema, node map[string]any, v any, ptr string, repairs *[]Change, depth int) {
	node = sch.Resolve(node)
	if node == nil || depth >= maxShapeDepth {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := node["properties"].(map[string]any)
		required := jsonschema.StringList(node["required"])
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub, _ := props[k].(map[string]any)
			if sub == nil {
				if ap, ok := node["additionalProperties"].(map[string]any); ok {
					sub = ap
				} else {
					continue
				}
			}
			p := ptr + "/" + escapePointer(k)
			val := v[k]
			if val == nil && !slices.Contains(required, k) && len(sch.ValidateAt(sub, nil)) > 0 {
				delete(v, k)
				*repairs = append(*repairs, Change{Path: p, Action: RemovedNull, Why: "null for an optional property whose schema refuses null: left out, as the server expects"})
				continue
			}
			if fixed, ok := parseEmbedded(sch, sub, val); ok {
				v[k] = fixed
				val = fixed
				*repairs = append(*repairs, Change{Path: p, Action: ParsedString, Why: "a JSON string where the schema wants " + kindOf(fixed) + ": parsed"})
			}
			shapeValue(sch, sub, val, p, repairs, depth+1)
		}
	case []any:
		prefix, _ := node["prefixItems"].([]any)
		rest, _ := node["items"].(map[string]any)
		if tuple, ok := node["items"].([]any); ok {
			prefix, rest = tuple, nil
		}
		for i, item := range v {
			var sub map[string]any
			if i < len(prefix) {
				sub, _ = prefix[i].(map[string]any)
			} else {
				sub = rest
			}
			if sub == nil {
				continue
			}
			p := ptr + "/" + strconv.Itoa(i)
			if fixed, ok := parseEmbedded(sch, sub, item); ok {
				v[i] = fixed
				item = fixed
				*repairs = append(*repairs, Change{Path: p, Action: ParsedString, Why: "a JSON string where the schema wants " + kindOf(fixed) + ": parsed"})
			}
			shapeValue(sch, sub, item, p, repairs, depth+1)
		}
	}
}

// parseEmbedded returns the object or array a string holds, when the
// schema refuses the string and accepts an object or array, and the
// string parses to exactly one JSON object or array of the type the
// schema wants.
func parseEmbedded(sch jsonschema.Schema, node map[string]any, v any) (any, bool) {
	s, ok := v.(string)
	if !ok || len(sch.ValidateAt(node, s)) == 0 {
		return nil, false
	}
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	parsed, err := decodeValue([]byte(t))
	if err != nil {
		return nil, false
	}
	want := jsonschema.StringList(sch.Resolve(node)["type"])
	if len(want) > 0 && !slices.ContainsFunc(want, func(w string) bool { return jsonschema.HasType(parsed, w) }) {
		return nil, false
	}
	return parsed, true
}

func kindOf(v any) string {
	if _, ok := v.([]any); ok {
		return "an array"
	}
	return "an object"
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
