package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// Authorizer obtains, keeps and renews tokens for MCP servers, as its
// Config says. One Authorizer serves any number of servers and
// connections; it is safe for concurrent use.
type Authorizer struct {
	cfg   Config
	store Store
	log   *slog.Logger

	mu      sync.Mutex
	servers map[string]*serverState // by server URL
}

// New returns an Authorizer, or a *ConfigError when cfg cannot work.
func New(cfg Config) (*Authorizer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &Authorizer{cfg: cfg, store: cfg.Store, log: cfg.Logger, servers: map[string]*serverState{}}
	if a.store == nil {
		a.store = &MemoryStore{}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return a, nil
}

// Store returns where the Authorizer keeps tokens and registrations.
func (a *Authorizer) Store() Store { return a.store }

// Transport returns the RoundTripper that authorizes the requests to the
// MCP server at serverURL and sends them through base (nil means
// http.DefaultTransport). Requests to any other origin pass through
// untouched, without a token. Transports for the same server share their
// tokens and their renewals.
func (a *Authorizer) Transport(serverURL string, base http.RoundTripper) (*Transport, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	s, err := a.state(serverURL, base)
	if err != nil {
		return nil, err
	}
	return &Transport{s: s, base: base}, nil
}

// Login authorizes the client for the server at serverURL now, whether or
// not a token is stored: discovery, registration and the grant (with
// Config.Authorize for the authorization code flow). It probes the server
// with a GET first, to read its challenge; a server that does not answer
// 401 is looked up at its well-known metadata locations.
func (a *Authorizer) Login(ctx context.Context, serverURL string) (*Token, error) {
	s, err := a.state(serverURL, nil)
	if err != nil {
		return nil, err
	}
	ch, header := a.probe(ctx, s)
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()
	if _, err := s.renew(ctx, gen, renewal{challenge: ch, header: header, force: true}); err != nil {
		return nil, err
	}
	tok, _ := s.snapshot()
	return tok, nil
}

// probe GETs the server without a token, for its challenge.
func (a *Authorizer) probe(ctx context.Context, s *serverState) (*Challenge, http.Header) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.raw, nil)
	if err != nil {
		return nil, nil
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.hc.Do(req)
	if err != nil {
		a.log.DebugContext(ctx, "auth: probe failed; using the well-known locations", "server", s.raw, "err", err)
		return nil, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, nil
	}
	drain(resp.Body)
	return bearerChallenge(resp.Header), nil
}

// Entry is a stored token and what it is for.
type Entry struct {
	Key   Key
	Token *Token
}

// Tokens lists the stored tokens for the server at serverURL (tokens whose
// resource is the server or a parent of it), or every stored token when
// serverURL is "".
func (a *Authorizer) Tokens(ctx context.Context, serverURL string) ([]Entry, error) {
	var u *url.URL
	if serverURL != "" {
		var err error
		if u, err = parseServerURL(serverURL); err != nil {
			return nil, err
		}
	}
	keys, err := a.store.Keys(ctx)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, k := range keys {
		if u != nil && !resourceCovers(k.Resource, u) {
			continue
		}
		t, err := a.store.Token(ctx, k)
		if err != nil {
			return nil, err
		}
		if t != nil {
			out = append(out, Entry{Key: k, Token: t})
		}
	}
	return out, nil
}

// Logout forgets the tokens stored for the server at serverURL and
// returns their keys. Registrations are kept (they belong to the
// authorization server, not to the server).
func (a *Authorizer) Logout(ctx context.Context, serverURL string) ([]Key, error) {
	entries, err := a.Tokens(ctx, serverURL)
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, e := range entries {
		if err := a.store.DeleteToken(ctx, e.Key); err != nil {
			return keys, err
		}
		keys = append(keys, e.Key)
	}
	a.mu.Lock()
	s := a.servers[serverURL]
	a.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.token, s.loaded = nil, true
		s.gen++
		s.mu.Unlock()
	}
	return keys, nil
}

func parseServerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{fmt.Sprintf("server URL %q is not an http(s) URL", raw)}
	}
	return u, nil
}

// state returns the shared state of a server, made on first use.
func (a *Authorizer) state(serverURL string, base http.RoundTripper) (*serverState, error) {
	u, err := parseServerURL(serverURL)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.servers[serverURL]; s != nil {
		return s, nil
	}
	hc := a.cfg.HTTPClient
	if hc == nil {
		if base == nil {
			base = http.DefaultTransport
		}
		hc = &http.Client{Transport: base}
	}
	s := &serverState{a: a, url: u, raw: serverURL, hc: guard(hc)}
	a.servers[serverURL] = s
	return s, nil
}

