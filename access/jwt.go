package access

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/anymcp/anymcp/internal/origin"
)

// JWTConfig says which access tokens (RFC 9068 JWTs) a JWT policy admits.
// Issuer and Audience are required; the zero value of every other field
// is a safe default.
type JWTConfig struct {
	// Issuer is the authorization server, exactly as its tokens' iss:
	// https, or http on a loopback host.
	Issuer string
	// Audience is this server's resource URL (the resource of its
	// protected-resource metadata): a token's aud must hold it, or one of
	// Audiences (a gateway's per-view endpoints).
	Audience  string
	Audiences []string
	// JWKSURL is the issuer's key set. Empty: the jwks_uri of the issuer's
	// metadata, used only when it is on the issuer's origin.
	JWKSURL string
	// Algorithms allowed; empty: RS256/384/512, PS256/384/512,
	// ES256/384/512 and EdDSA. "none" and HS* are refused.
	Algorithms []string
	// Scopes every token must hold (403 insufficient_scope otherwise).
	Scopes []string
	// ViewClaim names a string claim that picks the view; Views maps a
	// scope to a view. At most one; with neither, every token gets the
	// default view. With one, a token that picks no view is refused.
	ViewClaim string
	Views     map[string]string
	// StrictType requires the RFC 9068 header typ "at+jwt"; otherwise
	// "JWT" and no typ are accepted too (most issuers send them).
	StrictType bool
	// Leeway for exp, nbf and iat; zero: 30 s.
	Leeway time.Duration
	// KeysTTL: how long a fetched key set is used; zero: 10 minutes.
	KeysTTL time.Duration
	// MinRefetch: a token with an unknown kid fetches the key set again at
	// most this often; zero: 30 s.
	MinRefetch time.Duration
	// HTTPClient for the issuer; nil: a client with a 10 s timeout.
	// Redirects are followed on the same origin only.
	HTTPClient *http.Client
	Logger     *slog.Logger // key set failures at Warn; nil: none
}

var defaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTPolicy admits requests whose bearer token is an access token signed
// by the issuer for this server. Make one with JWT.
type JWTPolicy struct {
	cfg    JWTConfig
	keys   *keySet
	parser *jwt.Parser
	// viewScopes lists the scopes of cfg.Views, sorted, for refusals.
	viewScopes string
}

// JWT returns a policy for cfg, or an error that says which field is
// wrong. It sends nothing: the issuer's keys are fetched at the first
// token, or by Refresh.
func JWT(cfg JWTConfig) (*JWTPolicy, error) {
	if _, err := checkIssuerURL("JWTConfig.Issuer", cfg.Issuer); err != nil {
		return nil, err
	}
	if cfg.Audience == "" {
		return nil, errors.New("JWTConfig.Audience is required: the resource URL of this server, as clients ask tokens for it")
	}
	if cfg.JWKSURL != "" {
		if _, err := checkIssuerURL("JWTConfig.JWKSURL", cfg.JWKSURL); err != nil {
			return nil, err
		}
	}
	algs := cfg.Algorithms
	if len(algs) == 0 {
		algs = defaultAlgorithms
	}
	for _, a := range algs {
		if !slices.Contains(defaultAlgorithms, a) {
			return nil, fmt.Errorf("JWTConfig.Algorithms: %q is not allowed (allowed: %s; never none or HS*, which a public key cannot verify)", a, strings.Join(defaultAlgorithms, ", "))
		}
	}
	if cfg.ViewClaim != "" && len(cfg.Views) > 0 {
		return nil, errors.New("JWTConfig: set ViewClaim or Views, not both")
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.KeysTTL == 0 {
		cfg.KeysTTL = 10 * time.Minute
	}
	if cfg.MinRefetch == 0 {
		cfg.MinRefetch = 30 * time.Second
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	timeout := hc.Timeout
	if timeout == 0 || timeout > 10*time.Second {
		timeout = 10 * time.Second
	}
	p := &JWTPolicy{cfg: cfg}
	p.keys = &keySet{
		hc:         origin.Guard(hc),
		issuer:     cfg.Issuer,
		jwksURL:    cfg.JWKSURL,
		ttl:        cfg.KeysTTL,
		minRefetch: cfg.MinRefetch,
		timeout:    timeout,
		log:        cfg.Logger,
		now:        time.Now,
	}
	p.parser = jwt.NewParser(
		jwt.WithValidMethods(slices.Clone(algs)),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(append([]string{cfg.Audience}, cfg.Audiences...)...),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithStrictDecoding(),
		jwt.WithTimeFunc(func() time.Time { return p.keys.now() }),
	)
	if len(cfg.Views) > 0 {
		var s []string
		for scope := range cfg.Views {
			s = append(s, scope)
		}
		sort.Strings(s)
		p.viewScopes = strings.Join(s, " ")
	}
	return p, nil
}

// checkIssuerURL refuses a URL that is not https (or http on a loopback
// host), or that holds user information or a fragment.
func checkIssuerURL(what, raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("%s is required", what)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s %q is not an absolute URL", what, origin.RedactString(raw))
	}
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("%s %q has user information", what, origin.Redact(u))
	case u.Fragment != "":
		return nil, fmt.Errorf("%s %q has a fragment", what, origin.Redact(u))
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopbackIP(u.Hostname()):
	default:
		return nil, fmt.Errorf("%s %q must be https (http only on a loopback host)", what, origin.Redact(u))
	}
	return u, nil
}

