package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/anymcp/anymcp/internal/jsonschema"
	"github.com/anymcp/anymcp/mcp"
)

// convert converts one tool: strict when asked and possible, else loose,
// else omitted; every definition passes Check before it is returned.
func convert(name string, t mcp.Tool, target Target) Tool {
	r := rulesFor(target.Provider)
	out := Tool{Name: name, Original: t, Target: target}
	fitted, nameChanges := fitName(name, r)
	out.Name = fitted
	desc, descChanges := fitDescription(t.Description, r)
	head := append(nameChanges, descChanges...)

	src := jsonschema.Parse(t.InputSchema)
	if src.Root == nil && len(bytes.TrimSpace(t.InputSchema)) > 0 && string(bytes.TrimSpace(t.InputSchema)) != "null" {
		return omitted(out, head, "the input schema is not a JSON object")
	}
	var why string
	if target.Strict {
		if r.strict == nil {
			why = "the target has no per-tool strict mode"
		} else {
			def, changes, err := build(target, r, r.strict, true, fitted, desc, src)
			if err == nil {
				out.Mode, out.Definition, out.Changes = ModeStrict, def, append(head, changes...)
				return out
			}
			why = err.Error()
		}
	}
	def, changes, err := build(target, r, r.loose, false, fitted, desc, src)
	if err != nil {
		if why != "" {
			head = append(head, Change{Action: FellBack, Why: "not strict: " + why})
		}
		return omitted(out, head, err.Error())
	}
	out.Mode, out.Definition = ModeLoose, def
	out.Changes = head
	if why != "" {
		out.Changes = append(out.Changes, Change{Action: FellBack, Why: "sent loose: " + why})
	}
	out.Changes = append(out.Changes, changes...)
	return out
}

func omitted(out Tool, head []Change, why string) Tool {
	out.Mode, out.Definition = ModeOmitted, nil
	out.Changes = append(head, Change{Action: Omitted, Why: why})
	return out
}

// build converts the schema in one mode, wraps it and checks the result.
func build(target Target, r *rules, sr *schemaRules, strict bool, name, desc string, src jsonschema.Schema) (json.RawMessage, []Change, error) {
	c := &converter{src: src, sr: sr, strict: strict, defNames: map[string]string{}, defs: map[string]any{}}
	params, err := c.root()
	if err != nil {
		return nil, nil, err
	}
	if c.err != nil {
		return nil, nil, c.err
	}
	def, err := wrap(target, name, desc, params, strict)
	if err != nil {
		return nil, nil, err
	}
	if err := Check(Target{Provider: target.Provider, Strict: strict}, def); err != nil {
		return nil, nil, err
	}
	return def, c.changes, nil
}

// converter is one conversion of one schema for one mode.
type converter struct {
	src    jsonschema.Schema
	sr     *schemaRules
	strict bool

	changes []Change
	err     error // the first reason the schema cannot be made valid in this mode
	nodes   int

	stack    []string          // the $refs being inlined, outermost first
	defNames map[string]string // $ref → name in the output's $defs
	defs     map[string]any    // name → converted schema
}

func (c *converter) note(path string, a Action, format string, args ...any) {
	c.changes = append(c.changes, Change{Path: "#" + path, Action: a, Why: fmt.Sprintf(format, args...)})
}

func (c *converter) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// root converts the whole input schema into the parameters object.
func (c *converter) root() (map[string]any, error) {
	root := c.src.Root
	if root == nil {
		root = map[string]any{}
		c.note("", Rewritten, "no input schema: an object without parameters")
	}
	node := c.inlineRef(root, "")
	node = c.mergeAllOf(node, "")
	if _, hasProps := node["properties"]; !hasProps {
		if merged, ok := c.mergeRootAlternatives(node); ok {
			node = merged
		}
	}
	if c.sr.rootNoAlternatives {
		node = c.rootConstraints(node)
	}
	switch types := jsonschema.StringList(node["type"]); {
	case len(types) == 0:
		node = clone(node)
		node["type"] = "object"
		c.note("", Rewritten, `the root says no type: "object" added, as MCP requires`)
	case !slices.Contains(types, "object"):
		return nil, fmt.Errorf("the input schema's root is not an object (type %s), and tool arguments are one", jsonschema.Compact(node["type"]))
	case len(types) > 1:
		node = clone(node)
		node["type"] = "object"
		c.note("", Rewritten, "the root's type list narrowed to object, as MCP requires")
	}
	out := c.convert(node, "", 0, true)
	if c.sr.noEmptyParameters {
		if props, _ := out["properties"].(map[string]any); len(props) == 0 {
			return nil, nil // no parameters: the declaration goes without them
		}
	}
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
		c.note("", Rewritten, "the root lists no properties: an empty list added")
	}
	if len(c.defs) > 0 {
		out["$defs"] = c.defs
	}
	return out, nil
}