// oauthContext makes oauth2 send its token requests with the discovery's
// (redirect-guarded) HTTP client.
func (a *Authorizer) oauthContext(ctx context.Context, d *discovery) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, d.hc)
}

// discovery is what discovery found for one server.
type discovery struct {
	serverURL string
	resource  string            // the resource indicator sent on every request
	prm       *ResourceMetadata // nil for a server of 2025-03-26
	server    *ServerMetadata
	hc        *http.Client
}

func (d *discovery) key() Key { return Key{Issuer: d.server.Issuer, Resource: d.resource} }

// discover finds the server's resource metadata and its authorization
// server's metadata. Without either, the 2025-03-26 default endpoints are
// assumed only when the server asked for a Bearer token (bearer): a 401
// of another kind (an API key server's) is not taken for OAuth.
func (a *Authorizer) discover(ctx context.Context, s *serverState, ch *Challenge, header http.Header, bearer bool) (*discovery, error) {
	d := &discovery{serverURL: s.raw, hc: s.hc}
	var fromChallenge string
	if ch != nil {
		fromChallenge = ch.Param(paramResourceMetadata)
	}
	prm, prmErr := discoverResource(ctx, s.hc, s.url, fromChallenge, header)
	var me *MetadataError
	if errors.As(prmErr, &me) || ctx.Err() != nil {
		return nil, prmErr
	}
	if prm == nil {
		// A server of 2025-03-26: its origin is the authorization server.
		m, err := legacyServer(ctx, s.hc, s.url, header)
		if err != nil {
			return nil, &MetadataError{URL: s.url.Redacted(), Reason: "no protected resource metadata, and no usable authorization server at its origin", Err: errors.Join(prmErr, err)}
		}
		if m.URL == "" && !bearer {
			return nil, errNotOAuth
		}
		d.server, d.resource = m, canonicalResource(s.url)
		a.log.DebugContext(ctx, "auth: no resource metadata; the server's origin is its authorization server (2025-03-26)", "server", s.raw, "issuer", m.Issuer, "metadata", m.URL)
		return d, nil
	}
	d.prm, d.resource = prm, prm.Resource
	issuer := a.pickIssuer(ctx, prm)
	m, err := discoverServer(ctx, s.hc, issuer, header)
	if err != nil {
		return nil, err
	}
	d.server = m
	a.log.DebugContext(ctx, "auth: discovered", "server", s.raw, "resource_metadata", prm.URL, "issuer", m.Issuer, "metadata", m.URL)
	return d, nil
}

// pickIssuer chooses among the resource's authorization servers: one this
// client already has a token or a registration with, else the first.
func (a *Authorizer) pickIssuer(ctx context.Context, prm *ResourceMetadata) string {
	if len(prm.AuthorizationServers) > 1 {
		for _, is := range prm.AuthorizationServers {
			if t, _ := a.store.Token(ctx, Key{Issuer: is, Resource: prm.Resource}); t != nil {
				return is
			}
		}
		for _, is := range prm.AuthorizationServers {
			if c, _ := a.store.Client(ctx, is); c != nil {
				return is
			}
		}
	}
	return prm.AuthorizationServers[0]
}

// outcome is what a renewal did.
type outcome int

const (
	renewedElsewhere outcome = iota // another caller renewed meanwhile: use its token
	reusedStored                    // a stored token this caller had not tried
	refreshed                       // a refresh grant
	granted                         // a new grant: authorization code or client credentials
	unchanged                       // nothing could be done (a proactive refresh that failed)
)

// renewal is why a token is renewed.
type renewal struct {
	challenge *Challenge
	header    http.Header // MCP-Protocol-Version, for discovery
	proactive bool        // the token is about to expire: refresh it, nothing more
	stepUp    bool        // 403 insufficient_scope: a new grant with more scopes
	force     bool        // Login: a new grant whatever is stored
	noRefresh bool        // this request already got a refreshed token refused
}

