package testservers

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// headerParam is one x-mcp-header annotation of a tool's inputSchema.
type headerParam struct {
	name string   // as the schema spells it: the header is Mcp-Param-<name>
	path []string // the chain of properties keys from the schema's root
	typ  string   // "string", "integer" or "boolean"
}

// HeaderParamPrefix starts the name of the headers that mirror tool
// parameters annotated with x-mcp-header (2026-07-28).
const HeaderParamPrefix = "Mcp-Param-"

// headerParams returns the x-mcp-header annotations of a tool's
// inputSchema, checked against the rules of 2026-07-28: a non-empty HTTP
// token, case-insensitively unique, on a property of type string, integer
// or boolean reached from the root through properties keys only.
func headerParams(schema json.RawMessage) ([]headerParam, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	var out []headerParam
	seen := map[string]string{}
	var walk func(node any, path []string, reachable bool) error
	walk = func(node any, path []string, reachable bool) error {
		switch n := node.(type) {
		case []any:
			for _, v := range n {
				if err := walk(v, path, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if v, ok := n["x-mcp-header"]; ok {
				p, err := checkHeaderAnnotation(n, v, path, reachable)
				if err != nil {
					return err
				}
				if prev, dup := seen[strings.ToLower(p.name)]; dup {
					return fmt.Errorf("x-mcp-header %q of %s repeats that of %s", p.name, strings.Join(path, "."), prev)
				}
				seen[strings.ToLower(p.name)] = strings.Join(path, ".")
				out = append(out, p)
			}
			for _, k := range slices.Sorted(maps.Keys(n)) {
				switch k {
				case "x-mcp-header", "const", "enum", "default", "examples":
					continue // values, not schemas
				case "properties":
					props, ok := n[k].(map[string]any)
					if !ok {
						continue
					}
					for _, name := range slices.Sorted(maps.Keys(props)) {
						if err := walk(props[name], append(slices.Clip(path), name), reachable); err != nil {
							return err
						}
					}
				default:
					if err := walk(n[k], path, false); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

// checkHeaderAnnotation checks one annotated property.
func checkHeaderAnnotation(prop map[string]any, v any, path []string, reachable bool) (headerParam, error) {
	where := strings.Join(path, ".")
	if where == "" {
		where = "the schema's root"
	}
	name, ok := v.(string)
	switch {
	case !ok:
		return headerParam{}, fmt.Errorf("x-mcp-header of %s is not a string", where)
	case name == "":
		return headerParam{}, fmt.Errorf("x-mcp-header of %s is empty", where)
	case !isToken(name):
		return headerParam{}, fmt.Errorf("x-mcp-header %q of %s is not an HTTP token", name, where)
	case !reachable || len(path) == 0:
		return headerParam{}, fmt.Errorf("x-mcp-header %q of %s is not reached through properties alone", name, where)
	}
	typ, _ := prop["type"].(string)
	switch typ {
	case "string", "integer", "boolean":
	default:
		return headerParam{}, fmt.Errorf("x-mcp-header %q of %s is on type %v, not string, integer or boolean", name, where, prop["type"])
	}
	return headerParam{name: name, path: path, typ: typ}, nil
}

// isToken reports whether s is an HTTP field-name token (RFC 9110 tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Base64 sentinel of Mcp-Name and Mcp-Param-* values.
const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

var errHeaderChars = errors.New("characters outside visible ASCII, space and tab")

// decodeHeaderValue returns the value a Mcp-Name or Mcp-Param-* header
// carries: its Base64 sentinel decoded, else itself once its characters
// are checked.
func decodeHeaderValue(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return "", errHeaderChars
		}
	}
	if len(v) >= len(sentinelPrefix)+len(sentinelSuffix) && strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		b, err := base64.StdEncoding.DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
		if err != nil {
			return "", fmt.Errorf("bad Base64 sentinel: %w", err)
		}
		if !utf8.Valid(b) {
			return "", errors.New("the Base64 sentinel is not UTF-8")
		}
		return string(b), nil
	}
	return v, nil
}

// EncodeHeaderValue returns v as a Mcp-Name or Mcp-Param-* header value
// must carry it: itself when it is plain visible ASCII (spaces inside
// allowed), else the Base64 sentinel =?base64?…?= of its UTF-8 bytes (as
// also for a value that looks like a sentinel). Tests use it to build
// requests by hand.
func EncodeHeaderValue(v string) string {
	plain := v == strings.TrimSpace(v) &&
		!(strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix))
	for i := 0; plain && i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			plain = false
		}
	}
	if plain {
		return v
	}
	return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + sentinelSuffix
}

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against
// its arguments: each annotated argument present (and not null) must come
// with its header, equal once decoded (integers compared as numbers), and
// no header may come without its argument. It returns the header at fault
// ("" when all is well) and why.
func checkParamHeaders(h http.Header, params []headerParam, args json.RawMessage) (header, why string) {
	var root any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return "", "" // the tool reports its bad arguments itself
	}
	for _, p := range params {
		name := HeaderParamPrefix + p.name
		values := h.Values(name)
		body, present := valueAt(root, p.path)
		switch {
		case len(values) > 1:
			return name, name + " is repeated"
		case !present && len(values) == 1:
			return name, name + " is sent but argument " + strings.Join(p.path, ".") + " is absent"
		case !present:
			continue
		case len(values) == 0:
			return name, name + " is missing for argument " + strings.Join(p.path, ".")
		}
		got, err := decodeHeaderValue(values[0])
		if err != nil {
			return name, name + ": " + err.Error()
		}
		if !headerMatches(got, body) {
			return name, fmt.Sprintf("%s header value %q does not match body value %s", name, got, jsonText(body))
		}
	}
	return "", ""
}

// valueAt returns the value at path in a decoded JSON value; absent when
// missing or null.
func valueAt(v any, path []string) (any, bool) {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}

// headerMatches compares a decoded header value with the body's value:
// strings exactly, numbers numerically, booleans as "true" or "false".
func headerMatches(header string, body any) bool {
	switch b := body.(type) {
	case string:
		return header == b
	case bool:
		return header == strconv.FormatBool(b)
	case json.Number:
		hf, err1 := strconv.ParseFloat(header, 64)
		bf, err2 := strconv.ParseFloat(b.String(), 64)
		return err1 == nil && err2 == nil && hf == bf
	}
	return false
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
