package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Loopback admits the requests of this machine only: the connection's
// remote address is a loopback address, the Host header a loopback name
// or address, and the Origin header, when sent, a loopback origin (a web
// page that renamed itself by DNS rebinding has neither). It grants the
// default view to the subject "loopback". Behind a reverse proxy on the
// same machine every client looks local: use tokens there.
func Loopback() Policy {
	return PolicyFunc(func(r *http.Request) (Grant, error) {
		refuse := func(why string) (Grant, error) {
			return Grant{}, &Error{Status: http.StatusForbidden, Reason: why, Err: ErrNotLoopback, rank: rankNotHere}
		}
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return refuse("only clients on this machine are admitted")
		}
		if !loopbackHost(r.Host) {
			return refuse("the Host header is not a loopback name")
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !loopbackName(u.Hostname()) {
				return refuse("the Origin header is not a loopback origin")
			}
		}
		return Grant{Subject: "loopback"}, nil
	})
}

// loopbackHost reports whether a Host header (name and optional port)
// names this machine. An empty Host (HTTP/1.0) counts: the connection's
// address has been checked already.
func loopbackHost(hostport string) bool {
	if hostport == "" {
		return true
	}
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	}
	return loopbackName(name)
}

func loopbackName(h string) bool {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// MinTokenBytes is the shortest static bearer token Tokens accepts.
const MinTokenBytes = 16

// maxTokenBytes bounds the bearer token read from a request.
const maxTokenBytes = 16 << 10

// constantTimeCompare is subtle.ConstantTimeCompare; a test counts calls.
var constantTimeCompare = subtle.ConstantTimeCompare

// staticToken is a token's SHA-256 and its view: the token itself is not
// kept.
type staticToken struct {
	sum  [sha256.Size]byte
	view string
}

// Tokens admits a request whose bearer token is one of the map's keys,
// with the view it maps to ("" is the default view). Tokens are compared
// in constant time, over their SHA-256 (so a length leaks nothing), with
// every entry compared on every request; only the hashes are kept. A
// token shorter than MinTokenBytes, or with a character RFC 6750 does
// not allow in a bearer token, is an error that names its view, never
// the token.
func Tokens(tokens map[string]string) (Policy, error) {
	set := make([]staticToken, 0, len(tokens))
	for tok, view := range tokens {
		if len(tok) < MinTokenBytes {
			return nil, fmt.Errorf("the bearer token for view %q is %d bytes: at least %d are needed (for example 32 random bytes, hex-encoded)", view, len(tok), MinTokenBytes)
		}
		if len(tok) > maxTokenBytes || !isB64Token(tok) {
			return nil, fmt.Errorf("the bearer token for view %q is not a valid bearer token (RFC 6750: letters, digits and -._~+/ then =, at most 16 KiB)", view)
		}
		set = append(set, staticToken{sum: sha256.Sum256([]byte(tok)), view: view})
	}
	if len(set) == 0 {
		return nil, errors.New("no bearer token given")
	}
	// A fixed order (by hash) so that nothing about the map's order shows.
	slices.SortFunc(set, func(a, b staticToken) int { return strings.Compare(string(a.sum[:]), string(b.sum[:])) })
	return PolicyFunc(func(r *http.Request) (Grant, error) {
		tok, err := bearerToken(r)
		if err != nil {
			return Grant{}, err
		}
		sum := sha256.Sum256([]byte(tok))
		found := -1
		for i := range set {
			if constantTimeCompare(sum[:], set[i].sum[:]) == 1 {
				found = i
			}
		}
		if found < 0 {
			return Grant{}, &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Reason: "the bearer token is not one this server knows", Err: ErrInvalidToken, rank: rankNotMine}
		}
		v := set[found].view
		return Grant{View: v, Subject: "static token of view " + strconvQuote(v)}, nil
	}), nil
}

func strconvQuote(v string) string {
	if v == "" {
		return "(default)"
	}
	return fmt.Sprintf("%q", v)
}

// bearerToken reads the request's bearer token (RFC 6750 section 2.1).
// No Authorization header, or another scheme, is ErrNoToken; two headers,
// or a malformed or oversized token, is ErrInvalidToken.
func bearerToken(r *http.Request) (string, *Error) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", &Error{Status: http.StatusUnauthorized, Reason: "a bearer token is required", Err: ErrNoToken, rank: rankNoToken}
	}
	if len(vals) > 1 {
		return "", &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Reason: "more than one Authorization header", Err: ErrInvalidToken, rank: rankClaimed}
	}
	scheme, tok, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", &Error{Status: http.StatusUnauthorized, Reason: "a bearer token is required", Err: ErrNoToken, rank: rankNoToken}
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || len(tok) > maxTokenBytes || !isB64Token(tok) {
		return "", &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Reason: "the bearer token is malformed", Err: ErrInvalidToken, rank: rankNotMine}
	}
	return tok, nil
}

// isB64Token reports whether s is an RFC 6750 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}
