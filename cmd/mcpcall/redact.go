package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// redacted replaces a secret wherever mcpcall prints or traces one.
const redacted = "[REDACTED]"

// sensitiveHeader reports whether a header carries a credential: the
// standard ones, DPoP proofs, and any whose name says key, token, secret,
// password, or auth (X-Api-Key, X-Auth-Token, ...).
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie", "dpop":
		return true
	}
	for _, word := range []string{"key", "token", "secret", "password", "auth", "credential", "signature"} {
		if strings.Contains(n, word) {
			return true
		}
	}
	return false
}

// sensitiveEnv reports whether a variable given to a stdio server (-e, a
// config entry's "env", the whole environment with --inherit-env) holds a
// credential, by a word of its name: one of
// those sensitiveHeader looks for, as a word of its own or at the end of
// one (API_KEY, GITHUB_TOKEN, DB_PASSWORD, APIKEY, ACCESSTOKEN), not inside
// another (TOKENIZERS_PARALLELISM, MAX_TOKENS are settings). The
// environment is how a stdio server takes its credentials, and a server
// may well echo them on its stderr, which mcpcall passes on.
func sensitiveEnv(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	})
	for _, w := range words {
		for _, s := range []string{"key", "token", "secret", "password", "passwd", "auth", "credential", "credentials", "signature", "pat"} {
			if w == s || len(s) > 3 && strings.HasSuffix(w, s) || s == "key" && strings.HasSuffix(w, s) {
				return true
			}
		}
	}
	return false
}

// credentialValue reports whether v, the value of a variable sensitiveEnv
// names, could be a credential worth hiding: not a flag, a number or a
// word too short to be one (AUTH_ENABLED=true, MAX_TOKEN_AGE=3600), whose
// every occurrence in the output would be hidden, bending --json.
func credentialValue(v string) bool {
	if len(v) < 8 {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "false", "enabled", "disabled":
		return false
	}
	return strings.ContainsFunc(v, func(r rune) bool { return r < '0' || r > '9' })
}

// redactHeaderValue keeps the scheme of an Authorization-like value
// ("Bearer [REDACTED]") and hides the rest.
func redactHeaderValue(name, value string) string {
	if !sensitiveHeader(name) {
		return redactText(value)
	}
	if strings.EqualFold(name, "authorization") || strings.EqualFold(name, "proxy-authorization") {
		if scheme, _, ok := strings.Cut(value, " "); ok {
			return scheme + " " + redacted
		}
	}
	return redacted
}

// redactHeaders returns a copy of h, credentials hidden, one value per key
// joined with ", ".
func redactHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		v := strings.Join(vs, ", ")
		out[k] = redactHeaderValue(k, v)
	}
	return out
}

// secretQuery matches query parameter names that usually hold a credential.
var secretQuery = regexp.MustCompile(`(?i)(key|token|secret|password|auth|signature|sig|code)`)

