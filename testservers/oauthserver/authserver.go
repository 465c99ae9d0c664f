package oauthserver

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"maps"
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
	// Assertion, when set, lists the jwt-bearer grant (RFC 7523) in
	// grant_types_supported and accepts it for an assertion it returns
	// nil for; it is given the assertion, the authenticated client, this
	// server's issuer and the request's resource (see IdP.Check). Its
	// error is the token endpoint's invalid_grant.
	Assertion func(assertion, clientID, issuer, resource string) error
	// AccessTTL is the lifetime of access tokens; an hour when zero.
	AccessTTL time.Duration
	// NoRefresh issues no refresh tokens; NoRotation keeps a refresh token
	// valid after use (otherwise each use replaces it).
	NoRefresh  bool
	NoRotation bool
	// Deny makes the user decline: authorization responses carry
	// error=access_denied.
	Deny bool
	// EditMetadata, when set, rewrites the metadata document before it is
	// served, as a hostile server would: endpoints on another host, with
	// control characters or user information.
	EditMetadata func(m map[string]any)
	// ForwardAuthorization, when set, answers every authorization request
	// with a redirect to the URL it returns for the request's query, as a
	// mix-up attacker sends the person on to another authorization server
	// (with the client id and redirect URI the client has there).
	ForwardAuthorization func(q url.Values) string
	// Clients are known before any registration.
	Clients []RegisteredClient
	// DPoP advertises dpop_signing_alg_values_supported ["ES256"] and binds
	// the token of a token request that carries a valid DPoP proof (RFC 9449
	// section 5) to the proof's key: token_type "DPoP", TokenInfo.JKT set. A
	// request without a proof gets a Bearer token; one with a bad proof gets
	// 400 invalid_dpop_proof.
	DPoP bool
	// DPoPNonce, when set, is the nonce every proof at the token endpoint must
	// carry: a proof without it (or with another) is answered 400
	// use_dpop_nonce with a DPoP-Nonce header (RFC 9449 section 8). It
	// matters only with DPoP.
	DPoPNonce string
	// QuoteRequests lists grant types whose token requests are refused
	// (400 invalid_grant) with the whole request quoted back — its
	// headers, its form as sent and each field decoded — in
	// error_description, and its form in error_uri: a careless server
	// that echoes the client's secrets.
	QuoteRequests []string
	// TokenSuffixes, when set, gives what to append to the access and
	// refresh tokens it issues for a grant type (which it then knows as
	// issued): tokens too long, or with bytes an HTTP header cannot carry.
	TokenSuffixes func(grantType string) (access, refresh string)
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

	DPoPProofs          int // valid DPoP proofs at the token endpoint
	DPoPNonceChallenges int // use_dpop_nonce answers
}

// TokenInfo is what an AuthServer knows of an access token it issued.
type TokenInfo struct {
	ClientID string
	Scopes   []string
	Resource string
	Expiry   time.Time
	JKT      string // the SHA-256 JWK thumbprint (RFC 7638) of the key the token is bound to; "" for a Bearer token
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
	proofs  jtiCache // the jtis of DPoP proofs
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
	jkt                string // the key of its DPoP-bound access token, or ""
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
		proofs:  jtiCache{},
	}
	if a.ttl == 0 {
		a.ttl = time.Hour
	}
	a.stats.Metadata = map[string]int{}
	a.stats.Tokens = map[string]int{}
	a.addPreRegistered()
	return a
}

// addPreRegistered adds the clients of the options. a.mu is held, or a
// is not shared yet.
func (a *AuthServer) addPreRegistered() {
	for _, c := range a.opts.Clients {
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
}

// Forget forgets every dynamic registration, code and token, as a server
// that keeps them in memory does when it restarts (the TypeScript SDK's
// OAuth demo): a client id it registered is then unknown, and its
// authorization endpoint answers it 400 invalid_client.
func (a *AuthServer) Forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.clients)
	a.addPreRegistered()
	clear(a.codes)
	clear(a.access)
	clear(a.refresh)
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
	if a.opts.Assertion != nil {
		grants = append(grants, grantTypeJWTBearer)
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
	if a.opts.DPoP {
		m["dpop_signing_alg_values_supported"] = []string{dpopAlg}
	}
	if a.opts.Discovery == DiscoveryOIDC {
		m["subject_types_supported"] = []string{"public"}
		m["id_token_signing_alg_values_supported"] = []string{"RS256"}
		m["jwks_uri"] = a.URL + "/jwks.json"
	}
	if a.opts.EditMetadata != nil {
		a.opts.EditMetadata(m)
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
	if a.opts.ForwardAuthorization != nil {
		http.Redirect(w, r, a.opts.ForwardAuthorization(q), http.StatusFound)
		return
	}
	a.mu.Lock()
	a.stats.Authorizations++
	a.stats.LastAuthorization = q
	deny := a.opts.Deny
	c := a.lookupClient(q.Get("client_id"))
	a.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if c == nil {
		// Not redirected: the redirect URI of an unknown client is not
		// to be trusted (RFC 6749 section 4.1.2.1).
		oauthError(w, http.StatusBadRequest, "invalid_client", "unknown client_id")
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