func isLoopbackIP(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Refresh fetches the issuer's metadata (when JWKSURL is not set) and key
// set now: a server calls it at start to fail early on a wrong issuer.
func (p *JWTPolicy) Refresh(ctx context.Context) error {
	keys, u, err := p.keys.fetch(ctx)
	p.keys.mu.Lock()
	defer p.keys.mu.Unlock()
	p.keys.tried, p.keys.lastErr = p.keys.now(), err
	if err == nil {
		p.keys.keys, p.keys.fetched, p.keys.jwksURL = keys, p.keys.tried, u
	}
	return err
}

// invalid is a 401 invalid_token refusal.
func invalid(reason string, rank int8) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Reason: reason, Err: ErrInvalidToken, rank: rank}
}

// Authorize verifies the request's bearer token: its signature by one of
// the issuer's keys with an allowed algorithm, then typ, iss, aud, exp,
// nbf and iat, then the required scopes and the view.
func (p *JWTPolicy) Authorize(r *http.Request) (Grant, error) {
	tok, e := bearerToken(r)
	if e != nil {
		if e.Err == ErrNoToken {
			e.Scope = strings.Join(p.cfg.Scopes, " ")
		}
		return Grant{}, e
	}
	claims := jwt.MapClaims{}
	var lookupErr error
	t, err := p.parser.ParseWithClaims(tok, claims, func(t *jwt.Token) (any, error) {
		if !p.typeAllowed(t.Header["typ"]) {
			return nil, errBadType
		}
		// A token that names another issuer cannot make us fetch keys.
		if iss, _ := claims["iss"].(string); iss != p.cfg.Issuer {
			return nil, jwt.ErrTokenInvalidIssuer
		}
		kid, _ := t.Header["kid"].(string)
		found, err := p.keys.lookup(r.Context(), kid, t.Method.Alg())
		if err != nil {
			lookupErr = err
			return nil, err
		}
		set := jwt.VerificationKeySet{Keys: make([]jwt.VerificationKey, len(found))}
		for i, k := range found {
			set.Keys[i] = k.key
		}
		return set, nil
	})
	if err != nil {
		return Grant{}, p.refusal(err, lookupErr)
	}
	if !t.Valid {
		return Grant{}, invalid("the access token is not valid", rankNotMine)
	}
	return p.grant(claims)
}

var errBadType = errors.New("the token's typ is not an access token's")