// mergeRootAlternatives turns a root anyOf/oneOf of objects into one
// object that takes every alternative's properties, none required unless
// every alternative requires it. The original schema still checks the
// arguments, so nothing the server refuses gets through.
func (c *converter) mergeRootAlternatives(node map[string]any) (map[string]any, bool) {
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts, ok := node[kw].([]any)
		if !ok || len(alts) == 0 {
			continue
		}
		props := map[string]any{}
		var order []string
		var required []string
		for i, a := range alts {
			m, ok := a.(map[string]any)
			if !ok {
				return nil, false
			}
			m = c.mergeAllOf(c.inlineRef(m, ""), "")
			if t := jsonschema.StringList(m["type"]); len(t) > 0 && !slices.Contains(t, "object") {
				return nil, false
			}
			p, _ := m["properties"].(map[string]any)
			for _, k := range sortedKeys(p) {
				if _, seen := props[k]; !seen {
					props[k] = p[k]
					order = append(order, k)
				}
			}
			req := jsonschema.StringList(m["required"])
			if i == 0 {
				required = req
			} else {
				required = slices.DeleteFunc(required, func(r string) bool { return !slices.Contains(req, r) })
			}
		}
		out := clone(node)
		delete(out, kw)
		out["type"] = "object"
		out["properties"] = props
		if len(required) > 0 {
			out["required"] = toAny(required)
		} else {
			delete(out, "required")
		}
		c.note("/"+kw, Merged, "the root's %d alternatives merged into one object (the target takes no alternatives at the root); the original schema still checks the arguments", len(alts))
		return out, true
	}
	return nil, false
}

// presenceOnly reports whether alternatives only say which properties
// must be present (anyOf of required lists): no target's model needs
// them as schemas, and strict mode cannot take them.
func presenceOnly(list []any) bool {
	for _, a := range list {
		m, ok := a.(map[string]any)
		if !ok || len(m) == 0 {
			return false
		}
		for k := range m {
			switch k {
			case "required", "description", "title", "minProperties", "maxProperties", "dependentRequired":
			default:
				return false
			}
		}
	}
	return true
}

// rootConstraints takes anyOf/oneOf off a root that lists its properties
// (they say which properties go together), for a target that takes no
// alternatives at the root. A short one is written into the description;
// the original schema still checks the arguments.
func (c *converter) rootConstraints(node map[string]any) map[string]any {
	for _, kw := range []string{"anyOf", "oneOf"} {
		v, ok := node[kw]
		if !ok {
			continue
		}
		node = clone(node)
		delete(node, kw)
		text := jsonschema.Compact(v)
		if len(text) > 300 {
			c.note("/"+kw, Dropped, "%s at the root is not taken by the target; the original schema still checks the arguments", kw)
			continue
		}
		d, _ := node["description"].(string)
		if d != "" {
			d += " "
		}
		node["description"] = d + "(" + kw + ": " + text + ")"
		c.note("/"+kw, Moved, "%s at the root is not taken by the target: moved into the description; the original schema still checks the arguments", kw)
	}
	return node
}

// inlineRef resolves a node that is only a $ref (with annotations), for
// the places where a reference cannot stay: the root, allOf members.
func (c *converter) inlineRef(node map[string]any, path string) map[string]any {
	for range 32 {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		target, ok := c.src.Pointer(ref)
		if !ok {
			return node
		}
		merged := clone(target)
		for k, v := range node {
			if k != "$ref" {
				merged[k] = v
			}
		}
		node = merged
		c.note(path, Inlined, "$ref %s replaced by what it points to", ref)
	}
	return node
}

