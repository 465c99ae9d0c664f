package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
)

// redirectFor is the redirect URI a dynamically registered client uses
// with the authorization server m. When m does not say that it sends iss
// in its responses (RFC 9207), and the redirect is a loopback one, it is
// Config.RedirectURL with a path segment of m's own (issuerSegment):
// http://127.0.0.1:PORT/callback/3f2a…. A response that comes back to
// another authorization server's redirect URI is then refused (the
// defence against a mix-up without iss, RFC 9700 section 4.4.2), where one
// redirect URI for every issuer let a code from one be sent to another's
// token endpoint. Otherwise it is Config.RedirectURL: with iss, the
// response says whose it is; a redirect of another kind (a custom scheme,
// a web page) is the host's to route, and is used as it is.
func (a *Authorizer) redirectFor(m *serverMetadata) string {
	raw := a.cfg.RedirectURL
	if m.AuthorizationResponseIssParameterSupported {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) || u.RawQuery != "" {
		return raw
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + issuerSegment(m.Issuer)
	u.RawPath = ""
	return u.String()
}

// issuerSegment is a path segment that stands for issuer: 16 hex digits
// of its SHA-256.
func issuerSegment(issuer string) string {
	h := sha256.Sum256([]byte(issuer))
	return hex.EncodeToString(h[:8])
}
