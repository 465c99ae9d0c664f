package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/anymcp/anymcp/internal/origin"
)

// The token types and grant of the identity assertion exchange (RFC 8693).
const (
	stepTokenExchange      = "token exchange" // GrantError.Step
	grantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG         = "urn:ietf:params:oauth:token-type:id-jag"
)

// IDJAG gives the assertions of enterprise-managed authorization (SEP-990,
// cross-app access): the person signed in to the enterprise's identity
// provider (single sign-on) has an ID token; the identity provider trades it
// (RFC 8693 token exchange) for an Identity Assertion JWT Authorization
// Grant (ID-JAG) for one authorization server and resource, and the client
// presents that to the authorization server with the jwt-bearer grant. No
// browser is opened: the enterprise's policy decides.
//
// Use its Assertion method as Config.Assertion, with GrantJWTBearer and the
// client's credentials at the MCP server's authorization server:
//
//	j := &auth.IDJAG{TokenEndpoint: idpToken, ClientID: idpClient, ClientSecret: idpSecret, IDToken: sso.IDToken}
//	a, err := auth.New(auth.Config{Grant: auth.GrantJWTBearer, Assertion: j.Assertion, ClientID: id, ClientSecret: secret})
//
// The ID token is sent to TokenEndpoint alone, never to a server the
// identity provider redirects to on another origin, nor to the MCP server
// or its authorization server.
type IDJAG struct {
	// TokenEndpoint is the identity provider's token endpoint: https, or
	// http on a loopback host.
	TokenEndpoint string
	// ClientID and ClientSecret are this client's credentials at the
	// identity provider (HTTP Basic when there is a secret; the client_id
	// parameter alone otherwise).
	ClientID     string
	ClientSecret string
	// IDToken returns the person's current ID token from the identity
	// provider. It is called for every exchange.
	IDToken func(ctx context.Context) (string, error)
	// HTTPClient sends the exchange; nil means http.DefaultClient.
	// Redirects to another origin are refused whatever its policy.
	HTTPClient *http.Client
}

// Assertion exchanges the ID token for an ID-JAG for r's authorization
// server (the audience) and resource, with r's scopes. The identity
// provider's refusal is a *GrantError (Step "token exchange").
func (j *IDJAG) Assertion(ctx context.Context, r AssertionRequest) (string, error) {
	if j.IDToken == nil {
		return "", errors.New("IDJAG: no IDToken function")
	}
	endpoint, err := checkSecure("the identity provider's token endpoint", j.TokenEndpoint)
	if err != nil {
		return "", err
	}
	idToken, err := j.IDToken(ctx)
	if err != nil {
		return "", err
	}
	if idToken = strings.TrimSpace(idToken); idToken == "" {
		return "", errors.New("IDJAG: the ID token is empty")
	}
	cc := &clientcredentials.Config{
		ClientID:     j.ClientID,
		ClientSecret: j.ClientSecret,
		TokenURL:     endpoint.String(),
		Scopes:       r.Scopes,
		AuthStyle:    oauth2.AuthStyleInParams,
		EndpointParams: url.Values{
			"grant_type":           {grantTypeTokenExchange},
			"subject_token":        {idToken},
			"subject_token_type":   {tokenTypeIDToken},
			"requested_token_type": {tokenTypeIDJAG},
			"audience":             {r.Issuer},
			"resource":             {r.Resource},
		},
	}
	if j.ClientSecret != "" {
		cc.AuthStyle = oauth2.AuthStyleInHeader
	}
	hc := j.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	sent := &sentValues{}
	sent.add(idToken)
	ot, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, withSentHidden(origin.Guard(pinLocalhost(hc)), sent)))
	if err != nil {
		return "", hideSent(grantError(stepTokenExchange, err, sent.list()...), sent.list())
	}
	if got, _ := ot.Extra("issued_token_type").(string); got != tokenTypeIDJAG {
		return "", hideSent(&GrantError{Step: stepTokenExchange, Description: "the identity provider issued a token of type " + quoteOrNone(excerpt([]byte(got))) + ", not an ID-JAG"}, sent.list())
	}
	return ot.AccessToken, nil
}

// quoteOrNone quotes s, or says it is missing.
func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return `"` + s + `"`
}