// mergeAllOf folds allOf members into the node. A conflict (two types
// that share nothing, two different values of one keyword) keeps the
// first and is reported as lossy.
func (c *converter) mergeAllOf(node map[string]any, path string) map[string]any {
	for depth := 0; depth < 16; depth++ {
		all, ok := node["allOf"].([]any)
		if !ok {
			return node
		}
		out := clone(node)
		delete(out, "allOf")
		var lossy []string
		for _, m := range all {
			sub, ok := m.(map[string]any)
			if !ok {
				continue
			}
			sub = c.inlineRef(sub, path+"/allOf")
			lossy = append(lossy, mergeInto(out, sub)...)
		}
		if len(lossy) > 0 {
			c.note(path+"/allOf", Merged, "allOf merged into one schema; lossy: %s (the original schema still checks the arguments)", strings.Join(lossy, "; "))
		} else {
			c.note(path+"/allOf", Merged, "allOf merged into one schema")
		}
		node = out
	}
	return node
}

// mergeInto merges sub into dst (both schema objects) and returns what
// could not be merged without loss.
func mergeInto(dst, sub map[string]any) []string {
	var lossy []string
	for _, k := range sortedKeys(sub) {
		v := sub[k]
		old, exists := dst[k]
		if !exists {
			dst[k] = v
			continue
		}
		switch k {
		case "properties":
			op, _ := old.(map[string]any)
			np, _ := v.(map[string]any)
			merged := clone(op)
			for _, name := range sortedKeys(np) {
				if prev, ok := merged[name].(map[string]any); ok {
					if next, ok := np[name].(map[string]any); ok {
						m := clone(prev)
						for _, l := range mergeInto(m, next) {
							lossy = append(lossy, name+": "+l)
						}
						merged[name] = m
						continue
					}
				}
				merged[name] = np[name]
			}
			dst[k] = merged
		case "required":
			req := jsonschema.StringList(old)
			for _, r := range jsonschema.StringList(v) {
				if !slices.Contains(req, r) {
					req = append(req, r)
				}
			}
			dst[k] = toAny(req)
		case "type":
			a, b := jsonschema.StringList(old), jsonschema.StringList(v)
			var both []string
			for _, t := range a {
				if slices.Contains(b, t) || (t == "number" && slices.Contains(b, "integer")) {
					both = append(both, t)
				}
			}
			if len(both) == 0 {
				lossy = append(lossy, fmt.Sprintf("type %s and %s share nothing, kept the first", jsonschema.Compact(old), jsonschema.Compact(v)))
				continue
			}
			if len(both) == 1 {
				dst[k] = both[0]
			} else {
				dst[k] = toAny(both)
			}
		case "description", "title":
			if old != v {
				dst[k] = fmt.Sprint(old) + " " + fmt.Sprint(v)
			}
		default:
			if jsonschema.Compact(old) != jsonschema.Compact(v) {
				lossy = append(lossy, fmt.Sprintf("%s %s and %s differ, kept the first", k, jsonschema.Compact(old), jsonschema.Compact(v)))
			}
		}
	}
	return lossy
}

