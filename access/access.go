package access

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Grant is what a policy admits a request as: who it is and which view of
// the fleet it may see.
type Grant struct {
	// View is the view the client may see; "" is the default view.
	View string
	// Subject names the client for logs: a token's sub (or client_id), or
	// a fixed label for a static token or a loopback client. Never a
	// credential.
	Subject string
	// Scopes are the token's scopes, when it has any.
	Scopes []string
	// Expires is when the credential stops being valid (zero: never). A
	// server may end a long stream then.
	Expires time.Time
}

// A Policy decides whether a request may go on, before its body is read.
// It returns a Grant, a *Error that says how to refuse, or another error
// when it could not decide (an issuer that cannot be reached): then the
// request is refused with 503 and no challenge.
type Policy interface {
	Authorize(r *http.Request) (Grant, error)
}

// PolicyFunc adapts a function to a Policy.
type PolicyFunc func(r *http.Request) (Grant, error)

// Authorize calls f(r).
func (f PolicyFunc) Authorize(r *http.Request) (Grant, error) { return f(r) }

// Sentinels that *Error wraps, for errors.Is.
var (
	// ErrNoToken: the request carries no bearer token.
	ErrNoToken = errors.New("no bearer token")
	// ErrInvalidToken: the token is unknown, malformed, expired, or not
	// issued for this server.
	ErrInvalidToken = errors.New("invalid bearer token")
	// ErrInsufficientScope: the token is valid but does not grant what the
	// request needs (a scope, a view).
	ErrInsufficientScope = errors.New("insufficient scope")
	// ErrNotLoopback: the request did not come from this machine.
	ErrNotLoopback = errors.New("not a loopback client")
)

// RFC 6750 error codes, for Error.Code.
const (
	CodeInvalidRequest    = "invalid_request"
	CodeInvalidToken      = "invalid_token"
	CodeInsufficientScope = "insufficient_scope"
)

// Error is a refusal: the status to answer with (400, 401 or 403) and what
// goes in the WWW-Authenticate challenge. Its text never holds the
// credential the request carried.
type Error struct {
	Status int    // 400, 401 or 403
	Code   string // the RFC 6750 error code; "" when no token was sent
	Reason string // why, for a person (error_description)
	Scope  string // the scopes the request needs, space-separated, if known
	Err    error  // a sentinel of this package, for errors.Is

	// rank orders refusals when several policies refuse (see Any);
	// 0 means "derive it from Status and Code".
	rank int8
}

