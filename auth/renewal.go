package auth

import (
	"context"
	"errors"
	"net/http"
	"time"
)

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
	refused   bool        // Login: the server answered its probe with a 401
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
		if d, err = a.discover(ctx, s, r.challenge, r.header, r.challenge != nil || r.refused); err != nil {
			return 0, nil, nil, err
		}
	}
	key := d.key()
	if prevKey != key {
		prev = nil // another issuer or resource: the old token says nothing here
	}
	if !r.stepUp && !r.force {
		out, t, err := a.storedOrRefreshed(ctx, s, d, key, prev, r.noRefresh)
		if err != nil || t != nil {
			return out, t, d, err
		}
		if r.proactive {
			return unchanged, nil, d, nil
		}
	}
	var prevScopes []string
	if prev != nil {
		prevScopes = prev.Scopes
	}
	scopes, err := a.scopes(d, prevScopes, r.challenge)
	if se, ok := errors.AsType[*ScopeError](err); ok {
		a.log.WarnContext(ctx, "scopes refused", "server", s.shown, "source", se.Source, "count", se.Count, "bytes", se.Bytes, "reason", se.Reason)
		return 0, nil, nil, err
	}
	// A kept registration is checked before a person is sent to the
	// authorization server with it when a login was asked for, or when
	// no token is kept to show that it worked (see staleclient.go).
	kept, err := a.store.Token(ctx, key)
	if err != nil {
		return 0, nil, nil, err
	}
	nt, err := a.grant(ctx, d, scopes, r.force || kept == nil)
	if err != nil {
		return 0, nil, nil, err
	}
	if err := a.save(ctx, key, nt); err != nil {
		return 0, nil, nil, err
	}
	a.log.InfoContext(ctx, "OAuth authorization done", "server", s.shown, "issuer", key.Issuer, "grant", a.cfg.Grant.String(), "token", nt)
	return granted, nt, d, nil
}

// storedOrRefreshed returns a stored token this caller has not tried, or
// refreshes the one it has (or the stored one): nil, nil when neither
// works. Over a LockingStore it holds the store's lock throughout, so that
// another process renewing the same token meanwhile is waited for, and its
// token used, rather than its refresh token spent a second time.
func (a *Authorizer) storedOrRefreshed(ctx context.Context, s *serverState, d *discovery, key Key, prev *Token, noRefresh bool) (outcome, *Token, error) {
	if ls, ok := a.store.(LockingStore); ok {
		unlock, err := ls.LockTokens(ctx)
		if err != nil {
			return 0, nil, err
		}
		defer unlock()
	}
	now := time.Now()
	stored, err := a.store.Token(ctx, key)
	if err != nil {
		return 0, nil, err
	}
	if stored != nil && !a.usable(ctx, stored) {
		stored = nil // bound to a key this Authorizer does not hold
	}
	if stored != nil {
		if err := stored.check("store"); err != nil {
			a.log.WarnContext(ctx, "a stored token cannot be used; ignored", "server", s.shown, "issuer", key.Issuer, "err", err)
			stored = nil
		}
	}
	if stored != nil && (prev == nil || stored.AccessToken != prev.AccessToken) && !stored.RefreshDue(now) {
		a.log.DebugContext(ctx, "using a stored OAuth token", "server", s.shown, "issuer", key.Issuer)
		return reusedStored, stored, nil
	}
	cand := stored
	if cand == nil && prev != nil && a.usable(ctx, prev) {
		cand = prev
	}
	if noRefresh || cand == nil || cand.RefreshToken == "" {
		return 0, nil, nil
	}
	c := a.clientFor(ctx, d, cand.ClientID)
	if c == nil {
		return 0, nil, nil
	}
	nt, err := a.refresh(ctx, d, c, cand)
	if err == nil {
		a.log.InfoContext(ctx, "OAuth token refreshed", "server", s.shown, "issuer", key.Issuer, "token", nt)
		if err := a.save(ctx, key, nt); err != nil {
			return 0, nil, err
		}
		return refreshed, nt, nil
	}
	var ge *GrantError
	if !errors.As(err, &ge) {
		return 0, nil, err
	}
	a.log.InfoContext(ctx, "OAuth refresh refused; the refresh token is dropped", "server", s.shown, "issuer", key.Issuer, "err", err)
	if why := refusedClient(err); why != "" && c.Registration == RegistrationDynamic {
		a.forgetClient(ctx, c, why, "the next authorization registers again")
	}
	dead := *cand
	dead.RefreshToken = ""
	if err := a.store.SaveToken(ctx, key, &dead); err != nil {
		return 0, nil, err
	}
	return 0, nil, nil
}