// convert converts one schema node; path is its JSON Pointer in the
// original schema, depth its nesting.
func (c *converter) convert(in map[string]any, path string, depth int, isRoot bool) map[string]any {
	c.nodes++
	if c.nodes > maxNodes {
		c.fail("the schema is too large once its references are inlined (over %d schema nodes)", maxNodes)
		return map[string]any{}
	}
	if depth > 64 {
		c.fail("the schema nests deeper than 64 levels")
		return map[string]any{}
	}
	if ref, ok := in["$ref"].(string); ok {
		return c.convertRef(in, ref, path, depth)
	}
	node := c.mergeAllOf(in, path)
	out := map[string]any{}
	var moved []string

	types := jsonschema.StringList(node["type"])
	if n, ok := node["nullable"].(bool); ok && n && len(types) > 0 && !slices.Contains(types, "null") {
		types = append(slices.Clone(types), "null")
		if !c.sr.nullable {
			c.note(path+"/nullable", Rewritten, "nullable: true written as null in the type")
		}
	} else if _, ok := node["nullable"]; ok && !c.sr.nullable {
		c.note(path+"/nullable", Dropped, "nullable without a type, or false, says nothing the target reads")
	}
	if _, ok := node["type"]; ok && len(types) == 0 {
		c.note(path+"/type", Dropped, "type %s names no JSON type", jsonschema.Compact(node["type"]))
	}
	if known := slices.DeleteFunc(slices.Clone(types), func(t string) bool { return !knownType(t) }); len(known) < len(types) {
		if len(known) > 0 {
			c.note(path+"/type", Dropped, "type %s names a type JSON Schema does not have: left out", jsonschema.Compact(node["type"]))
		}
		types = known
	}
	if len(types) == 0 && (c.sr.nonEmptyObjects || c.sr.typed) {
		types = inferType(node)
	}
	if c.sr.nonEmptyObjects && len(types) == 0 && node["properties"] != nil {
		types = []string{"object"}
	}

	for _, k := range sortedKeys(node) {
		v := node[k]
		p := path + "/" + escapePointer(k)
		switch k {
		case "type", "nullable", "allOf":
			// handled around the loop
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				c.note(p, Dropped, "properties is not an object")
				continue
			}
			conv := make(map[string]any, len(props))
			for _, name := range sortedKeys(props) {
				sub, ok := props[name].(map[string]any)
				if !ok {
					sub = boolSchema(props[name])
				}
				conv[name] = c.convert(sub, p+"/"+escapePointer(name), depth+1, false)
			}
			out["properties"] = conv
		case "required":
			if list := jsonschema.StringList(v); len(list) > 0 {
				out["required"] = toAny(list)
			}
		case "items":
			switch it := v.(type) {
			case map[string]any:
				out["items"] = c.convert(it, p, depth+1, false)
			case []any: // a draft-7 tuple
				c.tuple(out, it, node["additionalItems"], p, depth)
			case bool:
				if it {
					out["items"] = map[string]any{}
				} else if _, tuple := node["prefixItems"]; !tuple || c.sr.keep["prefixItems"] {
					c.setBound(out, "maxItems", len(asList(node["prefixItems"])), p)
				}
			}
		case "prefixItems":
			if list, ok := v.([]any); ok {
				if _, isTuple := node["items"].([]any); !isTuple {
					c.tuple(out, list, node["items"], p, depth)
				}
			}
		case "additionalItems":
			if _, isTuple := node["items"].([]any); !isTuple {
				c.note(p, Dropped, "additionalItems without a tuple in items says nothing")
			}
		case "additionalProperties":
			switch ap := v.(type) {
			case bool:
				out[k] = ap
			case map[string]any:
				out[k] = c.convert(ap, p, depth+1, false)
			}
		case "anyOf", "oneOf":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				c.note(p, Dropped, "%s is not a list of schemas", k)
				continue
			}
			if presenceOnly(list) && len(types) > 0 && (c.sr.typed || c.sr.nonEmptyObjects) {
				moved = append(moved, k+": "+jsonschema.Compact(v))
				c.note(p, Moved, "%s that only says which properties go together: moved into the description; the original schema still checks the arguments", k)
				continue
			}
			alts := make([]any, 0, len(list))
			for i, a := range list {
				sub, ok := a.(map[string]any)
				if !ok {
					sub = boolSchema(a)
				}
				alts = append(alts, c.convert(sub, p+"/"+strconv.Itoa(i), depth+1, false))
			}
			key := k
			if k == "oneOf" && !c.sr.keep["oneOf"] {
				key = "anyOf"
				c.note(p, Rewritten, "oneOf spelled anyOf, which the target takes (one match is no longer enforced by the model; the original schema still checks it)")
			}
			if prev, ok := out["anyOf"].([]any); ok && key == "anyOf" {
				// anyOf and oneOf side by side: both must hold; keep anyOf, say so
				c.note(p, Dropped, "oneOf beside anyOf: only anyOf kept (the original schema still checks both)")
				_ = prev
				continue
			}
			if !c.sr.typeArrays {
				alts = c.nullAlternative(out, alts, p)
			}
			if len(alts) == 1 { // one alternative left: it is the schema
				lossy := mergeInto(out, alts[0].(map[string]any))
				c.note(p, Merged, "the only alternative left merged into its parent%s", lossySuffix(lossy))
				continue
			}
			out[key] = alts
		case "enum":
			list, ok := v.([]any)
			if !ok {
				c.note(p, Dropped, "enum is not a list")
				continue
			}
			out["enum"] = list
		case "const":
			if c.sr.constOK {
				out["const"] = v
			} else {
				out["enum"] = []any{v}
				c.note(p, Rewritten, "const spelled as an enum of one value")
			}
		case "description":
			if s, ok := v.(string); ok {
				out["description"] = s
			}
		case "$defs", "definitions":
			// referenced definitions are converted where they are used
			if c.sr.refs && c.sr.recursion || len(asMap(v)) == 0 {
				continue
			}
			c.note(p, Inlined, "%s removed: every reference to it is inlined", k)
		case "$schema", "$id", "$comment", "$anchor", "id":
			c.note(p, Dropped, "%s is not a keyword the target takes", k)
		default:
			if !c.sr.keep[k] {
				if constraintWords[k] {
					moved = append(moved, k+": "+jsonschema.Compact(v))
					c.note(p, Moved, "%s is not taken by the target: moved into the description", k)
				} else {
					c.note(p, Dropped, "%s is not taken by the target", k)
				}
				continue
			}
			if k == "minItems" && c.sr.minItemsMax >= 0 {
				if n, ok := jsonschema.Number(v); !ok || n > float64(c.sr.minItemsMax) {
					moved = append(moved, k+": "+jsonschema.Compact(v))
					c.note(p, Moved, "minItems above %d is not taken by the target: moved into the description", c.sr.minItemsMax)
					continue
				}
			}
			if c.sr.lengthBoundMax > 0 && isLengthBound(k) {
				if n, ok := jsonschema.Number(v); ok && n > float64(c.sr.lengthBoundMax) {
					moved = append(moved, k+": "+jsonschema.Compact(v))
					c.note(p, Moved, "%s above %d is not taken by the target's grammar: moved into the description", k, c.sr.lengthBoundMax)
					continue
				}
			}
			out[k] = v
		}
	}
	c.fixTypes(out, types, path)
	c.fixFormat(out, path, &moved)
	c.fixEnum(out, path, &moved)
	c.fixShape(out, path, isRoot)
	if len(moved) > 0 {
		d, _ := out["description"].(string)
		if d != "" {
			d += " "
		}
		out["description"] = d + "(" + strings.Join(moved, "; ") + ")"
	}
	return out
}

