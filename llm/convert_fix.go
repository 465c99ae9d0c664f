package llm

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/anymcp/anymcp/internal/jsonschema"
)

// fixTypes writes the type list as the target spells it.
func (c *converter) fixTypes(out map[string]any, types []string, path string) {
	if len(types) == 0 {
		return
	}
	types = slices.Compact(types)
	if len(types) == 1 {
		out["type"] = types[0]
		return
	}
	if c.sr.typeArrays {
		out["type"] = toAny(types)
		return
	}
	nonNull := slices.DeleteFunc(slices.Clone(types), func(t string) bool { return t == "null" })
	if len(nonNull) < len(types) && c.sr.nullable {
		out["nullable"] = true
		c.note(path+"/type", Rewritten, "null in the type list spelled nullable: true")
	}
	if len(nonNull) == 1 {
		out["type"] = nonNull[0]
		return
	}
	alts := make([]any, 0, len(nonNull))
	for _, t := range nonNull {
		alts = append(alts, map[string]any{"type": t})
	}
	if _, ok := out["anyOf"]; ok {
		c.note(path+"/type", Dropped, "type list %s beside anyOf dropped", jsonschema.Compact(toAny(types)))
		return
	}
	out["anyOf"] = alts
	c.note(path+"/type", Rewritten, "type list %s written as anyOf of single types", jsonschema.Compact(toAny(types)))
}

func (c *converter) fixFormat(out map[string]any, path string, moved *[]string) {
	f, ok := out["format"].(string)
	if !ok || c.sr.formats == nil {
		if _, present := out["format"]; present && !ok {
			delete(out, "format")
			c.note(path+"/format", Dropped, "format is not a string")
		}
		return
	}
	t, _ := out["type"].(string)
	if c.sr.formats[""][f] || c.sr.formats[t][f] {
		return
	}
	delete(out, "format")
	*moved = append(*moved, "format: "+f)
	c.note(path+"/format", Moved, "format %q is not one the target takes: moved into the description", f)
}

func (c *converter) fixEnum(out map[string]any, path string, moved *[]string) {
	list, ok := out["enum"].([]any)
	if !ok {
		return
	}
	if len(list) == 0 {
		delete(out, "enum")
		c.note(path+"/enum", Dropped, "an empty enum")
		if c.sr.typed {
			c.fail("an empty enum at %s takes no value", orRoot(path))
		}
		return
	}
	if !c.sr.enumStrings {
		if c.sr.enumPrimitives {
			for _, v := range list {
				switch v.(type) {
				case map[string]any, []any:
					c.fail("enum at %s holds objects or arrays", orRoot(path))
				}
			}
		}
		return
	}
	t, _ := out["type"].(string)
	allStrings := true
	for _, v := range list {
		if _, ok := v.(string); !ok {
			allStrings = false
		}
	}
	if allStrings && (t == "string" || t == "") {
		out["type"] = "string"
		return
	}
	delete(out, "enum")
	*moved = append(*moved, "one of: "+jsonschema.Compact(list))
	c.note(path+"/enum", Moved, "enum of non-strings (or on a non-string type) is not taken by the target: moved into the description")
}

// fixShape applies the structural rules: objects with properties (or
// JSON text), arrays with items, strict objects closed and required.
func (c *converter) fixShape(out map[string]any, path string, isRoot bool) {
	types := jsonschema.StringList(out["type"])
	_, hasProps := out["properties"]
	if slices.Contains(types, "object") || (len(types) == 0 && hasProps) {
		c.fixObject(out, path, isRoot)
		types = jsonschema.StringList(out["type"]) // JSON text now, perhaps
	}
	t := ""
	if len(types) > 0 {
		t = types[0]
	}
	if slices.Contains(types, "array") {
		if _, ok := out["items"]; !ok {
			if _, tuple := out["prefixItems"]; !tuple && c.sr.arrayItems || c.sr.nonEmptyObjects {
				if c.sr.typed {
					c.fail("the array at %s does not say what its items are", orRoot(path))
				} else if c.sr.nonEmptyObjects {
					asJSONText(out, "an array")
					c.note(path, Rewritten, "an array whose items are not described is taken as JSON text (the target needs items)")
					return
				} else {
					out["items"] = map[string]any{}
					c.note(path, Rewritten, "an array whose items are not described: items {} added (the target needs items)")
				}
			}
		}
	}
	if c.sr.typed && t == "" && out["anyOf"] == nil && out["enum"] == nil && out["const"] == nil && out["$ref"] == nil {
		c.fail("the schema at %s takes any value, which strict mode cannot express", orRoot(path))
	}
	if c.sr.nonEmptyObjects && t == "" && out["anyOf"] == nil && out["enum"] == nil {
		asJSONText(out, "any value")
		c.note(path, Rewritten, "a value of any type is taken as JSON text (the target needs a type)")
	}
}

