package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/anymcp/anymcp/internal/jsonschema"
)

// CheckError says why a tool definition breaks a provider's documented
// rules: where, and which rule.
type CheckError struct {
	Provider Provider
	// Path is a JSON Pointer into the parameters schema, or "" for the
	// tool object itself.
	Path string
	Rule string
}

func (e *CheckError) Error() string {
	where := "the tool"
	if e.Path != "" {
		where = "parameters " + e.Path
	} else if e.Path == "" && strings.HasPrefix(e.Rule, "the root") {
		where = "parameters"
	}
	return fmt.Sprintf("%s refuses %s: %s", rulesFor(e.Provider).describeOut, where, e.Rule)
}

// Check reports whether a tool definition (one element of the request's
// tools, or one Gemini function declaration) follows the target's
// documented rules, as docs/llm.md lists them. Strict rules apply when
// the definition asks for strict mode. Its error is a *CheckError.
// Convert never returns a definition that fails it.
func Check(target Target, def json.RawMessage) error {
	r := rulesFor(target.Provider)
	fail := func(path, format string, a ...any) error {
		return &CheckError{Provider: target.Provider, Path: path, Rule: fmt.Sprintf(format, a...)}
	}
	dec := json.NewDecoder(bytes.NewReader(def))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return fail("", "not a JSON object")
	}
	var fields map[string]any
	var paramsKey string
	var allowed []string
	switch target.Provider {
	case OpenAIChat, OpenAICompatible:
		if obj["type"] != "function" {
			return fail("", `"type" must be "function"`)
		}
		fields, _ = obj["function"].(map[string]any)
		if fields == nil {
			return fail("", `"function" must be an object`)
		}
		if err := onlyKeys(obj, "type", "function"); err != "" {
			return fail("", "%s", err)
		}
		paramsKey, allowed = "parameters", []string{"name", "description", "parameters", "strict"}
	case OpenAIResponses:
		if obj["type"] != "function" {
			return fail("", `"type" must be "function"`)
		}
		fields, paramsKey, allowed = obj, "parameters", []string{"type", "name", "description", "parameters", "strict"}
	case Anthropic:
		fields, paramsKey, allowed = obj, "input_schema", []string{"name", "description", "input_schema", "strict"}
	case Gemini:
		fields, paramsKey, allowed = obj, "parametersJsonSchema", []string{"name", "description", "parametersJsonSchema"}
	case GeminiOpenAPI:
		fields, paramsKey, allowed = obj, "parameters", []string{"name", "description", "parameters"}
	default:
		return fail("", "unknown provider %q", target.Provider)
	}
	if err := onlyKeys(fields, allowed...); err != "" {
		return fail("", "%s", err)
	}
	name, _ := fields["name"].(string)
	if err := checkName(name, r); err != "" {
		return fail("", "%s", err)
	}
	if d, ok := fields["description"]; ok {
		s, isString := d.(string)
		if !isString {
			return fail("", "the description must be a string")
		}
		if r.descMax > 0 && utf8.RuneCountInString(s) > r.descMax {
			return fail("", "the description holds %d characters, more than %d", utf8.RuneCountInString(s), r.descMax)
		}
	}
	strict := false
	if s, ok := fields["strict"]; ok {
		b, isBool := s.(bool)
		if !isBool {
			return fail("", `"strict" must be a boolean`)
		}
		strict = b
	}
	sr := r.loose
	if strict {
		if r.strict == nil {
			return fail("", "the provider has no strict mode")
		}
		sr = r.strict
	}
	params, present := fields[paramsKey]
	if !present {
		if sr.noEmptyParameters {
			return nil // a function without parameters
		}
		return fail("", "%q is missing", paramsKey)
	}
	root, ok := params.(map[string]any)
	if !ok {
		return fail("", "%q must be a schema object", paramsKey)
	}
	ck := &checker{target: target, sr: sr, root: root}
	if err := ck.checkRoot(); err != nil {
		return err
	}
	return nil
}

func onlyKeys(m map[string]any, allowed ...string) string {
	for _, k := range sortedKeys(m) {
		if !slices.Contains(allowed, k) {
			return fmt.Sprintf("unknown field %q", k)
		}
	}
	return ""
}

func checkName(name string, r *rules) string {
	if name == "" {
		return "the name is empty"
	}
	if len(name) > r.nameMax {
		return fmt.Sprintf("the name %q is longer than %d characters", name, r.nameMax)
	}
	for i := 0; i < len(name); i++ {
		if !r.nameChars(name[i]) {
			return fmt.Sprintf("the name %q holds %q, which names may not", name, name[i])
		}
	}
	if r.nameStart {
		c := name[0]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return fmt.Sprintf("the name %q must start with a letter or an underscore", name)
		}
	}
	return ""
}