// refusal maps a verification error to a refusal that names no part of
// the token.
func (p *JWTPolicy) refusal(err, lookupErr error) error {
	switch {
	case lookupErr != nil && !errors.Is(lookupErr, errUnknownKey):
		return fmt.Errorf("verifying an access token of %s: %w", p.cfg.Issuer, lookupErr) // undecided: 503
	case errors.Is(err, errUnknownKey):
		return invalid("the access token is signed by a key the issuer does not publish", rankNotMine)
	case errors.Is(err, errBadType):
		return invalid("the token is not an access token (its typ header)", rankNotMine)
	case errors.Is(err, jwt.ErrTokenMalformed):
		return invalid("the bearer token is not a JWT", rankNotMine)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return invalid("the access token was not issued by "+p.cfg.Issuer, rankNotMine)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return invalid("the access token's signature or algorithm is not accepted", rankNotMine)
	case errors.Is(err, jwt.ErrTokenExpired):
		return invalid("the access token has expired", rankClaimed)
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return invalid("the access token is not valid yet", rankClaimed)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return invalid("the access token was not issued for this server ("+p.cfg.Audience+")", rankClaimed)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return invalid("the access token has no expiry (exp)", rankClaimed)
	}
	return invalid("the access token is not valid", rankClaimed)
}

func (p *JWTPolicy) typeAllowed(typ any) bool {
	if typ == nil {
		return !p.cfg.StrictType
	}
	s, ok := typ.(string)
	if !ok {
		return false
	}
	switch strings.ToLower(s) {
	case "at+jwt", "application/at+jwt":
		return true
	case "jwt":
		return !p.cfg.StrictType
	}
	return false
}

// grant checks the verified claims' scopes and view.
func (p *JWTPolicy) grant(c jwt.MapClaims) (Grant, error) {
	g := Grant{Scopes: scopesOf(c)}
	if sub, ok := c["sub"].(string); ok && sub != "" {
		g.Subject = sub
	} else if id, ok := c["client_id"].(string); ok {
		g.Subject = id
	}
	if exp, err := c.GetExpirationTime(); err == nil && exp != nil {
		g.Expires = exp.Time
	}
	for _, s := range p.cfg.Scopes {
		if !slices.Contains(g.Scopes, s) {
			return Grant{}, &Error{Status: http.StatusForbidden, Code: CodeInsufficientScope, Reason: "the access token lacks the scope " + quotable(s), Scope: strings.Join(p.cfg.Scopes, " "), Err: ErrInsufficientScope}
		}
	}
	switch {
	case p.cfg.ViewClaim != "":
		v, ok := c[p.cfg.ViewClaim].(string)
		if !ok {
			return Grant{}, &Error{Status: http.StatusForbidden, Code: CodeInsufficientScope, Reason: "the access token names no view (claim " + p.cfg.ViewClaim + ")", Err: ErrInsufficientScope}
		}
		g.View = v
	case len(p.cfg.Views) > 0:
		var views []string
		for _, s := range g.Scopes {
			if v, ok := p.cfg.Views[s]; ok && !slices.Contains(views, v) {
				views = append(views, v)
			}
		}
		switch len(views) {
		case 0:
			return Grant{}, &Error{Status: http.StatusForbidden, Code: CodeInsufficientScope, Reason: "the access token has no scope that picks a view", Scope: p.viewScopes, Err: ErrInsufficientScope}
		case 1:
			g.View = views[0]
		default:
			return Grant{}, &Error{Status: http.StatusForbidden, Code: CodeInsufficientScope, Reason: "the access token's scopes pick more than one view", Err: ErrInsufficientScope}
		}
	}
	return g, nil
}

// scopesOf reads the scope claim (RFC 9068: a space-separated string) or,
// as some issuers send it, scp (a string or an array of strings).
func scopesOf(c jwt.MapClaims) []string {
	var out []string
	for _, name := range []string{"scope", "scp"} {
		switch v := c[name].(type) {
		case string:
			out = append(out, strings.Fields(v)...)
		case []any:
			for _, s := range v {
				if s, ok := s.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}
