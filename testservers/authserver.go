package testservers

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Discovery is how an AuthServer publishes its metadata.
type Discovery int

const (
	// DiscoveryOAuth serves RFC 8414 metadata at
	// /.well-known/oauth-authorization-server, with the issuer's path
	// inserted after it.
	DiscoveryOAuth Discovery = iota
	// DiscoveryOIDC serves OpenID Connect discovery metadata at the
	// issuer's path + /.well-known/openid-configuration.
	DiscoveryOIDC
	// DiscoveryNone serves no metadata: the endpoints are /authorize,
	// /token and /register at the origin, as a 2025-03-26 client assumes.
	DiscoveryNone
)

// IssMode is what an AuthServer puts in the iss parameter of its
// authorization responses (RFC 9207).
type IssMode int

const (
	IssCorrect    IssMode = iota // the issuer
	IssOmit                      // no iss
	IssWrong                     // another server's issuer
	IssNormalized                // the issuer with a trailing slash: equal only after normalisation
)

// RegisteredClient is a client the AuthServer knows before any
// registration: pre-registered credentials.
type RegisteredClient struct {
	ID     string
	Secret string // "" for a public client (unless PublicKey)
	// Method is the token_endpoint_auth_method: none, client_secret_basic,
	// client_secret_post or private_key_jwt. Default: none without a
	// secret, client_secret_basic with one, private_key_jwt with a key.
	Method       string
	RedirectURIs []string         // any loopback URI when empty
	PublicKey    *ecdsa.PublicKey // private_key_jwt (ES256, ES384, ES512)
}

// AuthServerOptions configure an AuthServer. The zero value is a
// well-behaved OAuth 2.1 authorization server: RFC 8414 metadata, PKCE
// S256, iss in responses (advertised), dynamic registration, refresh
// tokens rotated at each use, access tokens valid for an hour.
type AuthServerOptions struct {
	// IssuerPath is the issuer's path, e.g. "/tenant1"; "" for the origin.
	IssuerPath string
	// Discovery is where the metadata is (DiscoveryOAuth by default).
	Discovery Discovery
	// MetadataIssuer, when set, is the issuer the metadata claims: a
	// document that does not match where it was fetched.
	MetadataIssuer string
	// PKCEMethods is code_challenge_methods_supported; nil means S256,
	// an empty slice leaves it out of the metadata.
	PKCEMethods []string
	// Iss is the iss of authorization responses; NoIssAdvertised leaves
	// authorization_response_iss_parameter_supported out.
	Iss             IssMode
	NoIssAdvertised bool
	// AuthMethods is token_endpoint_auth_methods_supported; nil means
	// none, client_secret_basic and client_secret_post.
	AuthMethods []string
	// NoRegistration leaves dynamic client registration out.
	NoRegistration bool
	// CIMD advertises client_id_metadata_document_supported and accepts
	// https client ids (without fetching them).
	CIMD bool
	// ScopesSupported is scopes_supported (left out when nil).
	ScopesSupported []string
	// WithholdScopes are never granted, whoever asks.
	WithholdScopes []string
	// ClientCredentials lists client_credentials in grant_types_supported
	// and accepts that grant.
	ClientCredentials bool
	// AccessTTL is the lifetime of access tokens; an hour when zero.
	AccessTTL time.Duration
	// NoRefresh issues no refresh tokens; NoRotation keeps a refresh token
	// valid after use (otherwise each use replaces it).
	NoRefresh  bool
	NoRotation bool
	// Deny makes the user decline: authorization responses carry
	// error=access_denied.
	Deny bool
	// Clients are known before any registration.
	Clients []RegisteredClient
	// OnRequest, when set, is called first with every request.
	OnRequest func(*http.Request)
}

