package servehttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Header names of the request metadata of revision 2026-07-28.
const (
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	// HeaderParamPrefix starts the header of a tool parameter annotated
	// x-mcp-header: Mcp-Param-{annotation}.
	HeaderParamPrefix = "Mcp-Param-"
)

// The Base64 sentinel of Mcp-Name and Mcp-Param values, case-sensitive.
const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// Why a header value is refused.
var (
	ErrHeaderChars   = errors.New("characters outside visible ASCII, space and tab")
	ErrSentinel      = errors.New("the Base64 sentinel does not decode")
	ErrSentinelUTF8  = errors.New("the Base64 sentinel is not UTF-8")
	ErrHeaderRepeats = errors.New("the header is repeated")
)

// PlainValue reads the value of a header that carries no sentinel
// (MCP-Protocol-Version, Mcp-Method): without its surrounding spaces and
// tabs (RFC 9110 optional whitespace), made of visible ASCII, space and
// tab only.
func PlainValue(v string) (string, error) {
	v = strings.Trim(v, " \t")
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return "", ErrHeaderChars
		}
	}
	return v, nil
}

// DecodeValue reads an Mcp-Name or Mcp-Param value as the server compares
// it with the body: PlainValue's rules, then a value that is the whole
// sentinel =?base64?…?= is decoded (standard alphabet, padded, canonical)
// and must be UTF-8. A tab inside a plain value is accepted, as RFC 9110
// allows it, though a client must encode it.
func DecodeValue(v string) (string, error) {
	v, err := PlainValue(v)
	if err != nil {
		return "", err
	}
	inner, ok := strings.CutPrefix(v, sentinelPrefix)
	if !ok {
		return v, nil
	}
	if inner, ok = strings.CutSuffix(inner, sentinelSuffix); !ok {
		return v, nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil {
		return "", ErrSentinel
	}
	if !utf8.Valid(b) {
		return "", ErrSentinelUTF8
	}
	return string(b), nil
}

// EncodeValue returns s as a conforming client sends it in Mcp-Name or
// Mcp-Param: itself when it is visible ASCII with inner spaces, else (a
// control character, a tab, non-ASCII, surrounding whitespace, or a value
// that looks like the sentinel) the sentinel of its UTF-8 bytes. Servers'
// tests build requests with it; the client has its own (internal/reqmeta).
func EncodeValue(s string) string {
	plain := s == strings.Trim(s, " \t") &&
		!(strings.HasPrefix(s, sentinelPrefix) && strings.HasSuffix(s, sentinelSuffix))
	for i := 0; plain && i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			plain = false
		}
	}
	if plain {
		return s
	}
	return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(s)) + sentinelSuffix
}

// Single returns the one value of header name in h: present is false
// when it is absent; ErrHeaderRepeats when it comes more than once.
func Single(h http.Header, name string) (v string, present bool, err error) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", false, nil
	case 1:
		return vs[0], true, nil
	}
	return "", true, ErrHeaderRepeats
}

// ParamHeader is one x-mcp-header annotation of a tool's inputSchema.
type ParamHeader struct {
	Name string   // as the schema spells it: the header is Mcp-Param-{Name}
	Path []string // the chain of properties keys from the schema's root
	Type string   // "string", "integer" or "boolean"
}

// Header returns the parameter's header name.
func (p ParamHeader) Header() string { return HeaderParamPrefix + p.Name }

// maxSchemaDepth bounds the nesting of a schema the annotations are read
// from.
const maxSchemaDepth = 64

