package auth

import (
	"fmt"
	"strings"
)

// maxTokenLen bounds an access or a refresh token. An access token goes in
// a header of every request: 16 KiB is the whole header block Node.js
// takes by default, twice what many servers take for a single field
// (Apache's 8190 bytes, nginx's 8 KiB), and four times the largest JWTs
// identity providers issue with group claims. Nothing longer is stored or
// sent.
const maxTokenLen = 16 << 10

// TokenError says that a token cannot be used: the authorization server
// issued one too long, or with bytes an HTTP header or a form cannot
// carry, or the store holds such a one. It was neither stored nor sent.
type TokenError struct {
	// Source is where it came from: "token", "refresh",
	// "client_credentials", "jwt-bearer" (the answer to that request), or
	// "store".
	Source string
	// Reason says what is wrong with it, never the token itself.
	Reason string
}

func (e *TokenError) Error() string {
	if e.Source == "store" {
		return "the stored token cannot be used: " + e.Reason
	}
	return "the answer to the " + e.Source + " request holds a token that cannot be used: " + e.Reason
}

// checkTokenValue says what is wrong with an access or refresh token (what
// names it), "" when nothing is: 1 to maxTokenLen characters of RFC 6749's
// VSCHAR (printable ASCII), without a space in an access token, which
// goes after the scheme in an Authorization header (RFC 6750's b64token
// has none).
func checkTokenValue(what, v string, access bool) string {
	if len(v) > maxTokenLen {
		return fmt.Sprintf("the %s is %d bytes long, more than %d", what, len(v), maxTokenLen)
	}
	if i := strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e || (access && r == ' ') }); i >= 0 {
		return fmt.Sprintf("the %s holds a byte an HTTP header cannot carry (%q at byte %d)", what, v[i:i+1], i)
	}
	return ""
}

// check says what makes t unusable, nil when nothing does: its access and
// refresh tokens (checkTokenValue), and the scopes it keeps (checkScopes).
// source is where t came from (TokenError.Source).
func (t *Token) check(source string) error {
	if t.AccessToken == "" {
		return &TokenError{Source: source, Reason: "it has no access token"}
	}
	if r := checkTokenValue("access token", t.AccessToken, true); r != "" {
		return &TokenError{Source: source, Reason: r}
	}
	if r := checkTokenValue("refresh token", t.RefreshToken, false); r != "" {
		return &TokenError{Source: source, Reason: r}
	}
	if err := checkScopes(t.Scopes); err != nil {
		return &TokenError{Source: source, Reason: "its scopes: " + err.Error()}
	}
	if err := checkScopes(t.Granted); err != nil {
		return &TokenError{Source: source, Reason: "its granted scopes: " + err.Error()}
	}
	return nil
}