// AuthStats is what an AuthServer saw.
type AuthStats struct {
	Metadata       map[string]int // metadata requests by path (404s included)
	Registrations  int
	Authorizations int            // authorization requests
	Tokens         map[string]int // token requests by grant_type (refused ones included)
	// LastAuthorization is the query of the last authorization request,
	// LastToken the form of the last token request (secrets included:
	// tests only), LastRegistration the body of the last registration.
	LastAuthorization url.Values
	LastToken         url.Values
	LastTokenAuth     string // how the last token request authenticated: none, basic, post, jwt
	LastRegistration  map[string]any
}

// TokenInfo is what an AuthServer knows of an access token it issued.
type TokenInfo struct {
	ClientID string
	Scopes   []string
	Resource string
	Expiry   time.Time
}

// AuthServer is an OAuth 2.1 authorization server for tests, on its own
// loopback origin. Its authorization endpoint is answered by Approve, a
// headless user, or by a browser (it approves at once).
type AuthServer struct {
	// URL is the origin, http://127.0.0.1:PORT; Issuer is URL + IssuerPath.
	URL    string
	Issuer string

	opts AuthServerOptions
	ts   *httptest.Server

	mu      sync.Mutex
	ttl     time.Duration
	clients map[string]*RegisteredClient
	codes   map[string]*authCode
	access  map[string]*TokenInfo
	refresh map[string]*refreshGrant
	jtis    map[string]bool
	stats   AuthStats
	serial  int
}

type authCode struct {
	clientID, redirect, challenge, resource string
	scopes                                  []string
	used                                    bool
}

type refreshGrant struct {
	clientID, resource string
	scopes             []string
}

// StartAuthServer starts an AuthServer on 127.0.0.1.
func StartAuthServer(opts AuthServerOptions) *AuthServer {
	a := newAuthServer(opts)
	a.ts = httptest.NewServer(http.HandlerFunc(a.serve))
	a.setURL(a.ts.URL)
	return a
}

// setURL sets the origin the server is reached at.
func (a *AuthServer) setURL(origin string) {
	a.URL = origin
	a.Issuer = origin + a.opts.IssuerPath
}

// newAuthServer makes an AuthServer without a listener of its own.
func newAuthServer(opts AuthServerOptions) *AuthServer {
	a := &AuthServer{
		opts:    opts,
		ttl:     opts.AccessTTL,
		clients: map[string]*RegisteredClient{},
		codes:   map[string]*authCode{},
		access:  map[string]*TokenInfo{},
		refresh: map[string]*refreshGrant{},
		jtis:    map[string]bool{},
	}
	if a.ttl == 0 {
		a.ttl = time.Hour
	}
	a.stats.Metadata = map[string]int{}
	a.stats.Tokens = map[string]int{}
	for _, c := range opts.Clients {
		c := c
		if c.Method == "" {
			switch {
			case c.PublicKey != nil:
				c.Method = "private_key_jwt"
			case c.Secret != "":
				c.Method = "client_secret_basic"
			default:
				c.Method = "none"
			}
		}
		a.clients[c.ID] = &c
	}
	return a
}

// Close stops the server (one started by StartAuthServer).
func (a *AuthServer) Close() {
	if a.ts != nil {
		a.ts.Close()
	}
}

// Revoke invalidates every access token issued so far (refresh tokens stay
// valid): the next request with one gets a 401.
func (a *AuthServer) Revoke() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.access)
}

// RevokeAll invalidates every access and refresh token issued so far.
func (a *AuthServer) RevokeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.access)
	clear(a.refresh)
}

// Stats returns a copy of what the server saw.
func (a *AuthServer) Stats() AuthStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.stats
	s.Metadata = maps.Clone(a.stats.Metadata)
	s.Tokens = maps.Clone(a.stats.Tokens)
	return s
}

// Verify returns what the server knows of an access token, and whether it
// is one it issued that is still valid.
func (a *AuthServer) Verify(token string) (TokenInfo, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.access[token]
	if !ok || !time.Now().Before(t.Expiry) {
		return TokenInfo{}, false
	}
	return *t, true
}

