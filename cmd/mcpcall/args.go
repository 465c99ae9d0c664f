package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
)

// argsHelp explains how arguments are given; tools call and prompts get
// print it.
const argsHelp = `Arguments:
  key=value        typed by the tool's inputSchema: number, integer, boolean,
                   array, object and null are parsed; a string stays a string
  key:=RAW_JSON    exact JSON, whatever the schema says (n:=5, tags:='["a"]')
  key=a key=b      repeating an array argument appends items
  --args JSON      a JSON object; --args @file reads it from a file, --args - from stdin
  (nothing)        a JSON object piped on stdin is used when no argument is given
key=value pairs are applied over --args. The arguments are checked against the
inputSchema before anything is sent (--no-validate skips that).`

// pair is one key=value or key:=json argument from the command line.
type pair struct {
	key   string
	value string
	raw   bool // key:=json
}

// parsePairs reads key=value and key:=json arguments.
func parsePairs(list []string) ([]pair, error) {
	out := make([]pair, 0, len(list))
	for _, s := range list {
		key, value, ok := strings.Cut(s, "=")
		if !ok || key == "" || key == ":" {
			return nil, usageErr("argument %q is not key=value or key:=json", s)
		}
		p := pair{key: key, value: value}
		if k, isRaw := strings.CutSuffix(key, ":"); isRaw {
			p.key, p.raw = k, true
		}
		out = append(out, p)
	}
	return out, nil
}

// looksLikePair reports whether s reads as a key=value argument (and so
// cannot be a target).
func looksLikePair(s string) bool {
	key, _, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return false
	}
	return !strings.Contains(key, "/") && !strings.Contains(key, "://")
}

// readJSONArg reads the value of --args or --params: JSON text, @file,
// or - for stdin. It returns the bytes, checked to be one JSON object.
func readJSONArg(flag, value string, stdin io.Reader) (json.RawMessage, error) {
	var data []byte
	source := flag
	switch {
	case value == "-":
		if stdin == nil {
			return nil, usageErr("%s -: no standard input", flag)
		}
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, usageErr("%s -: reading stdin: %v", flag, err)
		}
		data, source = b, flag+" - (stdin)"
	case strings.HasPrefix(value, "@"):
		b, err := os.ReadFile(value[1:])
		if err != nil {
			return nil, usageErr("%s %s: %v", flag, value, err)
		}
		data, source = b, flag+" "+value
	default:
		data = []byte(value)
	}
	return checkObject(data, source)
}

// checkObject accepts data when it is exactly one JSON object.
func checkObject(data []byte, source string) (json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, usageErr("%s: want a JSON object ({...})", source)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, usageErr("%s: invalid JSON: %v", source, err)
	}
	if err := nothingAfter(dec); err != nil {
		return nil, usageErr("%s: %v", source, err)
	}
	return v, nil
}

// nothingAfter checks that dec has only white space left after the value
// it decoded. (dec.More says false before a stray ] or }, which would then
// be dropped unseen.)
func nothingAfter(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value, or text after it")
	}
	return nil
}

// decodeObject decodes a JSON object keeping numbers exact.
func decodeObject(raw json.RawMessage) (map[string]any, error) {
	obj := map[string]any{}
	if len(raw) == 0 {
		return obj, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// applyPairs sets each pair in obj, typed by the property's schema.
func applyPairs(obj map[string]any, pairs []pair, s schema) error {
	seen := map[string]int{}
	for _, p := range pairs {
		seen[p.key]++
		if p.raw {
			v, err := decodeJSONValue(p.value)
			if err != nil {
				return usageErr("%s:=%s: not JSON: %v", p.key, p.value, err)
			}
			obj[p.key] = v
			continue
		}
		prop := s.property(p.key)
		if isArraySchema(s, prop) && !(strings.HasPrefix(strings.TrimSpace(p.value), "[") && seen[p.key] == 1) {
			items, _ := prop["items"].(map[string]any)
			item := typeValue(s, items, p.value)
			if prev, ok := obj[p.key].([]any); ok && seen[p.key] > 1 {
				obj[p.key] = append(prev, item)
			} else {
				obj[p.key] = []any{item}
			}
			continue
		}
		obj[p.key] = typeValue(s, prop, p.value)
	}
	return nil
}

func isArraySchema(s schema, prop map[string]any) bool {
	types := schemaTypes(s, prop)
	return slices.Contains(types, "array") && !slices.Contains(types, "string")
}

// schemaTypes lists the types a schema allows, looking into anyOf/oneOf
// alternatives when it has no type of its own. Like the check, it goes at
// most maxCheckDepth alternatives deep and looks at maxTypeNodes in all:
// an alternative may refer to its own ancestor.
func schemaTypes(s schema, prop map[string]any) []string {
	budget := maxTypeNodes
	return s.types(prop, 0, &budget)
}

// maxTypeNodes bounds the subschemas schemaTypes looks at for one property.
const maxTypeNodes = 1000

func (s schema) types(prop map[string]any, depth int, budget *int) []string {
	if depth >= maxCheckDepth || *budget <= 0 {
		return nil
	}
	*budget--
	prop = s.resolve(prop)
	if prop == nil {
		return nil
	}
	if t := stringList(prop["type"]); len(t) > 0 {
		return t
	}
	var out []string
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, _ := prop[key].([]any)
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				for _, t := range s.types(m, depth+1, budget) {
					if !slices.Contains(out, t) {
						out = append(out, t)
					}
				}
			}
		}
	}
	return out
}

// typeValue turns the text of a key=value argument into the JSON value
// the property's schema asks for. A string property keeps the text; a
// value that does not parse as the type stays a string, and validation
// then names the field.
func typeValue(s schema, prop map[string]any, text string) any {
	prop = s.resolve(prop)
	types := schemaTypes(s, prop)
	if len(types) == 0 {
		if enum, ok := prop["enum"].([]any); ok {
			for _, e := range enum {
				if compactJSON(e) == text {
					return e
				}
			}
		}
		return text
	}
	if slices.Contains(types, "null") && text == "null" {
		return nil
	}
	if slices.Contains(types, "string") {
		return text
	}
	for _, t := range types {
		switch t {
		case "integer", "number":
			if n, ok := jsonNumber(text); ok && hasType(n, t) {
				return n
			}
		case "boolean":
			switch strings.ToLower(text) {
			case "true":
				return true
			case "false":
				return false
			}
		case "object", "array":
			if v, err := decodeJSONValue(text); err == nil && hasType(v, t) {
				return v
			}
		}
	}
	return text
}

// jsonNumber accepts text that is a JSON number literal.
func jsonNumber(text string) (json.Number, bool) {
	if text == "" || !(text[0] == '-' || text[0] >= '0' && text[0] <= '9') || !json.Valid([]byte(text)) {
		return "", false
	}
	return json.Number(text), true
}

// decodeJSONValue decodes one JSON value, numbers kept exact.
func decodeJSONValue(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if err := nothingAfter(dec); err != nil {
		return nil, err
	}
	return v, nil
}

// callArgs gathers the arguments of a call from --args, stdin and pairs.
// base is the --args object (nil when not given); the result is the object
// to validate and the exact bytes to send.
func callArgs(base json.RawMessage, pairs []pair, s schema) (map[string]any, json.RawMessage, error) {
	obj, err := decodeObject(base)
	if err != nil {
		return nil, nil, usageErr("--args: %v", err)
	}
	if len(pairs) == 0 && len(base) > 0 {
		return obj, base, nil // send what the user wrote, byte for byte
	}
	if err := applyPairs(obj, pairs, s); err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, usageErr("arguments: %v", err)
	}
	return obj, raw, nil
}