// tuple writes a tuple (prefixItems, or draft-7 items as a list) as the
// target takes it: as prefixItems, or as items that take any member.
func (c *converter) tuple(out map[string]any, list []any, rest any, path string, depth int) {
	members := make([]any, 0, len(list))
	for i, m := range list {
		sub, ok := m.(map[string]any)
		if !ok {
			sub = boolSchema(m)
		}
		members = append(members, c.convert(sub, path+"/"+strconv.Itoa(i), depth+1, false))
	}
	if c.sr.keep["prefixItems"] {
		out["prefixItems"] = members
		switch r := rest.(type) {
		case map[string]any:
			out["items"] = c.convert(r, path, depth+1, false)
		case bool:
			if !r {
				c.setBound(out, "maxItems", len(list), path)
			}
		}
		return
	}
	if r, ok := rest.(bool); ok && !r {
		c.setBound(out, "maxItems", len(list), path)
	}
	if r, ok := rest.(map[string]any); ok {
		members = append(members, c.convert(r, path, depth+1, false))
	}
	switch len(members) {
	case 0:
	case 1:
		out["items"] = members[0]
	default:
		out["items"] = map[string]any{"anyOf": dedupe(members)}
	}
	c.note(path, Rewritten, "a tuple of %d positions written as items that take any of them (the target has no prefixItems); the original schema still checks each position", len(list))
}

