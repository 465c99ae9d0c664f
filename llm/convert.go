package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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
	c := &converter{src: src, sr: sr, strict: strict, defNames: map[string]string{}, usedNames: map[string]bool{}, defs: map[string]any{}}
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

	stack     []string          // the $refs being inlined, outermost first
	defNames  map[string]string // $ref → name in the output's $defs
	usedNames map[string]bool   // names taken in the output's $defs
	defs      map[string]any    // name → converted schema
	pending   []pendingDef      // referenced schemas not converted yet
	seen      map[string]bool   // changes reported once (see once)
}

func (c *converter) note(path string, a Action, format string, args ...any) {
	c.changes = append(c.changes, Change{Path: "#" + path, Action: a, Why: fmt.Sprintf(format, args...)})
}

// once reports whether key is seen for the first time: a change made
// wherever a reference is used is reported once.
func (c *converter) once(key string) bool {
	if c.seen[key] {
		return false
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[key] = true
	return true
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
	c.convertPending()
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
