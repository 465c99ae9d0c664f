package main

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces a secret wherever mcpcall prints or traces one.
const redacted = "[REDACTED]"

// sensitiveHeader reports whether a header carries a credential: the
// standard ones, and any whose name says key, token, secret, password,
// or auth (X-Api-Key, X-Auth-Token, ...).
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, word := range []string{"key", "token", "secret", "password", "auth", "credential", "signature"} {
		if strings.Contains(n, word) {
			return true
		}
	}
	return false
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

// redactURL hides a password in the userinfo and the values of query
// parameters named like credentials.
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

// bearerText matches a bearer or basic credential inside any text.
var bearerText = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}`)

// redactText hides bearer and basic credentials that appear in free text
// (a header echoed in an error body, a token in a JSON-RPC message).
func redactText(s string) string {
	if !strings.ContainsAny(s, "bB") {
		return s
	}
	return bearerText.ReplaceAllStringFunc(s, func(m string) string {
		scheme := m[:strings.IndexAny(m, " \t\r\n\f")]
		return scheme + " " + redacted
	})
}

// secrets holds the literal credentials this run was given (--bearer-env,
// sensitive -H values, config headers), so that they are scrubbed from
// traces and messages even where no pattern would find them.
type secrets struct{ values []string }

func (s *secrets) add(v string) {
	v = strings.TrimSpace(v)
	if scheme, rest, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "basic")) {
		v = strings.TrimSpace(rest)
	}
	if len(v) >= 4 {
		s.values = append(s.values, v)
	}
}

// scrub replaces every known secret in text.
func (s *secrets) scrub(text string) string {
	for _, v := range s.values {
		text = strings.ReplaceAll(text, v, redacted)
	}
	return redactText(text)
}
