package auth

import (
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// jwtBearer runs the JWT bearer authorization grant (RFC 7523 section
// 2.1): the assertion the host's Config.Assertion gives, for this
// authorization server and resource. A refusal is the caller's answer: the
// grant is neither tried again nor swapped for another.
func (a *Authorizer) jwtBearer(ctx context.Context, d *discovery, c *ClientInfo, scopes []string) (*Token, error) {
	if len(d.server.GrantTypesSupported) > 0 && !slices.Contains(d.server.GrantTypesSupported, grantTypeJWTBearer) {
		a.log.WarnContext(ctx, "the authorization server does not list the jwt-bearer grant; trying it anyway", "issuer", d.server.Issuer)
	}
	return a.tokenCall(ctx, d, GrantJWTBearer.String(), func(octx context.Context) (*oauth2.Token, error) {
		// Asked anew for each request: an ID-JAG is good once.
		assertion, err := a.cfg.Assertion(ctx, AssertionRequest{Issuer: d.server.Issuer, Resource: d.resource, Scopes: slices.Clone(scopes)})
		if err != nil {
			return nil, &AssertionError{Issuer: d.server.Issuer, Err: err}
		}
		if assertion = strings.TrimSpace(assertion); assertion == "" {
			return nil, &AssertionError{Issuer: d.server.Issuer, Err: errors.New("the assertion is empty")}
		}
		cc, err := a.tokenRequest(ctx, d, c, url.Values{"grant_type": {grantTypeJWTBearer}, "assertion": {assertion}}, scopes)
		if err != nil {
			return nil, err
		}
		return cc.Token(octx)
	}, func(ot *oauth2.Token) (*Token, error) {
		return fromOAuth2(ot, GrantJWTBearer.String(), scopes, c.ClientID, GrantJWTBearer, "", a.jktFor(ctx, d), time.Now())
	})
}

// assertionFileLimit bounds an assertion file: a JWT is a few kilobytes.
const assertionFileLimit = 64 << 10

// AssertionFromFile returns an AssertionFunc that reads the assertion from
// the file at path at every grant, as a platform that rotates its workload
// identity token there expects (a Kubernetes projected service account
// token, a CI system's OIDC token file): workload identity federation
// (SEP-1933). Surrounding white space is dropped; a file larger than 64 KiB
// or empty is an error.
func AssertionFromFile(path string) AssertionFunc {
	return func(ctx context.Context, _ AssertionRequest) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, assertionFileLimit+1))
		if err != nil {
			return "", err
		}
		if len(b) > assertionFileLimit {
			return "", errors.New(path + ": larger than 64 KiB, not an assertion")
		}
		s := strings.TrimSpace(string(b))
		if s == "" {
			return "", errors.New(path + ": empty")
		}
		return s, nil
	}
}