// checker walks one parameters schema.
type checker struct {
	target Target
	sr     *schemaRules
	root   map[string]any

	properties, enumValues, stringChars int
	errs                                error
}

func (ck *checker) fail(path, format string, a ...any) error {
	if path == "" {
		path = "/"
	}
	return &CheckError{Provider: ck.target.Provider, Path: path, Rule: fmt.Sprintf(format, a...)}
}

func (ck *checker) checkRoot() error {
	sr := ck.sr
	if ck.root["type"] != "object" {
		return ck.fail("", `the root must be "type": "object"`)
	}
	if sr.rootNoAlternatives {
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			if _, ok := ck.root[k]; ok {
				return ck.fail("", "the root may not hold %s", k)
			}
		}
	}
	if _, ok := ck.root["properties"]; !ok && sr.rootProperties {
		return ck.fail("", "the root must list its properties")
	}
	if sr.noEmptyParameters {
		if props, _ := ck.root["properties"].(map[string]any); len(props) == 0 {
			return ck.fail("", "an object must list at least one property (leave parameters out instead)")
		}
	}
	defs, _ := ck.root["$defs"].(map[string]any)
	if _, ok := ck.root["$defs"]; ok && (!sr.refs || defs == nil) {
		return ck.fail("/$defs", "$defs is not taken here")
	}
	if err := ck.node(ck.root, "", 1, true); err != nil {
		return err
	}
	for _, name := range sortedKeys(defs) {
		d, ok := defs[name].(map[string]any)
		if !ok {
			return ck.fail("/$defs/"+name, "a definition must be a schema object")
		}
		if err := ck.node(d, "/$defs/"+escapePointer(name), 1, false); err != nil {
			return err
		}
	}
	if sr.refs && !sr.recursion {
		if cyc := ck.cycle(defs); cyc != "" {
			return ck.fail("/$defs/"+cyc, "recursive definitions are not taken")
		}
	}
	if sr.maxProperties > 0 && ck.properties > sr.maxProperties {
		return ck.fail("", "%d properties in all, more than %d", ck.properties, sr.maxProperties)
	}
	if sr.maxEnumValues > 0 && ck.enumValues > sr.maxEnumValues {
		return ck.fail("", "%d enum values in all, more than %d", ck.enumValues, sr.maxEnumValues)
	}
	if sr.maxStringChars > 0 && ck.stringChars > sr.maxStringChars {
		return ck.fail("", "%d characters of property names, definition names and enum values, more than %d", ck.stringChars, sr.maxStringChars)
	}
	return nil
}

// cycle returns a definition that refers to itself, directly or not.
func (ck *checker) cycle(defs map[string]any) string {
	refs := map[string][]string{}
	for name, d := range defs {
		collectRefs(d, func(ref string) {
			if t, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
				refs[name] = append(refs[name], t)
			}
			if ref == "#" {
				refs[name] = append(refs[name], "#")
			}
		})
	}
	collectRefs(withoutDefs(ck.root), func(ref string) {
		if ref == "#" {
			refs["#"] = append(refs["#"], "#")
		}
	})
	state := map[string]int{} // 1 open, 2 done
	var visit func(string) string
	visit = func(n string) string {
		switch state[n] {
		case 1:
			return n
		case 2:
			return ""
		}
		state[n] = 1
		for _, m := range refs[n] {
			if c := visit(m); c != "" {
				return c
			}
		}
		state[n] = 2
		return ""
	}
	for _, n := range append(sortedKeys(defs), "#") {
		if c := visit(n); c != "" {
			return c
		}
	}
	return ""
}

func withoutDefs(m map[string]any) map[string]any {
	out := clone(m)
	delete(out, "$defs")
	return out
}

func collectRefs(v any, f func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "$ref" {
				if s, ok := x.(string); ok {
					f(s)
				}
				continue
			}
			collectRefs(x, f)
		}
	case []any:
		for _, x := range v {
			collectRefs(x, f)
		}
	}
}

