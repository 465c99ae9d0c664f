package gateway

import "strings"

// A resource read names a URI; when no server lists it, the gateway asks
// which server's resource template it matches. matchTemplate is that
// test, for the templates of RFC 6570 as servers write them:
//
//   - literal text matches itself (case-sensitive);
//   - {var} and {a,b} (simple expansion, level 1) match one or more
//     characters other than '/', '?' and '#': a level-1 value is
//     percent-encoded, so it holds none of them;
//   - {+var} and {#var} (reserved expansion, level 2) match any run of
//     characters, '/' included, so file:///{+path} covers every path;
//   - an expression with another operator ({/x}, {.x}, {;x}, {?x}, {&x},
//     level 3) matches any run, the empty one included.
//
// A template that does not parse (an unclosed brace) matches nothing.
// The match is a decision, not an extraction: it never says what the
// variables were.

// maxTemplateLen bounds the templates and URIs matched: a server's
// listing and a client's URI are untrusted input.
const maxTemplateLen = 4096

type tplPart struct {
	lit string // literal text, when op is 0
	op  byte   // 0: literal; 's': simple; 'r': any run, non-empty; 'o': any run
}

// parseTemplate splits t into literals and expressions; ok is false when
// t is not a template.
func parseTemplate(t string) (parts []tplPart, ok bool) {
	if len(t) > maxTemplateLen {
		return nil, false
	}
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return append(parts, tplPart{lit: t}), true
		}
		if i > 0 {
			parts = append(parts, tplPart{lit: t[:i]})
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return nil, false
		}
		expr := t[i+1 : i+j]
		if expr == "" || strings.ContainsAny(expr, "{") {
			return nil, false
		}
		op := byte('s')
		switch expr[0] {
		case '+', '#':
			op = 'r'
		case '/', '.', ';', '?', '&':
			op = 'o'
		}
		parts = append(parts, tplPart{op: op})
		t = t[i+j+1:]
	}
	return parts, true
}

// matchTemplate reports whether uri is an expansion of template (see
// above). It runs in O(len(parts) × len(uri)) time.
func matchTemplate(template, uri string) bool {
	if len(uri) > maxTemplateLen {
		return false
	}
	parts, ok := parseTemplate(template)
	if !ok {
		return false
	}
	// can[i] says whether uri[i:] matches the parts after the current
	// one; filled from the last part back.
	n := len(uri)
	can := make([]bool, n+1)
	can[n] = true
	next := make([]bool, n+1)
	for k := len(parts) - 1; k >= 0; k-- {
		p := parts[k]
		clear(next)
		switch p.op {
		case 0:
			for i := 0; i+len(p.lit) <= n; i++ {
				next[i] = can[i+len(p.lit)] && uri[i:i+len(p.lit)] == p.lit
			}
		case 's':
			// next[i]: some j > i with uri[i:j] free of / ? # and can[j].
			reach := false
			for i := n - 1; i >= 0; i-- {
				if strings.IndexByte("/?#", uri[i]) >= 0 {
					reach = false
				} else {
					reach = reach || can[i+1]
				}
				next[i] = reach
			}
		case 'r': // some j > i with can[j]
			reach := false
			for i := n - 1; i >= 0; i-- {
				reach = reach || can[i+1]
				next[i] = reach
			}
		case 'o': // some j >= i with can[j]
			reach := false
			for i := n; i >= 0; i-- {
				reach = reach || can[i]
				next[i] = reach
			}
		}
		can, next = next, can
	}
	return can[0]
}