// redactURL is a URL as --trace records it: a password in the userinfo
// and the values of query parameters named like credentials hidden, the
// rest (a session id, say) kept for debugging. Everything else mcpcall
// prints shows a URL as origin.RedactString does.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return redactText(raw)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		} else {
			u.User = url.User("REDACTED")
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		changed := false
		for k := range q {
			if secretQuery.MatchString(k) && k != "sessionId" {
				q[k] = []string{"REDACTED"}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

// redactText hides the value of a "Bearer" or "Basic" credential found in
// free text (a header echoed in an error body, a token in a JSON-RPC
// message) when the value has a credential's shape (credentialShaped): a
// server's own words after the scheme ("Missing bearer token", "Bearer
// realm=...") are kept. The secrets mcpcall knows are scrubbed literally
// before, wherever they are (secrets.scrub).
func redactText(s string) string {
	var b strings.Builder
	rest := s
	for {
		i := schemeIndex(rest)
		if i < 0 {
			break
		}
		start, end := credentialAfter(rest, i)
		if start < 0 {
			b.WriteString(rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		b.WriteString(rest[:start])
		b.WriteString(redacted)
		rest = rest[end:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(rest)
	return b.String()
}

// schemeIndex is where the first "bearer" or "basic" (any case) that
// starts a word begins in s, or -1.
func schemeIndex(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != 'b' || i > 0 && wordByte(s[i-1]) {
			continue
		}
		if hasPrefixFold(s[i:], "bearer") || hasPrefixFold(s[i:], "basic") {
			return i
		}
	}
	return -1
}

// credentialAfter finds the value after the scheme at s[i:]: blanks, then
// a token68 (RFC 9110: letters, digits, "-._~+/", then "=" padding). It
// returns the value's bounds, or -1 when there is none or it is not
// credential-shaped. A value followed by more of a name=value pair
// (realm="mcp", error=invalid_token) is an auth-param, not one.
func credentialAfter(s string, i int) (start, end int) {
	j := i + len("basic")
	if s[i]|0x20 == 'b' && s[i+1]|0x20 == 'e' {
		j = i + len("bearer")
	}
	if j < len(s) && wordByte(s[j]) {
		return -1, -1 // "basically", "bearers"
	}
	k := j
	for k < len(s) && strings.IndexByte(" \t\r\n\f\v", s[k]) >= 0 {
		k++
	}
	if k == j {
		return -1, -1
	}
	e := k
	for e < len(s) && (wordByte(s[e]) || strings.IndexByte("-.~+/", s[e]) >= 0) {
		e++
	}
	for e < len(s) && s[e] == '=' {
		e++
	}
	if e > k && s[e-1] == '=' && e < len(s) && (wordByte(s[e]) || s[e] == '"') {
		return -1, -1
	}
	for e > k && s[e-1] == '.' {
		e-- // a sentence's full stop
	}
	if !credentialShaped(s[k:e]) {
		return -1, -1
	}
	return k, e
}

// credentialShaped reports whether v, a value written after "Bearer" or
// "Basic", looks like a credential rather than a word: it is 8 bytes or
// longer, and it is 24 or longer, or holds a digit, one of ".~+/" or "="
// padding (JWTs, base64, opaque tokens), or a capital right after a small
// letter (base64 of "user:pass" is "dXNlcjpwYXNz"). Words, hyphenated or
// snake_case ("token", "well-formed", "invalid_token"), have none of these.
func credentialShaped(v string) bool {
	if len(v) < 8 {
		return false
	}
	if len(v) >= 24 {
		return true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case '0' <= c && c <= '9', strings.IndexByte(".~+/=", c) >= 0:
			return true
		case 'A' <= c && c <= 'Z' && i > 0 && 'a' <= v[i-1] && v[i-1] <= 'z':
			return true
		}
	}
	return false
}

// wordByte reports whether c is an ASCII letter, digit or underscore.
func wordByte(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '_'
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case; prefix is lower case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// secrets holds the literal credentials this run was given (--bearer-env,
// sensitive -H values, config headers, a stdio server's credential
// variables, client secrets, the tokens it reads from the token store or
// saves there), so that they are scrubbed from everything mcpcall writes,
// and from traces, even where no pattern would find them. It is safe for
// concurrent use: credentials are added as they become known, while output
// may be written.
type secrets struct {
	mu     sync.Mutex
	values []string // longest first, so that no shorter one cuts a longer one apart
}

// minSecretLen is the shortest credential scrubbed: a shorter value would
// hide too much ordinary text, and hides little.
const minSecretLen = 4

func (s *secrets) add(v string) {
	v = strings.TrimSpace(v)
	if scheme, rest, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "basic")) {
		v = strings.TrimSpace(rest)
	}
	if len(v) < minSecretLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	values := slices.Clone(s.values) // scrubKnown may be reading the old slice
	// The value as it is, and as encoding/json writes it inside a string
	// (escaping <, > and & among others), for --json output and traces; and
	// with "/" escaped as "\/" too, as some servers' JSON encoders do (a
	// result is printed with the server's own escapes).
	escaped := jsonEscape(v)
	for _, form := range []string{v, escaped, strings.ReplaceAll(escaped, "/", `\/`)} {
		if !slices.Contains(values, form) {
			values = append(values, form)
		}
	}
	slices.SortStableFunc(values, func(a, b string) int { return len(b) - len(a) })
	s.values = values
}

// jsonEscape is s as encoding/json writes it between quotes.
func jsonEscape(s string) string {
	b, err := json.Marshal(s)
	if err != nil || len(b) < 2 {
		return s
	}
	return string(b[1 : len(b)-1])
}

// scrub replaces every known secret in text, and bearer and basic
// credentials anywhere in it.
func (s *secrets) scrub(text string) string {
	return redactText(s.scrubKnown(text))
}

// scrubKnown replaces every known secret in text, and what is left of one
// cut short by "…" (as the negotiation report cuts long errors).
func (s *secrets) scrubKnown(text string) string {
	if s == nil {
		return text
	}
	s.mu.Lock()
	values := s.values
	s.mu.Unlock()
	if len(values) > 0 && strings.Contains(text, ellipsis) {
		text = hideCutSecrets(text, values) // first: a whole shorter secret may start a cut longer one
	}
	for _, v := range values {
		text = strings.ReplaceAll(text, v, redacted)
	}
	return text
}

const ellipsis = "…"

// hideCutSecrets replaces the start of a secret (minSecretLen bytes or
// more) that ends where text says "…".
func hideCutSecrets(text string, values []string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, ellipsis)
		if i < 0 {
			break
		}
		before := text[:i]
	values:
		for _, v := range values {
			for k := min(len(v)-1, len(before)); k >= minSecretLen; k-- {
				if strings.HasSuffix(before, v[:k]) {
					before = before[:len(before)-k] + redacted
					break values
				}
			}
		}
		b.WriteString(before)
		b.WriteString(ellipsis)
		text = text[i+len(ellipsis):]
	}
	b.WriteString(text)
	return b.String()
}

// scrubbedWriter is where mcpcall's output goes: stdout and stderr are
// each one, so every result, error, log record, progress line, prompt and
// trace line written there has this run's secrets replaced by [REDACTED].
// On stderr (text set) bearer and basic credentials found in the text are
// hidden too, as in --trace; on stdout they are not, so that a result
// that only mentions one is printed as the server sent it. Each write is
// scrubbed by itself: mcpcall writes a line, a log record or a document at
// a time.
type scrubbedWriter struct {
	w    io.Writer
	sec  *secrets
	text bool
}

func (s *scrubbedWriter) Write(p []byte) (int, error) {
	var out string
	if s.text {
		out = s.sec.scrub(string(p))
	} else {
		out = s.sec.scrubKnown(string(p))
	}
	if _, err := io.WriteString(s.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// maxStderrLine is how much of a stdio server's stderr line lineWriter
// holds back waiting for its end; a longer one goes on in pieces.
const maxStderrLine = 64 << 10

// lineWriter passes what a stdio server writes to its stderr on to w a
// whole line at a time (a longer line than maxStderrLine in pieces), so
// that the scrub behind w sees a credential whole even when the server's
// output reaches mcpcall cut in the middle of it (the transport copies
// stderr in 4 KiB reads). Flush writes what is left of an unfinished line.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if i := bytes.LastIndexByte(l.buf, '\n'); i >= 0 {
		if _, err := l.w.Write(l.buf[:i+1]); err != nil {
			return 0, err
		}
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
	if len(l.buf) >= maxStderrLine {
		if _, err := l.w.Write(l.buf); err != nil {
			return 0, err
		}
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

// Flush writes the unfinished line, if any.
func (l *lineWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		_, _ = l.w.Write(l.buf)
		l.buf = l.buf[:0]
	}
}