func (c *converter) fixObject(out map[string]any, path string, isRoot bool) {
	props, _ := out["properties"].(map[string]any)
	ap, hasAP := out["additionalProperties"]
	if c.sr.nonEmptyObjects {
		if hasAP {
			delete(out, "additionalProperties")
			if _, isSchema := ap.(map[string]any); isSchema || ap == true {
				if len(props) > 0 {
					c.note(path+"/additionalProperties", Dropped, "additionalProperties is not taken by the target: extra keys are not described to the model")
				}
			} else {
				c.note(path+"/additionalProperties", Dropped, "additionalProperties is not taken by the target")
			}
		}
		if len(props) == 0 && !isRoot {
			asJSONText(out, "an object")
			c.note(path, Rewritten, "an object whose properties are not listed is taken as JSON text (the target needs properties)")
			return
		}
	}
	if !c.sr.closed {
		if req, ok := out["required"].([]any); ok {
			kept := req[:0:0]
			for _, r := range req {
				if _, ok := props[r.(string)]; ok || !c.sr.nonEmptyObjects {
					kept = append(kept, r)
				}
			}
			if len(kept) < len(req) {
				c.note(path+"/required", Dropped, "required names a property the object does not list")
			}
			if len(kept) == 0 {
				delete(out, "required")
			} else {
				out["required"] = kept
			}
		}
		return
	}
	// strict: closed, and with allRequired every property required
	if _, isSchema := ap.(map[string]any); isSchema && !isEmptySchema(ap) {
		c.fail("the object at %s is a map (additionalProperties is a schema), which strict mode cannot express", orRoot(path))
		return
	}
	if len(props) == 0 && !isRoot && ap != false {
		c.fail("the object at %s lists no properties and takes any keys, which strict mode cannot express", orRoot(path))
		return
	}
	if _, ok := out["patternProperties"]; ok {
		c.fail("the object at %s has patternProperties, which strict mode cannot express", orRoot(path))
		return
	}
	if ap != false {
		out["additionalProperties"] = false
		c.note(path, Closed, "additionalProperties: false added (strict mode)")
	}
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
	}
	req := jsonschema.StringList(out["required"])
	if kept := slices.DeleteFunc(slices.Clone(req), func(r string) bool { _, ok := props[r]; return !ok }); len(kept) < len(req) {
		c.note(path+"/required", Dropped, "required names a property the object does not list (strict mode lists only its own)")
		req = kept
	}
	if !c.sr.allRequired {
		if len(req) > 0 {
			out["required"] = toAny(req)
		} else {
			delete(out, "required")
		}
		return
	}
	var made []string
	for _, name := range sortedKeys(props) {
		if slices.Contains(req, name) {
			continue
		}
		props[name] = nullable(props[name].(map[string]any))
		req = append(req, name)
		made = append(made, name)
	}
	out["required"] = toAny(req)
	if len(made) > 0 {
		c.note(path, MadeRequired, "optional %s made required and nullable (strict mode); Shape removes the nulls", strings.Join(made, ", "))
	}
	if len(req) == 0 {
		out["required"] = []any{}
	}
}

// nullable makes a converted schema also take null.
func nullable(s map[string]any) map[string]any {
	if _, ok := s["$ref"]; ok {
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok && m["type"] == "null" {
				return s
			}
		}
		out := clone(s)
		out["anyOf"] = append(slices.Clone(alts), map[string]any{"type": "null"})
		return out
	}
	out := clone(s)
	types := jsonschema.StringList(s["type"])
	if len(types) > 0 && !slices.Contains(types, "null") {
		out["type"] = toAny(append(slices.Clone(types), "null"))
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
		out["enum"] = append(slices.Clone(enum), nil)
	}
	if cv, ok := s["const"]; ok && cv != nil {
		delete(out, "const")
		out["enum"] = []any{cv, nil}
	}
	return out
}

func asJSONText(out map[string]any, what string) {
	d, _ := out["description"].(string)
	for k := range out {
		delete(out, k)
	}
	out["type"] = "string"
	text := "Give " + what + " as JSON text."
	if d != "" {
		text = d + " (" + text + ")"
	}
	out["description"] = text
}

// inferType gives the type an enum or const implies when all its values
// are of one JSON type, for targets that need a type.
func inferType(node map[string]any) []string {
	values, _ := node["enum"].([]any)
	if c, ok := node["const"]; ok {
		values = append(values, c)
	}
	kind := ""
	for _, v := range values {
		k := ""
		switch v := v.(type) {
		case string:
			k = "string"
		case bool:
			k = "boolean"
		case json.Number:
			k = "number"
			if jsonschema.HasType(v, "integer") {
				k = "integer"
			}
		default:
			return nil
		}
		switch {
		case kind == "" || kind == k:
			kind = k
		case kind == "integer" && k == "number" || kind == "number" && k == "integer":
			kind = "number"
		default:
			return nil
		}
	}
	if kind == "" {
		return nil
	}
	return []string{kind}
}

func isLengthBound(k string) bool {
	return k == "minLength" || k == "maxLength" || k == "minItems" || k == "maxItems"
}

func isEmptySchema(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

func knownType(t string) bool {
	switch t {
	case "string", "number", "integer", "boolean", "object", "array", "null":
		return true
	}
	return false
}

// boolSchema turns true/false used as a schema into an object schema.
func boolSchema(v any) map[string]any {
	if v == false {
		return map[string]any{"not": map[string]any{}}
	}
	return map[string]any{}
}

func orRoot(path string) string {
	if path == "" {
		return "the root"
	}
	return path
}

func lossySuffix(lossy []string) string {
	if len(lossy) == 0 {
		return ""
	}
	return "; lossy: " + strings.Join(lossy, "; ")
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

func asList(v any) []any         { l, _ := v.([]any); return l }
func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