func (e *Error) Error() string {
	s := "access refused (" + strconv.Itoa(e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	return s + "): " + e.Reason
}

func (e *Error) Unwrap() error { return e.Err }

// Ranks of refusals, lowest first: when every policy of Any refuses, the
// refusal of the highest rank is the answer (the first among equals).
const (
	rankNotHere   int8 = 1 // Loopback: the policy does not apply to this client
	rankNoToken   int8 = 2 // no credential: a 401 that invites one
	rankNotMine   int8 = 3 // a credential this policy does not know
	rankUndecided int8 = 4 // not an *Error: the policy could not decide
	rankClaimed   int8 = 5 // a credential this policy verified, then refused
	rankForbidden int8 = 6 // a 403 on a known client
)

func rankOf(err error) int8 {
	var e *Error
	if !errors.As(err, &e) {
		return rankUndecided
	}
	if e.rank != 0 {
		return e.rank
	}
	switch {
	case e.Status == http.StatusForbidden:
		return rankForbidden
	case e.Code == "":
		return rankNoToken
	}
	return rankClaimed
}

// WWWAuthenticate returns the value of the WWW-Authenticate header for
// the refusal: a Bearer challenge (RFC 6750 section 3) with the RFC 9728
// resource_metadata parameter when metadataURL is not empty, the error
// code and description when a token was sent, and the scope when known.
// It returns "" for a 403 without an error code (nothing to challenge).
func (e *Error) WWWAuthenticate(metadataURL string) string {
	if e.Status != http.StatusUnauthorized && e.Code == "" {
		return ""
	}
	var params []string
	add := func(name, value string) {
		if value = quotable(value); value != "" {
			params = append(params, name+`="`+value+`"`)
		}
	}
	add("resource_metadata", metadataURL)
	add("error", e.Code)
	if e.Code != "" {
		add("error_description", e.Reason)
	}
	add("scope", e.Scope)
	if len(params) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(params, ", ")
}

// quotable keeps the characters RFC 6750 allows in a quoted parameter
// (%x20-21 / %x23-5B / %x5D-7E): no quote, no backslash, no control.
func quotable(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

type grantKey struct{}

// GrantOf returns the Grant that Middleware admitted the request's
// context with.
func GrantOf(ctx context.Context) (Grant, bool) {
	g, ok := ctx.Value(grantKey{}).(Grant)
	return g, ok
}

// Handler runs Policy on every request and calls Next with the Grant in
// the request's context (GrantOf) and the Authorization header removed:
// a client's credential is the server's business only and cannot reach
// anything Next sends upstream. A refusal is answered with its status and
// challenge; a policy that cannot decide, with 503. A nil Policy is
// Loopback: nothing configured admits this machine only.
type Handler struct {
	Policy      Policy
	MetadataURL string       // the RFC 9728 document named in challenges
	Next        http.Handler // called for admitted requests
	Logger      *slog.Logger // refusals at Debug, undecided at Warn; nil: none
}

// Middleware returns a Handler for p in front of next.
func Middleware(p Policy, metadataURL string, next http.Handler) *Handler {
	return &Handler{Policy: p, MetadataURL: metadataURL, Next: next}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := h.Policy
	if p == nil {
		p = defaultPolicy
	}
	g, err := p.Authorize(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	r2 := r.WithContext(context.WithValue(r.Context(), grantKey{}, g))
	if _, ok := r.Header["Authorization"]; ok {
		r2.Header = r.Header.Clone()
		r2.Header.Del("Authorization")
	}
	h.Next.ServeHTTP(w, r2)
}

var defaultPolicy = Loopback()

func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		if h.Logger != nil {
			h.Logger.WarnContext(r.Context(), "authorization could not be decided", "path", r.URL.Path, "error", err.Error())
		}
		w.Header().Set("Retry-After", "5")
		http.Error(w, "authorization is unavailable; try again later", http.StatusServiceUnavailable)
		return
	}
	if h.Logger != nil {
		h.Logger.DebugContext(r.Context(), "request refused", "path", r.URL.Path, "status", e.Status, "code", e.Code, "reason", e.Reason)
	}
	if c := e.WWWAuthenticate(h.MetadataURL); c != "" {
		w.Header().Set("WWW-Authenticate", c)
	}
	status := e.Status
	if status != http.StatusBadRequest && status != http.StatusUnauthorized && status != http.StatusForbidden {
		status = http.StatusForbidden
	}
	http.Error(w, quotable(e.Reason), status)
}

// Any admits a request when one of the policies does, trying them in
// order; the first that admits wins. When all refuse, the answer is the
// most specific refusal: a 403 for a known client, then a credential a
// policy verified and refused (an expired token), then a policy that
// could not decide, then a credential no policy knows, then "no token"
// (a 401 that invites one), and last a Loopback refusal. Equal ones go to
// the first policy.
func Any(policies ...Policy) Policy {
	ps := append([]Policy(nil), policies...)
	return PolicyFunc(func(r *http.Request) (Grant, error) {
		var best error
		var bestRank int8
		for _, p := range ps {
			g, err := p.Authorize(r)
			if err == nil {
				return g, nil
			}
			if rk := rankOf(err); best == nil || rk > bestRank {
				best, bestRank = err, rk
			}
		}
		if best == nil {
			return Grant{}, &Error{Status: http.StatusForbidden, Reason: "no access policy is configured", Err: ErrNotLoopback}
		}
		return Grant{}, best
	})
}
