package llm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/internal/jsonschema"
)

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
		name := c.defName(ref, target)
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
		if !c.once("recursion " + ref) {
			return c.anyValue(path, "the same shape as the enclosing value")
		}
		c.note(path, RecursionBounded, "recursive $ref %s inlined %d levels deep, then cut (here and wherever it recurs): below, %s", ref, maxUnroll, c.anyWhat())
		return c.anyValue(path, "the same shape as the enclosing value")
	}
	if c.nodes > maxInlineNodes {
		if c.once("cut " + ref) {
			c.note(path, Dropped, "$ref %s not inlined here and below: the schema passed %d nodes once inlined; %s", ref, maxInlineNodes, c.anyWhat())
		}
		return c.anyValue(path, "")
	}
	if open == 0 && c.once("inline "+ref) {
		c.note(path, Inlined, "$ref %s replaced by what it points to, here and wherever it is used", ref)
	}
	c.stack = append(c.stack, ref)
	out := c.convert(target, path, depth, false)
	c.stack = c.stack[:len(c.stack)-1]
	return out
}

// defName returns the name of a referenced schema in the output's $defs,
// converting it the first time.
func (c *converter) defName(ref string, target map[string]any) string {
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
	for i := 2; c.usedNames[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	c.defNames[ref] = name
	c.usedNames[name] = true
	if ref != "#" {
		// converted after the schema that refers to it, one at a time, so
		// that a long chain of definitions does not nest
		c.pending = append(c.pending, pendingDef{ref: ref, name: name, target: target})
	}
	return name
}

// pendingDef is a referenced schema still to convert into $defs.
type pendingDef struct {
	ref, name string
	target    map[string]any
}

// convertPending converts the referenced schemas, and those they refer
// to in turn, into the output's $defs.
func (c *converter) convertPending() {
	for len(c.pending) > 0 && c.err == nil {
		p := c.pending[0]
		c.pending = c.pending[1:]
		c.defs[p.name] = c.convert(p.target, p.ref[1:], 1, false)
		if !strings.HasPrefix(p.ref, "#/$defs/") {
			c.note(p.ref[1:], Rewritten, "$ref %s kept as #/$defs/%s", p.ref, p.name)
		}
	}
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
