package auth

import (
	"context"
	"net/url"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// tokenRequest is a token request other than the code exchange — the
// client_credentials grant and refreshes — through oauth2's clientcredentials
// package, whose EndpointParams carry what golang.org/x/oauth2's own
// refresh cannot: the resource indicator (RFC 8707) and a client assertion
// (RFC 7523); its grant_type may be replaced (refresh_token).
func (a *Authorizer) tokenRequest(ctx context.Context, d *discovery, c *ClientInfo, params url.Values, scopes []string) (*clientcredentials.Config, error) {
	cc := &clientcredentials.Config{
		ClientID:       c.ClientID,
		TokenURL:       d.server.TokenEndpoint,
		Scopes:         scopes,
		EndpointParams: params,
		AuthStyle:      authStyle(c.AuthMethod),
	}
	if c.AuthMethod == authBasic || c.AuthMethod == authPost {
		cc.ClientSecret = c.ClientSecret
	}
	params.Set("resource", d.resource)
	if c.AuthMethod == authJWT {
		assertion, err := clientAssertion(a.cfg.PrivateKey, a.cfg.KeyID, c.ClientID, d.server.Issuer, time.Now())
		if err != nil {
			return nil, err
		}
		params.Set("client_assertion_type", clientAssertionType)
		params.Set("client_assertion", assertion)
	}
	return cc, nil
}

// refresh trades t's refresh token for a new token (RFC 6749 section 6),
// keeping the refresh token when the server sends no new one.
func (a *Authorizer) refresh(ctx context.Context, d *discovery, c *ClientInfo, t *Token) (*Token, error) {
	return a.tokenCall(ctx, d, "refresh", func(octx context.Context) (*oauth2.Token, error) {
		cc, err := a.tokenRequest(ctx, d, c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.RefreshToken}}, nil)
		if err != nil {
			return nil, err
		}
		return cc.Token(octx)
	}, func(ot *oauth2.Token) (*Token, error) {
		return fromOAuth2(ot, "refresh", t.Scopes, c.ClientID, grantNamed(t.Grant), t.RefreshToken, a.jktFor(ctx, d), time.Now())
	})
}