func dedupe(list []any) []any {
	seen := map[string]bool{}
	out := list[:0:0]
	for _, v := range list {
		k := jsonschema.Compact(v)
		if !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out
}

// nullAlternative takes {"type": "null"} out of a list of alternatives
// for a target that spells null as "nullable": true.
func (c *converter) nullAlternative(out map[string]any, alts []any, path string) []any {
	kept := alts[:0:0]
	for _, a := range alts {
		if m, ok := a.(map[string]any); ok && m["type"] == "null" && len(m) <= 2 && (len(m) == 1 || m["description"] != nil) {
			continue
		}
		kept = append(kept, a)
	}
	if len(kept) == len(alts) || len(kept) == 0 {
		return alts
	}
	if c.sr.nullable {
		out["nullable"] = true
		c.note(path, Rewritten, "the null alternative spelled nullable: true")
	} else {
		c.note(path, Dropped, "the null alternative dropped: the target cannot say null")
	}
	return kept
}

// setBound sets a length bound the conversion derives (a closed tuple's
// maxItems), or says it in the description where the target refuses it.
func (c *converter) setBound(out map[string]any, k string, n int, path string) {
	if c.sr.keep[k] {
		out[k] = json.Number(strconv.Itoa(n))
		return
	}
	d, _ := out["description"].(string)
	if d != "" {
		d += " "
	}
	out["description"] = d + fmt.Sprintf("(%s: %d)", k, n)
	c.note(path, Moved, "%s %d (a closed tuple) is not taken by the target: said in the description", k, n)
}

// convertRef keeps a reference where the target takes them, or inlines
// it, unrolling recursion up to maxUnroll.
func (c *converter) convertRef(in map[string]any, ref, path string, depth int) map[string]any {
	target, ok := c.src.Pointer(ref)
	if !ok {
		c.note(path+"/$ref", Dropped, "$ref %s points at nothing in the schema: any value taken", ref)
		if c.sr.typed {
			c.fail("$ref %s points at nothing in the schema", ref)
		}
		return c.anyValue(path, "")
	}
	extra := map[string]any{}
	for k, v := range in {
		if k != "$ref" && k != "description" && k != "title" {
			extra[k] = v
		}
	}
	if len(extra) > 0 { // a $ref with constraints beside it: inline and merge
		merged := clone(target)
		lossy := mergeInto(merged, extra)
		if d, ok := in["description"]; ok {
			merged["description"] = d
		}
		c.note(path, Inlined, "$ref %s inlined to merge the keywords beside it%s", ref, lossySuffix(lossy))
		return c.inlineOnce(merged, ref, path, depth)
	}
	if c.sr.refs && c.sr.recursion {
		name := c.defName(ref, target, depth)
		out := map[string]any{"$ref": "#/$defs/" + name}
		if ref == "#" {
			out["$ref"] = "#"
		}
		for _, k := range []string{"description", "title"} {
			if d, ok := in[k].(string); ok {
				if c.sr.typed || !c.sr.keep[k] { // strict: nothing beside a $ref
					c.note(path+"/"+k, Dropped, "a %s beside $ref is not taken here", k)
				} else {
					out[k] = d
				}
			}
		}
		return out
	}
	merged := target
	if d, ok := in["description"]; ok {
		merged = clone(target)
		merged["description"] = d
	}
	return c.inlineOnce(merged, ref, path, depth)
}

// inlineOnce converts a referenced schema in place, or, when the
// reference is already open maxUnroll times, cuts the recursion.
func (c *converter) inlineOnce(target map[string]any, ref, path string, depth int) map[string]any {
	open := 0
	for _, r := range c.stack {
		if r == ref {
			open++
		}
	}
	if open >= maxUnroll {
		c.note(path, RecursionBounded, "recursive $ref %s inlined %d levels deep, then cut: below, %s", ref, maxUnroll, c.anyWhat())
		return c.anyValue(path, "the same shape as the enclosing value")
	}
	if open == 0 {
		c.note(path, Inlined, "$ref %s replaced by what it points to", ref)
	}
	c.stack = append(c.stack, ref)
	out := c.convert(target, path, depth, false)
	c.stack = c.stack[:len(c.stack)-1]
	return out
}

// defName returns the name of a referenced schema in the output's $defs,
// converting it the first time.
func (c *converter) defName(ref string, target map[string]any, depth int) string {
	if name, ok := c.defNames[ref]; ok {
		return name
	}
	base := ref[strings.LastIndexByte(ref, '/')+1:]
	base = strings.Map(func(r rune) rune {
		if r < 0x80 && (openAINameChar(byte(r)) || r == '.') {
			return r
		}
		return '_'
	}, base)
	if base == "" || base == "#" {
		base = "root"
	}
	name := base
	for i := 2; c.defs[name] != nil || slices.Contains(mapValues(c.defNames), name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	c.defNames[ref] = name
	if ref == "#" {
		return name
	}
	c.defs[name] = map[string]any{} // reserved before converting: it may refer to itself
	c.defs[name] = c.convert(target, ref[1:], depth+1, false)
	if !strings.HasPrefix(ref, "#/$defs/") {
		c.note(ref[1:], Rewritten, "$ref %s kept as #/$defs/%s", ref, name)
	}
	return name
}

// anyWhat says what anyValue gives, for the report.
func (c *converter) anyWhat() string {
	if !c.sr.nonEmptyObjects && !c.sr.typed {
		return "any value is taken"
	}
	return "the value is taken as JSON text (Shape parses it)"
}

// anyValue is a schema for a value the target cannot describe: {} where
// it takes any value, else a string that holds the value as JSON (Shape
// parses it back).
func (c *converter) anyValue(path, what string) map[string]any {
	if !c.sr.nonEmptyObjects && !c.sr.typed {
		if what == "" {
			return map[string]any{}
		}
		return map[string]any{"description": "Any JSON value: " + what + "."}
	}
	d := "A JSON value, written as a string"
	if what != "" {
		d += ": " + what
	}
	return map[string]any{"type": "string", "description": d + "."}
}

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

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

func asList(v any) []any              { l, _ := v.([]any); return l }
func asMap(v any) map[string]any      { m, _ := v.(map[string]any); return m }
func errorf(f string, a ...any) error { return errors.New(fmt.Sprintf(f, a...)) }

// fitName fits a name to the provider's charset and length: each refused
// character becomes "_", a first character that may not start a name is
// preceded by "_", and a name too long is cut and ends with a hash of
// the whole, so that two long names stay apart.
func fitName(name string, r *rules) (string, []Change) {
	var b strings.Builder
	for i := 0; i < len(name); {
		ru, size := utf8.DecodeRuneInString(name[i:])
		if ru < 0x80 && r.nameChars(byte(ru)) {
			b.WriteByte(byte(ru))
		} else {
			b.WriteByte('_')
		}
		i += size
	}
	out := b.String()
	if out == "" {
		out = "tool"
	}
	if r.nameStart && !(out[0] == '_' || out[0] >= 'a' && out[0] <= 'z' || out[0] >= 'A' && out[0] <= 'Z') {
		out = "_" + out
	}
	if len(out) > r.nameMax {
		out = out[:r.nameMax-9] + "_" + shortHash(name)
	}
	if out == name {
		return out, nil
	}
	return out, []Change{{Action: Renamed, Why: renameWhy(name, out)}}
}

func renameWhy(from, to string) string {
	return fmt.Sprintf("%q fitted to the target's rules for names: %q", from, to)
}

// fitDescription cuts a description to the provider's limit, at a
// character boundary, ending it with "…".
func fitDescription(d string, r *rules) (string, []Change) {
	if r.descMax == 0 || utf8.RuneCountInString(d) <= r.descMax {
		return d, nil
	}
	n := 0
	for i := range d {
		if n == r.descMax-1 {
			return d[:i] + "…", []Change{{Action: Truncated, Why: fmt.Sprintf("the description (%d characters) cut to the target's limit of %d", utf8.RuneCountInString(d), r.descMax)}}
		}
		n++
	}
	return d, nil
}

// uniqueName fits a name and, when another tool of the set already has
// the result, ends it with a counter.
func uniqueName(name string, target Target, used map[string]bool) string {
	r := rulesFor(target.Provider)
	fitted, _ := fitName(name, r)
	if !used[fitted] {
		return fitted
	}
	for i := 2; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		base := fitted
		if len(base)+len(suffix) > r.nameMax {
			base = base[:r.nameMax-len(suffix)]
		}
		if !used[base+suffix] {
			return base + suffix
		}
	}
}

func withoutRename(c []Change) []Change {
	out := c[:0:0]
	for _, x := range c {
		if x.Action != Renamed {
			out = append(out, x)
		}
	}
	return out
}