// Approve is a headless user: it opens authURL as a browser would, approves,
// and returns the URL the server redirects to, without following it.
func (a *AuthServer) Approve(ctx context.Context, authURL string) (string, error) {
	return FollowAuthorization(ctx, authURL)
}

// FollowAuthorization GETs authURL and returns the Location of its
// redirect, as a browser would follow it to the client's redirect URI.
func FollowAuthorization(ctx context.Context, authURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || loc == "" {
		return "", fmt.Errorf("authorization request answered %d, not a redirect", resp.StatusCode)
	}
	return loc, nil
}

func (a *AuthServer) endpoint(name string) string {
	if a.opts.Discovery == DiscoveryNone {
		return "/" + name
	}
	return a.opts.IssuerPath + "/" + name
}

func (a *AuthServer) serve(w http.ResponseWriter, r *http.Request) {
	if a.opts.OnRequest != nil {
		a.opts.OnRequest(r)
	}
	p := r.URL.Path
	switch {
	case strings.Contains(p, "/.well-known/"):
		a.metadata(w, r)
	case p == a.endpoint("authorize") && r.Method == http.MethodGet:
		a.authorize(w, r)
	case p == a.endpoint("token") && r.Method == http.MethodPost:
		a.token(w, r)
	case p == a.endpoint("register") && r.Method == http.MethodPost && !a.opts.NoRegistration:
		a.register(w, r)
	default:
		http.NotFound(w, r)
	}
}

// metadataPath is where the metadata is served.
func (a *AuthServer) metadataPath() string {
	switch a.opts.Discovery {
	case DiscoveryOIDC:
		return a.opts.IssuerPath + "/.well-known/openid-configuration"
	case DiscoveryNone:
		return ""
	}
	return "/.well-known/oauth-authorization-server" + a.opts.IssuerPath
}

func (a *AuthServer) metadata(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.stats.Metadata[r.URL.Path]++
	a.mu.Unlock()
	if mp := a.metadataPath(); mp == "" || r.URL.Path != mp {
		http.NotFound(w, r)
		return
	}
	issuer := a.Issuer
	if a.opts.MetadataIssuer != "" {
		issuer = a.opts.MetadataIssuer
	}
	m := map[string]any{
		"issuer":                   issuer,
		"authorization_endpoint":   a.URL + a.endpoint("authorize"),
		"token_endpoint":           a.URL + a.endpoint("token"),
		"response_types_supported": []string{"code"},
	}
	if !a.opts.NoRegistration {
		m["registration_endpoint"] = a.URL + a.endpoint("register")
	}
	grants := []string{"authorization_code", "refresh_token"}
	if a.opts.ClientCredentials {
		grants = append(grants, "client_credentials")
	}
	m["grant_types_supported"] = grants
	switch {
	case a.opts.PKCEMethods == nil:
		m["code_challenge_methods_supported"] = []string{"S256"}
	case len(a.opts.PKCEMethods) > 0:
		m["code_challenge_methods_supported"] = a.opts.PKCEMethods
	}
	if !a.opts.NoIssAdvertised {
		m["authorization_response_iss_parameter_supported"] = true
	}
	m["token_endpoint_auth_methods_supported"] = a.authMethods()
	if slices.Contains(a.authMethods(), "private_key_jwt") {
		m["token_endpoint_auth_signing_alg_values_supported"] = []string{"ES256", "ES384", "ES512"}
	}
	if a.opts.CIMD {
		m["client_id_metadata_document_supported"] = true
	}
	if a.opts.ScopesSupported != nil {
		m["scopes_supported"] = a.opts.ScopesSupported
	}
	if a.opts.Discovery == DiscoveryOIDC {
		m["subject_types_supported"] = []string{"public"}
		m["id_token_signing_alg_values_supported"] = []string{"RS256"}
		m["jwks_uri"] = a.URL + "/jwks.json"
	}
	writeJSON(w, http.StatusOK, m)
}

