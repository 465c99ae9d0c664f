package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110,
// section 11.6.1): a scheme, and either a token68 or auth-params.
type Challenge struct {
	// Scheme is the auth-scheme as sent; compare it with strings.EqualFold.
	Scheme string
	// Token68 is the challenge's token68, if it has one instead of params.
	Token68 string
	// Params are the auth-params, names in lower case, values unquoted.
	Params map[string]string
}

// Param returns the value of the auth-param name (any case), or "".
func (c Challenge) Param(name string) string { return c.Params[strings.ToLower(name)] }

// Bearer challenge parameters (RFC 6750 section 3, RFC 9728 section 5.1).
const (
	paramResourceMetadata = "resource_metadata"
	paramScope            = "scope"
	paramError            = "error"
)

// ParseChallenges parses the values of WWW-Authenticate header fields (as
// http.Header.Values returns them) into their challenges, in order. A field
// value that does not follow the grammar is skipped whole, and reported in
// the error (which is returned along with the challenges of the other
// values): a malformed header cannot smuggle parameters into a challenge.
func ParseChallenges(values []string) ([]Challenge, error) {
	var out []Challenge
	var errs []error
	for _, v := range values {
		cs, err := parseChallengeList(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("WWW-Authenticate %q: %w", excerpt([]byte(v)), err))
			continue
		}
		out = append(out, cs...)
	}
	return out, errors.Join(errs...)
}

// challenge returns the OAuth challenge of h to follow: its DPoP one (RFC
// 9449 section 7.1) unless DPoP is off, else its first Bearer one; nil
// without either. A DPoP one tells s that the server wants DPoP-bound
// tokens.
func (s *serverState) challenge(h http.Header) *Challenge {
	cs, _ := ParseChallenges(h.Values("WWW-Authenticate"))
	var bearer, dpop *Challenge
	for i := range cs {
		switch {
		case strings.EqualFold(cs[i].Scheme, "Bearer") && bearer == nil:
			bearer = &cs[i]
		case strings.EqualFold(cs[i].Scheme, tokenTypeDPoP) && dpop == nil:
			dpop = &cs[i]
			s.wantsDPoP.Store(true)
		}
	}
	if dpop != nil && !s.a.cfg.NoDPoP {
		return dpop
	}
	return bearer
}

// scopes returns the challenge's scope parameter as a list.
func (c *Challenge) scopes() []string {
	if c == nil {
		return nil
	}
	return strings.Fields(c.Param(paramScope))
}

// challengeParser reads one field value.
type challengeParser struct {
	s   string
	pos int
}

var (
	errUnterminated = errors.New("unterminated quoted-string")
	errBadChar      = errors.New("unexpected character")
	errDuplicate    = errors.New("auth-param given twice in one challenge")
)

// parseChallengeList parses `#challenge`: challenges separated by commas,
// empty list elements allowed.
func parseChallengeList(s string) ([]Challenge, error) {
	p := &challengeParser{s: s}
	var out []Challenge
	for {
		p.skipListSeparators()
		if p.done() {
			return out, nil
		}
		scheme := p.token()
		if scheme == "" {
			return nil, p.errorf(errBadChar)
		}
		c := Challenge{Scheme: scheme}
		if !p.done() && p.peek() != ',' {
			if p.skipSpaces() == 0 {
				return nil, p.errorf(errBadChar)
			}
		}
		if t68, ok := p.token68(); ok {
			c.Token68 = t68
		} else if !p.done() && p.peek() != ',' {
			params, err := p.params()
			if err != nil {
				return nil, err
			}
			c.Params = params
		}
		out = append(out, c)
	}
}

// params reads `#auth-param` up to the end or to the next challenge.
func (p *challengeParser) params() (map[string]string, error) {
	params := map[string]string{}
	for {
		name := strings.ToLower(p.token())
		if name == "" {
			return nil, p.errorf(errBadChar)
		}
		p.skipSpaces()
		if p.done() || p.peek() != '=' {
			return nil, p.errorf(errBadChar)
		}
		p.pos++
		p.skipSpaces()
		var value string
		if !p.done() && p.peek() == '"' {
			v, err := p.quoted()
			if err != nil {
				return nil, err
			}
			value = v
		} else {
			value = p.token()
			if value == "" {
				return nil, p.errorf(errBadChar)
			}
		}
		if _, dup := params[name]; dup {
			return nil, p.errorf(errDuplicate)
		}
		params[name] = value
		p.skipSpaces()
		if p.done() {
			return params, nil
		}
		if p.peek() != ',' {
			return nil, p.errorf(errBadChar)
		}
		p.skipListSeparators()
		if p.done() {
			return params, nil
		}
		// Another auth-param (token BWS "="), or the next challenge.
		save := p.pos
		next := p.token()
		p.skipSpaces()
		isParam := next != "" && !p.done() && p.peek() == '='
		p.pos = save
		if !isParam {
			return params, nil
		}
	}
}

// token68 reads a token68 when the rest of the list element is one; else
// it leaves the position alone.
func (p *challengeParser) token68() (string, bool) {
	start := p.pos
	i := p.pos
	for i < len(p.s) && isToken68Char(p.s[i]) {
		i++
	}
	if i == start {
		return "", false
	}
	for i < len(p.s) && p.s[i] == '=' {
		i++
	}
	j := i
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	if j < len(p.s) && p.s[j] != ',' {
		return "", false
	}
	p.pos = j
	return p.s[start:i], true
}

// quoted reads a quoted-string and returns its unescaped content.
func (p *challengeParser) quoted() (string, error) {
	p.pos++ // the opening quote
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if p.pos+1 >= len(p.s) {
				return "", p.errorf(errUnterminated)
			}
			e := p.s[p.pos+1]
			if !(e == '\t' || e == ' ' || (e >= 0x21 && e != 0x7f)) {
				return "", p.errorf(errBadChar)
			}
			b.WriteByte(e)
			p.pos += 2
		case isQDText(c):
			// A run of them at once: a hostile header may be megabytes.
			end := p.pos + 1
			for end < len(p.s) && isQDText(p.s[end]) {
				end++
			}
			b.WriteString(p.s[p.pos:end])
			p.pos = end
		default:
			return "", p.errorf(errBadChar)
		}
	}
	return "", p.errorf(errUnterminated)
}

func (p *challengeParser) token() string {
	start := p.pos
	for p.pos < len(p.s) && isTokenChar(p.s[p.pos]) {
		p.pos++
	}
	return p.s[start:p.pos]
}

func (p *challengeParser) skipSpaces() int {
	n := 0
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
		n++
	}
	return n
}

func (p *challengeParser) skipListSeparators() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == ',') {
		p.pos++
	}
}

func (p *challengeParser) done() bool { return p.pos >= len(p.s) }
func (p *challengeParser) peek() byte { return p.s[p.pos] }

func (p *challengeParser) errorf(err error) error {
	return fmt.Errorf("at byte %d: %w", p.pos, err)
}

// isQDText reports whether c stands for itself in a quoted-string (RFC
// 9110 section 5.6.4's qdtext).
func isQDText(c byte) bool {
	return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e) || c >= 0x80
}

// isTokenChar reports whether c is a tchar (RFC 9110 section 5.6.2).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// isToken68Char reports whether c may appear in a token68 before its
// trailing "=" padding.
func isToken68Char(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}