// obtain does the work of a renewal: discovery, then a stored token, a
// refresh or a new grant. It returns the token and its discovery.
func (a *Authorizer) obtain(ctx context.Context, s *serverState, r renewal, prev *Token, prevKey Key) (outcome, *Token, *discovery, error) {
	var d *discovery
	if r.proactive {
		d = s.lastDiscovery()
	}
	if d == nil {
		var err error
		if d, err = a.discover(ctx, s, r.challenge, r.header, r.challenge != nil || r.force); err != nil {
			return 0, nil, nil, err
		}
	}
	key := d.key()
	if prevKey != key {
		prev = nil // another issuer or resource: the old token says nothing here
	}
	now := time.Now()
	if !r.stepUp && !r.force {
		stored, err := a.store.Token(ctx, key)
		if err != nil {
			return 0, nil, nil, err
		}
		if stored != nil && (prev == nil || stored.AccessToken != prev.AccessToken) && !stored.RefreshDue(now) {
			a.log.DebugContext(ctx, "auth: using a stored token", "server", s.raw, "issuer", key.Issuer)
			return reusedStored, stored, d, nil
		}
		cand := stored
		if cand == nil {
			cand = prev
		}
		if !r.noRefresh && cand != nil && cand.RefreshToken != "" {
			if c := a.clientFor(ctx, d, cand.ClientID); c != nil {
				nt, err := a.refresh(ctx, d, c, cand)
				if err == nil {
					a.log.InfoContext(ctx, "auth: token refreshed", "server", s.raw, "issuer", key.Issuer, "token", nt)
					if err := a.save(ctx, key, nt); err != nil {
						return 0, nil, nil, err
					}
					return refreshed, nt, d, nil
				}
				var ge *GrantError
				if !errors.As(err, &ge) {
					return 0, nil, nil, err
				}
				a.log.InfoContext(ctx, "auth: refresh refused; the refresh token is dropped", "server", s.raw, "issuer", key.Issuer, "err", err)
				dead := *cand
				dead.RefreshToken = ""
				if err := a.store.SaveToken(ctx, key, &dead); err != nil {
					return 0, nil, nil, err
				}
			}
		}
		if r.proactive {
			return unchanged, nil, d, nil
		}
	}
	var prevScopes []string
	if prev != nil {
		prevScopes = prev.Scopes
	}
	nt, err := a.grant(ctx, d, a.scopes(d, prevScopes, r.challenge))
	if err != nil {
		return 0, nil, nil, err
	}
	if err := a.save(ctx, key, nt); err != nil {
		return 0, nil, nil, err
	}
	a.log.InfoContext(ctx, "auth: authorized", "server", s.raw, "issuer", key.Issuer, "grant", a.cfg.Grant.String(), "token", nt)
	return granted, nt, d, nil
}

// grant obtains a new token: client_credentials, or the authorization
// code flow (which needs a person, and a registration).
func (a *Authorizer) grant(ctx context.Context, d *discovery, scopes []string) (*Token, error) {
	if a.cfg.Grant == GrantAuthorizationCode && a.cfg.Authorize == nil {
		return nil, &InteractionRequiredError{Server: d.serverURL, Issuer: d.server.Issuer}
	}
	c, err := a.client(ctx, d)
	if err != nil {
		return nil, err
	}
	var t *Token
	if a.cfg.Grant == GrantClientCredentials {
		t, err = a.clientCredentials(ctx, d, c, scopes)
	} else {
		t, err = a.authorizationCode(ctx, d, c, scopes)
	}
	if err == nil && c.Registration != RegistrationDynamic {
		// Kept, without its secret, so that a later run without the
		// host's settings can refresh a public client's token.
		kept := *c
		kept.ClientSecret = ""
		if serr := a.store.SaveClient(ctx, &kept); serr != nil {
			a.log.WarnContext(ctx, "auth: keeping the client identity", "issuer", c.Issuer, "err", serr)
		}
	}
	var ge *GrantError
	if errors.As(err, &ge) && ge.Code == "invalid_client" && c.Registration == RegistrationDynamic {
		// The server no longer knows the registration: the next
		// attempt registers again.
		if derr := a.store.DeleteClient(ctx, c.Issuer); derr != nil {
			a.log.WarnContext(ctx, "auth: forgetting a refused registration", "issuer", c.Issuer, "err", derr)
		}
	}
	return t, err
}

