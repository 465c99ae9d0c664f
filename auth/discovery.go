package auth

import (
	"context"
	"errors"
	"net/http"
)

// discovery is what discovery found for one server.
type discovery struct {
	shownURL string            // the server's URL as errors and logs show it (origin.Redact)
	resource string            // the resource indicator sent on every request
	prm      *resourceMetadata // nil for a server of 2025-03-26
	server   *serverMetadata
	hc       *http.Client
	dpop     bool // tokens are DPoP-bound (Authorizer.dpopFor)
}

func (d *discovery) key() Key { return Key{Issuer: d.server.Issuer, Resource: d.resource} }

// discover finds the server's resource metadata and its authorization
// server's metadata. Without either, the 2025-03-26 default endpoints are
// assumed only when the server asked for a Bearer token (bearer): a 401
// of another kind (an API key server's) is not taken for OAuth.
func (a *Authorizer) discover(ctx context.Context, s *serverState, ch *Challenge, header http.Header, bearer bool) (*discovery, error) {
	d := &discovery{shownURL: s.shown, hc: s.hc}
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
			return nil, &MetadataError{URL: s.shown, Reason: "no protected resource metadata, and no usable authorization server at its origin", Err: errors.Join(prmErr, err)}
		}
		if m.URL == "" && !bearer {
			return nil, errNotOAuth
		}
		d.server, d.resource = m, canonicalResource(s.url)
		d.dpop = a.dpopFor(ctx, s, nil, m)
		a.log.DebugContext(ctx, "no resource metadata; the server's origin is its authorization server (2025-03-26)", "server", s.shown, "issuer", m.Issuer, "metadata", m.URL)
		return d, nil
	}
	d.prm, d.resource = prm, prm.Resource
	issuer := a.pickIssuer(ctx, prm)
	m, err := discoverServer(ctx, s.hc, issuer, header)
	if err != nil {
		return nil, err
	}
	d.server = m
	d.dpop = a.dpopFor(ctx, s, prm, m)
	a.log.DebugContext(ctx, "OAuth authorization server discovered", "server", s.shown, "resource_metadata", prm.URL, "issuer", m.Issuer, "metadata", m.URL)
	return d, nil
}

// pickIssuer chooses among the resource's authorization servers: one this
// client already has a token or a registration with, else the first.
func (a *Authorizer) pickIssuer(ctx context.Context, prm *resourceMetadata) string {
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
