package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Version prefixes every fingerprint: the rule it was made by.
const Version = "v1"

// members are the members of a tool definition a fingerprint covers:
// what a model reads and what a host shows its user.
var members = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// ErrInvalid is wrapped by the errors of Fingerprint: the definition is
// not one JSON object, or not one every reader reads alike (a member
// named twice, invalid UTF-8).
var ErrInvalid = errors.New("tool definition cannot be pinned")

// Fingerprint returns the fingerprint of a tool definition as a server
// sent it (a Tool object of tools/list): "v1:" and the SHA-256, in hex,
// of the canonical JSON of its name, title, description, inputSchema,
// outputSchema and annotations. Key order, white space, string escapes
// and other members (_meta, icons, execution, members of later
// revisions) do not change it; any other change does.
func Fingerprint(raw json.RawMessage) (string, error) {
	c, err := canonicalize(raw)
	if err != nil {
		return "", err
	}
	return c.fingerprint, nil
}

// canonical is a definition made canonical: its members, as a tree and
// as bytes, and their fingerprint.
type canonical struct {
	tree        *node
	bytes       []byte
	fingerprint string
}

func canonicalize(raw []byte) (*canonical, error) {
	root, err := parse(raw)
	if err != nil {
		return nil, err
	}
	if root.kind != '{' {
		return nil, fmt.Errorf("%w: it is not a JSON object", ErrInvalid)
	}
	keep := &node{kind: '{'}
	for i, name := range root.names {
		if slices.Contains(members, name) {
			keep.names = append(keep.names, name)
			keep.kids = append(keep.kids, root.kids[i])
		}
	}
	b := keep.appendTo(make([]byte, 0, len(raw)))
	return &canonical{tree: keep, bytes: b, fingerprint: fingerprintOf(b)}, nil
}

func fingerprintOf(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return Version + ":" + hex.EncodeToString(sum[:])
}

// A node is a JSON value: kind is '{', '[', '"', '0' (a number, text as
// written), or 'n', 't', 'f'. An object's names are sorted, each with its
// value in kids; an array's values are in kids.
type node struct {
	kind  byte
	text  string
	names []string
	kids  []*node
}

// parse reads exactly one JSON value, refusing a member named twice and
// invalid UTF-8, nested at most as deep as jsontext allows (10,000).
func parse(raw []byte) (*node, error) {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	n, err := parseValue(d)
	if err != nil {
		return nil, syntaxError(err)
	}
	if _, err := d.ReadToken(); err != io.EOF {
		if err == nil {
			return nil, fmt.Errorf("%w: more than one JSON value", ErrInvalid)
		}
		return nil, syntaxError(err)
	}
	return n, nil
}

func parseValue(d *jsontext.Decoder) (*node, error) {
	switch k := d.PeekKind(); k {
	case '{', '[':
		if _, err := d.ReadToken(); err != nil {
			return nil, err
		}
		n := &node{kind: byte(k)}
		end := jsontext.Kind(']')
		if k == '{' {
			end = '}'
		}
		for d.PeekKind() != end {
			if k == '{' {
				name, err := d.ReadToken()
				if err != nil {
					return nil, err
				}
				n.names = append(n.names, name.String())
			}
			kid, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, kid)
		}
		if _, err := d.ReadToken(); err != nil {
			return nil, err
		}
		if k == '{' {
			sortMembers(n)
		}
		return n, nil
	default:
		v, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		n := &node{kind: byte(v.Kind())}
		switch n.kind {
		case '"':
			s, err := jsontext.AppendUnquote(nil, v)
			if err != nil {
				return nil, err
			}
			n.text = string(s)
		case '0':
			n.text = string(v)
		}
		return n, nil
	}
}

// sortMembers sorts an object's members by name, byte by byte.
func sortMembers(n *node) {
	idx := make([]int, len(n.names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(n.names[a], n.names[b]) })
	names := make([]string, len(idx))
	kids := make([]*node, len(idx))
	for i, j := range idx {
		names[i], kids[i] = n.names[j], n.kids[j]
	}
	n.names, n.kids = names, kids
}

// syntaxError words a decoder's error without naming the decoder.
func syntaxError(err error) error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("%w: the JSON ends early", ErrInvalid)
		}
		return fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(err.Error(), "jsontext: "))
	}
	what := "invalid JSON"
	switch {
	case se.Err == io.ErrUnexpectedEOF:
		what = "the JSON ends early"
	case se.Err != nil:
		what = strings.TrimPrefix(se.Err.Error(), "jsontext: ")
	}
	ptr := string(se.JSONPointer)
	if se.Err == jsontext.ErrDuplicateName {
		what = fmt.Sprintf("member %q named twice", se.JSONPointer.LastToken())
		ptr = string(se.JSONPointer.Parent())
	}
	if ptr != "" {
		return fmt.Errorf("%w: %s within %s", ErrInvalid, what, truncate(ptr, 100))
	}
	return fmt.Errorf("%w: %s at byte %d", ErrInvalid, what, se.ByteOffset)
}

// appendTo writes n as canonical JSON: no white space, members sorted by
// name, strings in the shortest escaping (only '"', '\' and control
// characters escaped), numbers as written.
func (n *node) appendTo(b []byte) []byte {
	switch n.kind {
	case '{':
		b = append(b, '{')
		for i, name := range n.names {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, name)
			b = append(b, ':')
			b = n.kids[i].appendTo(b)
		}
		return append(b, '}')
	case '[':
		b = append(b, '[')
		for i, kid := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = kid.appendTo(b)
		}
		return append(b, ']')
	case '"':
		return appendString(b, n.text)
	case '0':
		return append(b, n.text...)
	case 't':
		return append(b, "true"...)
	case 'f':
		return append(b, "false"...)
	default:
		return append(b, "null"...)
	}
}

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// truncate cuts s to at most n bytes, at a character's start, marking
// the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