// save stores t under key, and forgets the tokens other issuers gave for
// the same resource: the server moved to another authorization server.
func (a *Authorizer) save(ctx context.Context, key Key, t *Token) error {
	if err := a.store.SaveToken(ctx, key, t); err != nil {
		return err
	}
	keys, err := a.store.Keys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.Resource == key.Resource && k.Issuer != key.Issuer {
			if err := a.store.DeleteToken(ctx, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// scopes chooses what to ask for: the scopes asked for before, with the
// challenge's and the configured ones; when that is nothing, the
// resource's scopes_supported; then offline_access, when the
// authorization server supports it, for a refresh token.
func (a *Authorizer) scopes(d *discovery, prev []string, ch *Challenge) []string {
	var s []string
	add := func(list []string) {
		for _, x := range list {
			if x != "" && x != scopeOfflineAccess && !slices.Contains(s, x) {
				s = append(s, x)
			}
		}
	}
	add(prev)
	add(ch.scopes())
	add(a.cfg.Scopes)
	if len(s) == 0 && d.prm != nil {
		add(d.prm.ScopesSupported)
	}
	if a.cfg.Grant == GrantAuthorizationCode && d.server.supportsScope(scopeOfflineAccess) {
		s = append(s, scopeOfflineAccess)
	}
	return s
}

const scopeOfflineAccess = "offline_access"

// client returns the client identity to use with the discovered
// authorization server, in the specification's order: pre-registered
// credentials, a Client ID Metadata Document URL when the server supports
// them, a registration made before, a new Dynamic Client Registration.
func (a *Authorizer) client(ctx context.Context, d *discovery) (*ClientInfo, error) {
	m := d.server
	if a.cfg.ClientID != "" {
		if a.cfg.ClientIssuer != "" && a.cfg.ClientIssuer != m.Issuer {
			return nil, &MetadataError{URL: d.serverURL, Reason: fmt.Sprintf("the server's authorization server is %s, but the pre-registered client is for %s: not sending its credentials", m.Issuer, a.cfg.ClientIssuer)}
		}
		return &ClientInfo{Issuer: m.Issuer, ClientID: a.cfg.ClientID, ClientSecret: a.cfg.ClientSecret, AuthMethod: a.preRegisteredMethod(m), Registration: RegistrationPreRegistered}, nil
	}
	if a.cfg.ClientMetadataURL != "" && m.ClientIDMetadataDocumentSupported {
		method := authNone
		if a.cfg.PrivateKey != nil {
			method = authJWT
		}
		return &ClientInfo{Issuer: m.Issuer, ClientID: a.cfg.ClientMetadataURL, AuthMethod: method, Registration: RegistrationMetadataDocument}, nil
	}
	if a.cfg.RedirectURL == "" {
		return nil, &ConfigError{"a RedirectURL is needed to register a client and to authorize"}
	}
	stored, err := a.store.Client(ctx, m.Issuer)
	if err != nil {
		return nil, err
	}
	if stored != nil && stored.Registration == RegistrationDynamic && stored.usableFor(a.cfg.RedirectURL, time.Now()) {
		return stored, nil
	}
	if m.RegistrationEndpoint == "" {
		return nil, &MetadataError{URL: m.URL, Reason: "the authorization server offers no dynamic client registration, and no client ID metadata document is usable: give a pre-registered client id"}
	}
	c, err := register(ctx, d.hc, m, &a.cfg, a.cfg.RedirectURL, time.Now())
	if err != nil {
		return nil, err
	}
	a.log.InfoContext(ctx, "auth: registered", "issuer", m.Issuer, "client", c.ClientID, "method", c.AuthMethod)
	if err := a.store.SaveClient(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// clientFor returns the client that obtained a token, to refresh it, or
// nil when this Authorizer no longer has it.
func (a *Authorizer) clientFor(ctx context.Context, d *discovery, clientID string) *ClientInfo {
	m := d.server
	switch {
	case clientID == "":
		return nil
	case a.cfg.ClientID == clientID:
		if a.cfg.ClientIssuer != "" && a.cfg.ClientIssuer != m.Issuer {
			return nil
		}
		return &ClientInfo{Issuer: m.Issuer, ClientID: clientID, ClientSecret: a.cfg.ClientSecret, AuthMethod: a.preRegisteredMethod(m), Registration: RegistrationPreRegistered}
	case a.cfg.ClientMetadataURL == clientID:
		method := authNone
		if a.cfg.PrivateKey != nil {
			method = authJWT
		}
		return &ClientInfo{Issuer: m.Issuer, ClientID: clientID, AuthMethod: method, Registration: RegistrationMetadataDocument}
	}
	c, err := a.store.Client(ctx, m.Issuer)
	if err != nil || c == nil || c.ClientID != clientID {
		return nil
	}
	if c.Registration != RegistrationDynamic && c.AuthMethod != authNone {
		return nil // its secret or key is the host's, not in the store
	}
	return c
}

// preRegisteredMethod: private_key_jwt with a key; none without a secret;
// else client_secret_basic unless the server takes only client_secret_post.
func (a *Authorizer) preRegisteredMethod(m *ServerMetadata) string {
	switch {
	case a.cfg.PrivateKey != nil:
		return authJWT
	case a.cfg.ClientSecret == "":
		return authNone
	}
	methods := m.authMethods()
	if !slices.Contains(methods, authBasic) && slices.Contains(methods, authPost) {
		return authPost
	}
	return authBasic
}
