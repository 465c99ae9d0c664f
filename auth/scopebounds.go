package auth

import (
	"fmt"
	"strings"
)

// The bounds of a scope set, whatever asks for it (a challenge, the
// resource's scopes_supported, the Config, a stored token): scopes are
// sent in the authorization URL, every token request and the stored token,
// and a server that could make the set grow would grow them all, request
// after request. Real scope sets are a few dozen short names.
const (
	maxScopes     = 64      // scopes in one set
	maxScopeBytes = 4 << 10 // the set as sent: the scopes joined by spaces
)

// ScopeError says that a scope set is refused, and nothing was asked for:
// the scopes a server's challenge (or its scopes_supported) asks for, with
// those asked for before, are more than 64 or 4 KiB, or a scope is not a
// scope-token of RFC 6749 section 3.3. The request the challenge answered
// is not sent again.
type ScopeError struct {
	// Source is what asked for the scopes: "challenge",
	// "scopes_supported", or "config".
	Source string
	// Count and Bytes measure the set asked for (joined by spaces).
	Count, Bytes int
	// Reason says which bound or rule it breaks.
	Reason string
}

func (e *ScopeError) Error() string {
	who := map[string]string{
		"challenge":        "the server's challenge asks for",
		"scopes_supported": "the server's resource metadata lists (scopes_supported)",
		"config":           "the configuration asks for",
	}[e.Source]
	if who == "" {
		who = e.Source + " asks for"
	}
	return fmt.Sprintf("%s %d scopes (%d bytes), with those asked for before: %s; none were asked for", who, e.Count, e.Bytes, e.Reason)
}

// scopeSize is the count and the length of scopes as sent.
func scopeSize(scopes []string) (count, bytes int) {
	for _, s := range scopes {
		bytes += len(s)
	}
	if len(scopes) > 1 {
		bytes += len(scopes) - 1
	}
	return len(scopes), bytes
}

// checkScopes says what is wrong with a scope set, nil when nothing is:
// more than maxScopes scopes, more than maxScopeBytes as sent, or a scope
// that is not 1*NQCHAR (%x21 / %x23-5B / %x5D-7E: printable ASCII but
// space, " and \).
func checkScopes(scopes []string) error {
	n, size := scopeSize(scopes)
	switch {
	case n > maxScopes:
		return fmt.Errorf("more than %d scopes", maxScopes)
	case size > maxScopeBytes:
		return fmt.Errorf("more than %d bytes", maxScopeBytes)
	}
	for i, s := range scopes {
		if s == "" {
			return fmt.Errorf("scope %d is empty", i+1)
		}
		if j := strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e || r == '"' || r == '\\' }); j >= 0 {
			return fmt.Errorf("scope %d holds %q, which a scope cannot (RFC 6749 section 3.3)", i+1, s[j:j+1])
		}
	}
	return nil
}
