package auth

import (
	"context"
	"net/url"
	"slices"
	"time"

	"golang.org/x/oauth2"
)

// clientCredentials runs the client_credentials grant.
func (a *Authorizer) clientCredentials(ctx context.Context, d *discovery, c *ClientInfo, scopes []string) (*Token, error) {
	if len(d.server.GrantTypesSupported) > 0 && !slices.Contains(d.server.GrantTypesSupported, "client_credentials") {
		a.log.WarnContext(ctx, "the authorization server does not list client_credentials; trying it anyway", "issuer", d.server.Issuer)
	}
	return a.tokenCall(ctx, d, "client_credentials", func(octx context.Context) (*oauth2.Token, error) {
		cc, err := a.tokenRequest(ctx, d, c, url.Values{}, scopes)
		if err != nil {
			return nil, err
		}
		return cc.Token(octx)
	}, func(ot *oauth2.Token) (*Token, error) {
		return fromOAuth2(ot, "client_credentials", scopes, c.ClientID, GrantClientCredentials, "", a.jktFor(ctx, d), time.Now())
	})
}