// ParamHeaders returns the x-mcp-header annotations of a tool's
// inputSchema, checked against the rules of 2026-07-28: a non-empty HTTP
// token, case-insensitively unique, on a property of type string, integer
// or boolean, reached from the root through properties keys only. Values
// (const, enum, default, examples) are not schemas and are not read.
func ParamHeaders(schema json.RawMessage) ([]ParamHeader, error) {
	if !bytes.Contains(schema, []byte("x-mcp-header")) {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	var out []ParamHeader
	seen := map[string]string{}
	var walk func(node any, path []string, reachable bool, depth int) error
	walk = func(node any, path []string, reachable bool, depth int) error {
		if depth > maxSchemaDepth {
			return fmt.Errorf("inputSchema nests deeper than %d levels", maxSchemaDepth)
		}
		switch n := node.(type) {
		case []any:
			for _, v := range n {
				if err := walk(v, path, false, depth+1); err != nil {
					return err
				}
			}
		case map[string]any:
			if v, ok := n["x-mcp-header"]; ok {
				p, err := annotation(n, v, path, reachable)
				if err != nil {
					return err
				}
				key := strings.ToLower(p.Name)
				if prev, dup := seen[key]; dup {
					return fmt.Errorf("x-mcp-header %q of %s repeats that of %s", p.Name, strings.Join(path, "."), prev)
				}
				seen[key] = strings.Join(path, ".")
				out = append(out, p)
			}
			for _, k := range slices.Sorted(maps.Keys(n)) {
				switch k {
				case "x-mcp-header", "const", "enum", "default", "examples":
					continue
				case "properties":
					props, ok := n[k].(map[string]any)
					if !ok {
						continue
					}
					for _, name := range slices.Sorted(maps.Keys(props)) {
						if err := walk(props[name], append(slices.Clip(path), name), reachable, depth+1); err != nil {
							return err
						}
					}
				default:
					if err := walk(n[k], path, false, depth+1); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// annotation checks one annotated property.
func annotation(prop map[string]any, v any, path []string, reachable bool) (ParamHeader, error) {
	where := strings.Join(path, ".")
	if where == "" {
		where = "the schema's root"
	}
	name, ok := v.(string)
	switch {
	case !ok:
		return ParamHeader{}, fmt.Errorf("x-mcp-header of %s is not a string", where)
	case name == "":
		return ParamHeader{}, fmt.Errorf("x-mcp-header of %s is empty", where)
	case !isToken(name):
		return ParamHeader{}, fmt.Errorf("x-mcp-header %q of %s is not an HTTP token", name, where)
	case !reachable || len(path) == 0:
		return ParamHeader{}, fmt.Errorf("x-mcp-header %q of %s is not reached through properties alone", name, where)
	}
	typ, _ := prop["type"].(string)
	switch typ {
	case "string", "integer", "boolean":
	default:
		return ParamHeader{}, fmt.Errorf("x-mcp-header %q of %s is on type %v, not string, integer or boolean", name, where, prop["type"])
	}
	return ParamHeader{Name: name, Path: path, Type: typ}, nil
}

// isToken reports whether s is an HTTP field-name token (RFC 9110 tchar).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// ParamMismatch is a Mcp-Param header that breaks the rules: Header is the
// header at fault, Why says how.
type ParamMismatch struct {
	Header string
	Why    string
}

// CheckParams checks the Mcp-Param headers of a tools/call against its
// arguments: each annotated argument present (not null) comes with its
// header, once, equal once decoded (integers compared as numbers, booleans
// as true or false); no header comes without its argument. It returns nil
// when all is well, and nil for arguments that are not JSON (the tool
// reports those itself).
func CheckParams(h http.Header, ps []ParamHeader, args json.RawMessage) *ParamMismatch {
	if len(ps) == 0 {
		return nil
	}
	var root any
	if len(bytes.TrimSpace(args)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		if err := dec.Decode(&root); err != nil {
			return nil
		}
	}
	for _, p := range ps {
		name := p.Header()
		raw, sent, err := Single(h, name)
		body, present := valueAt(root, p.Path)
		switch {
		case err != nil:
			return &ParamMismatch{name, name + " is repeated"}
		case !present && sent:
			return &ParamMismatch{name, name + " is sent but argument " + strings.Join(p.Path, ".") + " is absent"}
		case !present:
			continue
		case !sent:
			return &ParamMismatch{name, name + " is missing for argument " + strings.Join(p.Path, ".")}
		}
		got, err := DecodeValue(raw)
		if err != nil {
			return &ParamMismatch{name, name + ": " + err.Error()}
		}
		if !Matches(got, body) {
			b, _ := json.Marshal(body)
			return &ParamMismatch{name, fmt.Sprintf("%s header value %q does not match body value %s", name, got, b)}
		}
	}
	return nil
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

// maxSafeInteger is 2^53-1: x-mcp-header integers stay within ±it.
const maxSafeInteger = 1<<53 - 1

// Matches compares a decoded header value with the body's value (decoded
// with json.Number): strings exactly, booleans as "true" or "false",
// integers numerically (42.0 equals 42) within ±(2^53-1).
func Matches(header string, body any) bool {
	switch b := body.(type) {
	case string:
		return header == b
	case bool:
		return header == strconv.FormatBool(b)
	case json.Number:
		hf, err1 := strconv.ParseFloat(header, 64)
		bf, err2 := strconv.ParseFloat(b.String(), 64)
		return err1 == nil && err2 == nil && hf == bf && math.Abs(bf) <= maxSafeInteger && !math.IsInf(hf, 0)
	}
	return false
}
