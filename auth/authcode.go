package auth

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/anymcp/anymcp/internal/origin"
)

// oauth2Config is the golang.org/x/oauth2 view of a client at a server.
func oauth2Config(m *serverMetadata, c *ClientInfo, redirect string, scopes []string) *oauth2.Config {
	oc := &oauth2.Config{
		ClientID:    c.ClientID,
		RedirectURL: redirect,
		Scopes:      scopes,
		Endpoint: oauth2.Endpoint{
			AuthURL:   m.AuthorizationEndpoint,
			TokenURL:  m.TokenEndpoint,
			AuthStyle: authStyle(c.AuthMethod),
		},
	}
	if c.AuthMethod == authBasic || c.AuthMethod == authPost {
		oc.ClientSecret = c.ClientSecret
	}
	return oc
}

// authStyle maps a token_endpoint_auth_method to how oauth2 sends the
// client's credentials: in a Basic header, or in the form (a public client
// and private_key_jwt send only client_id there).
func authStyle(method string) oauth2.AuthStyle {
	if method == authBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// pendingAuthorization is one authorization request in flight: what its
// response is checked against. It is used once.
type pendingAuthorization struct {
	state    string
	verifier string
	issuer   string
	issSent  bool // the server advertised authorization_response_iss_parameter_supported
	redirect string
	// perIssuer: redirect is this issuer's own (redirectFor), the
	// defence against a mix-up when the server sends no iss.
	perIssuer bool
}

// authorizationCode runs the authorization code flow with PKCE: the
// person authorizes at the URL given to cfg.Authorize, the response is
// checked (iss, then state, then error), and the code is exchanged for a
// token, with resource on both requests.
// With checkKept, a kept registration is checked at the authorization
// endpoint before anyone is asked (clientRefused).
func (a *Authorizer) authorizationCode(ctx context.Context, d *discovery, c *ClientInfo, scopes []string, checkKept bool) (*Token, error) {
	m := d.server
	if !m.supportsS256() {
		return nil, &MetadataError{URL: m.URL, Reason: "the authorization server does not list S256 in code_challenge_methods_supported: PKCE cannot be used, so the flow is refused"}
	}
	if m.AuthorizationEndpoint == "" {
		return nil, &MetadataError{URL: m.URL, Reason: "no authorization_endpoint"}
	}
	if a.cfg.Authorize == nil {
		return nil, &InteractionRequiredError{Server: d.shownURL, Issuer: m.Issuer}
	}
	state, err := randomString(32)
	if err != nil {
		return nil, err
	}
	p := &pendingAuthorization{
		state:    state,
		verifier: oauth2.GenerateVerifier(),
		issuer:   m.Issuer,
		issSent:  m.AuthorizationResponseIssParameterSupported,
		redirect: a.cfg.RedirectURL,
	}
	if c.Registration == RegistrationDynamic {
		p.redirect = a.redirectFor(m)
		p.perIssuer = p.redirect != a.cfg.RedirectURL
	}
	oc := oauth2Config(m, c, p.redirect, scopes)
	authURL := oc.AuthCodeURL(p.state, oauth2.S256ChallengeOption(p.verifier), oauth2.SetAuthURLParam("resource", d.resource))
	if c.reused && checkKept {
		if why := a.clientRefused(ctx, d, authURL); why != "" {
			return nil, &staleClient{why: why}
		}
	}
	a.log.InfoContext(ctx, "OAuth authorization needed", "server", d.shownURL, "issuer", m.Issuer, "client", c.ClientID, "scopes", strings.Join(scopes, " "))
	back, err := a.cfg.Authorize(ctx, authURL)
	if err != nil {
		return nil, err
	}
	code, err := p.check(back)
	if err != nil {
		return nil, err
	}
	verifier := p.verifier
	p.verifier = "" // single use
	// The exchange has a time of its own: the browser's wait may have
	// used up most of ctx's, and a token endpoint that does not answer is
	// not a browser that did not come back.
	limit := a.cfg.exchangeTimeout()
	ectx, cancel := context.WithTimeoutCause(ctx, limit, errExchangeTimeout)
	defer cancel()
	t, err := a.tokenCall(ectx, d, "token", func(octx context.Context) (*oauth2.Token, error) {
		opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", d.resource)}
		if c.AuthMethod == authJWT {
			assertion, err := clientAssertion(a.cfg.PrivateKey, a.cfg.KeyID, c.ClientID, m.Issuer, time.Now())
			if err != nil {
				return nil, err
			}
			opts = append(opts, oauth2.SetAuthURLParam("client_assertion_type", clientAssertionType), oauth2.SetAuthURLParam("client_assertion", assertion))
		}
		return oc.Exchange(octx, code, opts...)
	}, func(ot *oauth2.Token) (*Token, error) {
		return fromOAuth2(ot, "token", scopes, c.ClientID, GrantAuthorizationCode, "", a.jktFor(ctx, d), time.Now())
	})
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(ectx), errExchangeTimeout) {
		return nil, &ExchangeTimeoutError{Endpoint: origin.RedactString(m.TokenEndpoint), Limit: limit}
	}
	return t, err
}

// check validates the redirect the browser came back with and returns the
// code. RFC 9207's iss comes first — a response from another server is not
// acted on, not even its error — then state, then the error fields.
func (p *pendingAuthorization) check(back string) (string, error) {
	u, err := url.Parse(back)
	if err != nil {
		return "", &GrantError{Step: "authorization", Description: "the redirect is not a URL"}
	}
	if want, err := url.Parse(p.redirect); err == nil && !sameRedirectTarget(want, u) {
		if p.perIssuer {
			return "", &GrantError{Step: "authorization", Description: "the browser came back to " + strconv.Quote(origin.Redact(u)) + ", not to " + origin.Redact(want) + ", the redirect URI of " + p.issuer + ": it may be another authorization server's answer (a mix-up), and was not acted on"}
		}
		return "", &GrantError{Step: "authorization", Description: "the redirect did not come back to " + origin.Redact(want)}
	}
	q := u.Query()
	iss, hasIss := q["iss"]
	switch {
	case hasIss && (len(iss) != 1 || iss[0] != p.issuer):
		// Simple string comparison, no normalisation (RFC 9207 2.4).
		return "", &IssuerMismatchError{Expected: p.issuer, Got: strings.Join(iss, ",")}
	case !hasIss && p.issSent:
		return "", &IssuerMismatchError{Expected: p.issuer}
	}
	if st := q["state"]; len(st) != 1 || st[0] != p.state {
		return "", &StateMismatchError{}
	}
	p.state = "" // single use
	if e := q.Get("error"); e != "" {
		return "", &GrantError{Step: "authorization", Code: e, Description: q.Get("error_description"), URI: q.Get("error_uri")}
	}
	code := q.Get("code")
	if code == "" {
		return "", &GrantError{Step: "authorization", Description: "the redirect carries no code"}
	}
	return code, nil
}

// sameRedirectTarget reports whether got is a redirect to want: scheme,
// host and path (the query is the response). Scheme and host are compared
// with their ASCII letters folded only, as origins are (origin.Of).
func sameRedirectTarget(want, got *url.URL) bool {
	return origin.LowerASCII(want.Scheme) == origin.LowerASCII(got.Scheme) &&
		origin.LowerASCII(want.Host) == origin.LowerASCII(got.Host) && want.EscapedPath() == got.EscapedPath()
}