// node checks one schema object at path, nesting depth levels deep.
func (ck *checker) node(n map[string]any, path string, depth int, isRoot bool) error {
	sr := ck.sr
	if depth > 128 {
		return ck.fail(path, "the schema nests deeper than 128 levels")
	}
	for _, k := range sortedKeys(n) {
		if k == "$defs" && isRoot {
			continue
		}
		if sr.whitelist && !sr.keep[k] && !(k == "const" && sr.constOK) {
			return ck.fail(path, "the keyword %q is not taken", k)
		}
	}
	if ref, ok := n["$ref"]; ok {
		s, _ := ref.(string)
		if !sr.refs {
			return ck.fail(path, "$ref is not taken")
		}
		if s != "#" {
			name, ok := strings.CutPrefix(s, "#/$defs/")
			defs, _ := ck.root["$defs"].(map[string]any)
			if _, exists := defs[name]; !ok || !exists {
				if _, resolves := (jsonschema.Schema{Root: ck.root}).Pointer(s); sr.whitelist || !resolves {
					return ck.fail(path, "$ref %q does not name a definition in $defs", s)
				}
			}
		} else if !sr.recursion {
			return ck.fail(path, "$ref to the root is recursion, which is not taken")
		}
		if len(n) > 1 && sr.typed {
			return ck.fail(path, "$ref with keywords beside it")
		}
		return nil
	}
	types, err := ck.types(n, path)
	if err != nil {
		return err
	}
	if sr.typed && len(types) == 0 && n["anyOf"] == nil && n["enum"] == nil && n["const"] == nil {
		return ck.fail(path, "a schema must say what it takes (type, enum, const, anyOf or $ref)")
	}
	if sr.nonEmptyObjects && len(types) == 0 && n["anyOf"] == nil {
		return ck.fail(path, "a schema must have a type")
	}
	if d, ok := n["description"]; ok {
		if _, isString := d.(string); !isString {
			return ck.fail(path, "description must be a string")
		}
	}
	if nl, ok := n["nullable"]; ok {
		if _, isBool := nl.(bool); !isBool {
			return ck.fail(path, "nullable must be a boolean")
		}
	}
	if f, ok := n["format"]; ok {
		s, isString := f.(string)
		if !isString {
			return ck.fail(path, "format must be a string")
		}
		if sr.formats != nil {
			t := ""
			if len(types) == 1 {
				t = types[0]
			}
			if !sr.formats[""][s] && !sr.formats[t][s] {
				return ck.fail(path, "format %q is not taken", s)
			}
		}
	}
	if sr.lengthBoundMax > 0 {
		for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems"} {
			if v, ok := jsonschema.Number(n[k]); ok && v > float64(sr.lengthBoundMax) {
				return ck.fail(path, "%s above %d", k, sr.lengthBoundMax)
			}
		}
	}
	if v, ok := n["minItems"]; ok && sr.minItemsMax >= 0 {
		if f, isNum := jsonschema.Number(v); !isNum || f > float64(sr.minItemsMax) {
			return ck.fail(path, "minItems above %d", sr.minItemsMax)
		}
	}
	if err := ck.enum(n, types, path); err != nil {
		return err
	}
	isObject := slices.Contains(types, "object") || (len(types) == 0 && n["properties"] != nil)
	if isObject {
		if err := ck.object(n, path, depth, isRoot); err != nil {
			return err
		}
	} else if _, ok := n["properties"]; ok {
		return ck.fail(path, "properties on a schema that is not an object")
	}
	if slices.Contains(types, "array") {
		_, hasItems := n["items"]
		_, hasPrefix := n["prefixItems"]
		if sr.arrayItems && !hasItems && !hasPrefix {
			return ck.fail(path, "an array must have items")
		}
	}
	if it, ok := n["items"]; ok {
		m, isMap := it.(map[string]any)
		if !isMap {
			return ck.fail(path+"/items", "items must be a schema object")
		}
		if err := ck.node(m, path+"/items", depth+1, false); err != nil {
			return err
		}
	}
	for _, k := range []string{"prefixItems", "anyOf", "oneOf"} {
		v, ok := n[k]
		if !ok {
			continue
		}
		list, isList := v.([]any)
		if !isList || len(list) == 0 {
			return ck.fail(path+"/"+k, "%s must be a non-empty list of schemas", k)
		}
		for i, x := range list {
			m, isMap := x.(map[string]any)
			if !isMap {
				return ck.fail(fmt.Sprintf("%s/%s/%d", path, k, i), "must be a schema object")
			}
			if err := ck.node(m, fmt.Sprintf("%s/%s/%d", path, k, i), depth, false); err != nil {
				return err
			}
		}
	}
	for _, k := range []string{"not", "if", "then", "else", "contains", "propertyNames"} {
		if v, ok := n[k]; ok {
			m, isMap := v.(map[string]any)
			if !isMap {
				return ck.fail(path+"/"+k, "must be a schema object")
			}
			if err := ck.node(m, path+"/"+k, depth+1, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func (ck *checker) types(n map[string]any, path string) ([]string, error) {
	v, ok := n["type"]
	if !ok {
		return nil, nil
	}
	var types []string
	switch t := v.(type) {
	case string:
		types = []string{t}
	case []any:
		if !ck.sr.typeArrays {
			return nil, ck.fail(path, "type must be a single type")
		}
		if len(t) == 0 {
			return nil, ck.fail(path, "an empty type list")
		}
		for _, x := range t {
			s, isString := x.(string)
			if !isString || slices.Contains(types, s) {
				return nil, ck.fail(path, "a type list holds strings, each once")
			}
			types = append(types, s)
		}
	default:
		return nil, ck.fail(path, "type must be a string")
	}
	for _, t := range types {
		if !knownType(t) || (t == "null" && !ck.sr.typeArrays) {
			return nil, ck.fail(path, "type %q is not taken", t)
		}
	}
	return types, nil
}

func (ck *checker) enum(n map[string]any, types []string, path string) error {
	v, ok := n["enum"]
	if !ok {
		if c, ok := n["const"]; ok {
			ck.enumValues++
			if s, isString := c.(string); isString {
				ck.stringChars += utf8.RuneCountInString(s)
			}
		}
		return nil
	}
	list, isList := v.([]any)
	if !isList || len(list) == 0 {
		return ck.fail(path, "enum must be a non-empty list")
	}
	ck.enumValues += len(list)
	chars := 0
	for _, x := range list {
		switch x := x.(type) {
		case string:
			chars += utf8.RuneCountInString(x)
		case map[string]any, []any:
			if ck.sr.enumPrimitives {
				return ck.fail(path, "enum values must be strings, numbers, booleans or null")
			}
		default:
			if ck.sr.enumStrings {
				return ck.fail(path, "enum values must be strings")
			}
		}
	}
	if ck.sr.enumStrings && !(len(types) == 1 && types[0] == "string") {
		return ck.fail(path, `enum is taken only with "type": "string"`)
	}
	ck.stringChars += chars
	if ck.sr.largeEnum > 0 && len(list) > ck.sr.largeEnum && chars > ck.sr.largeEnumChars {
		return ck.fail(path, "an enum of %d values holds %d characters, more than %d", len(list), chars, ck.sr.largeEnumChars)
	}
	return nil
}

func (ck *checker) object(n map[string]any, path string, depth int, isRoot bool) error {
	sr := ck.sr
	if sr.maxDepth > 0 && depth > sr.maxDepth { // objects within objects; the root is level 1
		return ck.fail(path, "objects nested deeper than %d levels", sr.maxDepth)
	}
	props, hasProps := n["properties"]
	pm, isMap := props.(map[string]any)
	if hasProps && !isMap {
		return ck.fail(path, "properties must be an object")
	}
	if sr.nonEmptyObjects && len(pm) == 0 {
		return ck.fail(path, "an object must list at least one property")
	}
	ap, hasAP := n["additionalProperties"]
	if hasAP {
		switch a := ap.(type) {
		case bool:
		case map[string]any:
			if err := ck.node(a, path+"/additionalProperties", depth+1, false); err != nil {
				return err
			}
		default:
			return ck.fail(path, "additionalProperties must be a boolean or a schema")
		}
	}
	if sr.closed && ap != false {
		return ck.fail(path, "every object must have additionalProperties: false")
	}
	if sr.closed && !hasProps {
		return ck.fail(path, "every object must list its properties")
	}
	req, hasReq := n["required"]
	var names []string
	if hasReq {
		list, isList := req.([]any)
		if !isList {
			return ck.fail(path, "required must be a list of names")
		}
		for _, x := range list {
			s, isString := x.(string)
			if !isString {
				return ck.fail(path, "required must be a list of names")
			}
			if _, ok := pm[s]; !ok && (sr.closed || sr.nonEmptyObjects) {
				return ck.fail(path, "required names %q, which properties does not list", s)
			}
			names = append(names, s)
		}
	}
	if sr.allRequired {
		for _, k := range sortedKeys(pm) {
			if !slices.Contains(names, k) {
				return ck.fail(path, "every property must be required; %q is not", k)
			}
		}
	}
	for _, k := range sortedKeys(pm) {
		ck.properties++
		ck.stringChars += utf8.RuneCountInString(k)
		m, isMap := pm[k].(map[string]any)
		if !isMap {
			return ck.fail(path+"/properties/"+escapePointer(k), "a property must be a schema object")
		}
		if err := ck.node(m, path+"/properties/"+escapePointer(k), depth+1, false); err != nil {
			return err
		}
	}
	_ = isRoot
	return nil
}