func (a *AuthServer) authMethods() []string {
	if a.opts.AuthMethods != nil {
		return a.opts.AuthMethods
	}
	return []string{"none", "client_secret_basic", "client_secret_post"}
}

// authorize approves at once, as a user who always says yes would.
func (a *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.stats.Authorizations++
	a.stats.LastAuthorization = q
	deny := a.opts.Deny
	c := a.lookupClient(q.Get("client_id"))
	a.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if c == nil {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	if !redirectAllowed(c, redirect) {
		http.Error(w, "redirect_uri not registered for this client", http.StatusBadRequest)
		return
	}
	back, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	rq := back.Query()
	if st := q.Get("state"); st != "" {
		rq.Set("state", st)
	}
	switch a.opts.Iss {
	case IssCorrect:
		rq.Set("iss", a.Issuer)
	case IssWrong:
		rq.Set("iss", "https://evil.example.com")
	case IssNormalized:
		rq.Set("iss", a.Issuer+"/")
	}
	fail := func(code, desc string) {
		rq.Set("error", code)
		rq.Set("error_description", desc)
		back.RawQuery = rq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "response_type must be code")
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "PKCE with S256 is required")
		return
	case deny:
		fail("access_denied", "the user declined")
		return
	}
	code := a.newSecret("code")
	a.mu.Lock()
	a.codes[code] = &authCode{clientID: c.ID, redirect: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource"), scopes: a.grantable(q.Get("scope"))}
	a.mu.Unlock()
	rq.Set("code", code)
	back.RawQuery = rq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// lookupClient finds a registered client, or accepts an https client id
// as a Client ID Metadata Document (without fetching it). a.mu is held.
func (a *AuthServer) lookupClient(id string) *RegisteredClient {
	if c := a.clients[id]; c != nil {
		return c
	}
	if a.opts.CIMD && strings.HasPrefix(id, "https://") {
		return &RegisteredClient{ID: id, Method: "none"}
	}
	return nil
}

// redirectAllowed: an exact registered URI, or for a loopback IP literal
// any port (RFC 8252 section 7.3); any loopback URI when none is registered.
func redirectAllowed(c *RegisteredClient, redirect string) bool {
	u, err := url.Parse(redirect)
	if err != nil || u.Host == "" {
		return false
	}
	if len(c.RedirectURIs) == 0 {
		ip := net.ParseIP(u.Hostname())
		return (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost"
	}
	for _, reg := range c.RedirectURIs {
		if reg == redirect {
			return true
		}
		ru, err := url.Parse(reg)
		if err != nil {
			continue
		}
		if ip := net.ParseIP(ru.Hostname()); ip != nil && ip.IsLoopback() && ru.Hostname() == u.Hostname() && ru.Scheme == u.Scheme && ru.Path == u.Path {
			return true
		}
	}
	return false
}

func (a *AuthServer) newSecret(kind string) string {
	a.mu.Lock()
	a.serial++
	n := a.serial
	a.mu.Unlock()
	return fmt.Sprintf("%s-%d-%s", kind, n, randomID())
}

// oauthError writes an OAuth error answer.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (a *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	grant := f.Get("grant_type")
	a.mu.Lock()
	a.stats.Tokens[grant]++
	a.stats.LastToken = f
	a.mu.Unlock()
	c, how, err := a.authenticate(r)
	a.mu.Lock()
	a.stats.LastTokenAuth = how
	a.mu.Unlock()
	if err != nil {
		oauthError(w, http.StatusUnauthorized, "invalid_client", err.Error())
		return
	}
	switch grant {
	case "authorization_code":
		a.mu.Lock()
		code := a.codes[f.Get("code")]
		ok := code != nil && !code.used && code.clientID == c.ID
		if ok {
			code.used = true
		}
		a.mu.Unlock()
		switch {
		case !ok:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or foreign code")
		case f.Get("redirect_uri") != code.redirect:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
		case s256(f.Get("code_verifier")) != code.challenge:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		case f.Get("resource") != code.resource:
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request's")
		default:
			a.issue(w, c.ID, code.resource, code.scopes, true)
		}
	case "refresh_token":
		a.mu.Lock()
		g := a.refresh[f.Get("refresh_token")]
		ok := g != nil && g.clientID == c.ID
		if ok && !a.opts.NoRotation {
			delete(a.refresh, f.Get("refresh_token"))
		}
		a.mu.Unlock()
		switch {
		case !ok:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or foreign refresh token")
		case f.Get("resource") != "" && f.Get("resource") != g.resource:
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the original grant's")
		default:
			a.issue(w, c.ID, g.resource, g.scopes, !a.opts.NoRotation)
		}
	case "client_credentials":
		if !a.opts.ClientCredentials {
			oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "client_credentials is not supported")
			return
		}
		if c.Method == "none" {
			oauthError(w, http.StatusUnauthorized, "invalid_client", "a public client cannot use client_credentials")
			return
		}
		a.issue(w, c.ID, f.Get("resource"), a.grantable(f.Get("scope")), false)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", grant)
	}
}