// grant obtains a new token: client_credentials, jwt-bearer, or the
// authorization code flow (which needs a person, and a registration).
// checkKept: a kept registration is checked first (clientRefused).
func (a *Authorizer) grant(ctx context.Context, d *discovery, scopes []string, checkKept bool) (*Token, error) {
	if a.cfg.Grant == GrantAuthorizationCode && a.cfg.Authorize == nil {
		return nil, &InteractionRequiredError{Server: d.shownURL, Issuer: d.server.Issuer}
	}
	c, err := a.client(ctx, d)
	if err != nil {
		return nil, err
	}
	var t *Token
	switch a.cfg.Grant {
	case GrantClientCredentials:
		t, err = a.clientCredentials(ctx, d, c, scopes)
	case GrantJWTBearer:
		t, err = a.jwtBearer(ctx, d, c, scopes)
	default:
		t, err = a.authorizationCode(ctx, d, c, scopes, checkKept)
		var sc *staleClient
		if errors.As(err, &sc) {
			// A registration the server forgot (it keeps them in
			// memory, and restarted): a new one, and the flow again.
			a.forgetClient(ctx, c, sc.why, "registering again")
			if c, err = a.client(ctx, d); err == nil {
				t, err = a.authorizationCode(ctx, d, c, scopes, false)
			}
		}
	}
	if err == nil && c.Registration != RegistrationDynamic {
		// Kept, without its secret, so that a later run without the
		// host's settings can refresh a public client's token.
		kept := *c
		kept.ClientSecret = ""
		if serr := a.store.SaveClient(ctx, &kept); serr != nil {
			a.log.WarnContext(ctx, "keeping the OAuth client identity", "issuer", c.Issuer, "err", serr)
		}
	}
	if why := refusedClient(err); why != "" && c != nil && c.Registration == RegistrationDynamic {
		// The server no longer knows the registration: the next
		// attempt registers again.
		a.forgetClient(ctx, c, why, "the next authorization registers again")
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
// authorization server supports it, for a refresh token. A set past the
// bounds (checkScopes) is a *ScopeError: nothing is asked for.
func (a *Authorizer) scopes(d *discovery, prev []string, ch *Challenge) ([]string, error) {
	var s []string
	seen := map[string]bool{} // a hostile challenge may name a great many
	add := func(list []string) {
		for _, x := range list {
			if x != "" && x != scopeOfflineAccess && !seen[x] {
				seen[x] = true
				s = append(s, x)
			}
		}
	}
	source, challenged := "config", ch.scopes()
	if len(challenged) > 0 {
		source = "challenge"
	}
	add(prev)
	add(challenged)
	add(a.cfg.Scopes)
	if len(s) == 0 && d.prm != nil {
		source = "scopes_supported"
		add(d.prm.ScopesSupported)
	}
	if a.cfg.Grant == GrantAuthorizationCode && d.server.supportsScope(scopeOfflineAccess) {
		s = append(s, scopeOfflineAccess)
	}
	if err := checkScopes(s); err != nil {
		n, size := scopeSize(s)
		return nil, &ScopeError{Source: source, Count: n, Bytes: size, Reason: err.Error()}
	}
	return s, nil
}

const scopeOfflineAccess = "offline_access"