// grantable returns the requested scopes less the withheld ones.
func (a *AuthServer) grantable(scope string) []string {
	return slices.DeleteFunc(strings.Fields(scope), func(s string) bool { return slices.Contains(a.opts.WithholdScopes, s) })
}

// issue answers a token request with a new access token (and a refresh
// token unless NoRefresh or !withRefresh).
func (a *AuthServer) issue(w http.ResponseWriter, clientID, resource string, scopes []string, withRefresh bool) {
	at := a.newSecret("at")
	a.mu.Lock()
	ttl := a.ttl
	a.access[at] = &TokenInfo{ClientID: clientID, Scopes: scopes, Resource: resource, Expiry: time.Now().Add(ttl)}
	a.mu.Unlock()
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(ttl.Seconds())}
	if len(scopes) > 0 {
		resp["scope"] = strings.Join(scopes, " ")
	}
	if withRefresh && !a.opts.NoRefresh {
		rt := a.newSecret("rt")
		a.mu.Lock()
		a.refresh[rt] = &refreshGrant{clientID: clientID, resource: resource, scopes: scopes}
		a.mu.Unlock()
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
}

// authenticate checks a token request's client authentication against the
// client's registered method, and says which it was.
func (a *AuthServer) authenticate(r *http.Request) (*RegisteredClient, string, error) {
	f := r.PostForm
	id, secret, basic := r.BasicAuth()
	how := "none"
	switch {
	case basic:
		how = "basic"
		if u, err := url.QueryUnescape(id); err == nil {
			id = u
		}
		if s, err := url.QueryUnescape(secret); err == nil {
			secret = s
		}
	case f.Get("client_assertion") != "":
		how = "jwt"
		id = f.Get("client_id")
	case f.Get("client_secret") != "":
		how, id, secret = "post", f.Get("client_id"), f.Get("client_secret")
	default:
		id = f.Get("client_id")
	}
	a.mu.Lock()
	c := a.lookupClient(id)
	a.mu.Unlock()
	if how == "jwt" {
		if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
			return nil, how, errors.New("client_assertion_type is not jwt-bearer")
		}
		sub, err := a.verifyAssertion(f.Get("client_assertion"))
		if err != nil {
			return nil, how, err
		}
		if id == "" {
			id = sub
		}
		a.mu.Lock()
		c = a.lookupClient(id)
		a.mu.Unlock()
		if c == nil || c.ID != sub {
			return nil, how, errors.New("the assertion's subject is not the client")
		}
	}
	if c == nil {
		return nil, how, fmt.Errorf("unknown client %q", id)
	}
	want := map[string]string{"none": "none", "client_secret_basic": "basic", "client_secret_post": "post", "private_key_jwt": "jwt"}[c.Method]
	if how != want {
		return nil, how, fmt.Errorf("client %s must authenticate with %s", c.ID, c.Method)
	}
	if (how == "basic" || how == "post") && subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) != 1 {
		return nil, how, errors.New("wrong client secret")
	}
	return c, how, nil
}

// verifyAssertion checks a private_key_jwt assertion (RFC 7523): the
// signature with the client's key, iss = sub = a client, aud = the issuer,
// not expired, jti not seen before. It returns the subject.
func (a *AuthServer) verifyAssertion(jwt string) (string, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "", errors.New("client_assertion is not a JWS")
	}
	enc := base64.RawURLEncoding
	var header struct{ Alg string }
	var claims struct {
		Iss, Sub, Jti string
		Aud           any
		Exp           int64
	}
	hb, err1 := enc.DecodeString(parts[0])
	cb, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", fmt.Errorf("client_assertion: %w", err)
	}
	if err := errors.Join(json.Unmarshal(hb, &header), json.Unmarshal(cb, &claims)); err != nil {
		return "", fmt.Errorf("client_assertion: %w", err)
	}
	a.mu.Lock()
	c := a.clients[claims.Sub]
	seen := a.jtis[claims.Jti]
	a.jtis[claims.Jti] = true
	a.mu.Unlock()
	switch {
	case c == nil || c.PublicKey == nil:
		return "", fmt.Errorf("client_assertion: no key for %q", claims.Sub)
	case claims.Iss != claims.Sub:
		return "", errors.New("client_assertion: iss is not sub")
	case claims.Aud != a.Issuer:
		return "", fmt.Errorf("client_assertion: aud %v is not %s", claims.Aud, a.Issuer)
	case time.Now().Unix() >= claims.Exp:
		return "", errors.New("client_assertion: expired")
	case claims.Jti == "" || seen:
		return "", errors.New("client_assertion: jti missing or replayed")
	}
	size := (c.PublicKey.Curve.Params().BitSize + 7) / 8
	if len(sig) != 2*size || header.Alg[:2] != "ES" {
		return "", errors.New("client_assertion: not an ECDSA signature of the key's size")
	}
	h := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if header.Alg != "ES256" {
		return "", fmt.Errorf("client_assertion: alg %s not verified by this test server", header.Alg)
	}
	r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
	if !ecdsa.Verify(c.PublicKey, h[:], r, s) {
		return "", errors.New("client_assertion: bad signature")
	}
	return claims.Sub, nil
}

func (a *AuthServer) register(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", err.Error())
		return
	}
	a.mu.Lock()
	a.stats.Registrations++
	a.stats.LastRegistration = body
	a.mu.Unlock()
	var redirects []string
	if list, ok := body["redirect_uris"].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				redirects = append(redirects, s)
			}
		}
	}
	if len(redirects) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required")
		return
	}
	method, _ := body["token_endpoint_auth_method"].(string)
	if method == "" {
		method = "client_secret_basic"
	}
	if !slices.Contains(a.authMethods(), method) {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "token_endpoint_auth_method "+method+" is not supported")
		return
	}
	c := &RegisteredClient{ID: a.newSecret("client"), Method: method, RedirectURIs: redirects}
	if method != "none" {
		c.Secret = a.newSecret("secret")
	}
	a.mu.Lock()
	a.clients[c.ID] = c
	a.mu.Unlock()
	resp := map[string]any{"client_id": c.ID, "token_endpoint_auth_method": method, "redirect_uris": redirects, "client_id_issued_at": time.Now().Unix()}
	if c.Secret != "" {
		resp["client_secret"] = c.Secret
		resp["client_secret_expires_at"] = 0
	}
	writeJSON(w, http.StatusCreated, resp)
}

// randomID returns 16 random bytes, hex encoded.
func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func s256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
