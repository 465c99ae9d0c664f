package auth

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Token is an access token for one resource from one authorization server,
// with what is needed to refresh it. Its String, GoString and LogValue
// show what it is for and when it expires, never the token itself.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scopes are the scopes requested (a step-up asks for them again, with
	// the ones challenged).
	Scopes []string `json:"scopes,omitempty"`
	// Granted are the scopes the authorization server says it granted,
	// when it said.
	Granted []string `json:"granted,omitempty"`
	// ClientID is the client the token was issued to: a refresh uses it.
	ClientID string `json:"client_id,omitempty"`
	// Grant is how the token was obtained (authorization_code,
	// client_credentials or jwt-bearer); refreshing keeps it.
	Grant string `json:"grant,omitempty"`
	// Obtained is when it was issued or last refreshed.
	Obtained time.Time `json:"obtained"`
	// JKT is the thumbprint of the key a DPoP token (TokenType "DPoP") is
	// bound to; "" for a Bearer token.
	JKT string `json:"jkt,omitempty"`
}

// refreshMargin: a token that expires within it is refreshed before use
// (within a quarter of its lifetime, for a token that lives less than two
// minutes).
const refreshMargin = 30 * time.Second

// RefreshDue reports whether t should be refreshed before it is used at
// now: it expires within the margin.
func (t *Token) RefreshDue(now time.Time) bool {
	if t.Expiry.IsZero() {
		return false
	}
	margin := refreshMargin
	if life := t.Expiry.Sub(t.Obtained); life > 0 && life/4 < margin {
		margin = life / 4
	}
	return !now.Add(margin).Before(t.Expiry)
}

// Expired reports whether t has expired at now.
func (t *Token) Expired(now time.Time) bool { return !t.Expiry.IsZero() && !now.Before(t.Expiry) }

// String describes t without its secrets.
func (t *Token) String() string {
	if t == nil {
		return "<no token>"
	}
	var b strings.Builder
	b.WriteString("token [REDACTED]")
	if !t.Expiry.IsZero() {
		b.WriteString(", expires " + t.Expiry.UTC().Format(time.RFC3339))
	}
	if t.RefreshToken != "" {
		b.WriteString(", refreshable")
	}
	if len(t.Scopes) > 0 {
		b.WriteString(", scopes " + strings.Join(t.Scopes, " "))
	}
	return b.String()
}

// GoString is String, so that %#v hides the secrets too.
func (t *Token) GoString() string { return t.String() }

// LogValue hides the secrets from slog.
func (t *Token) LogValue() slog.Value {
	if t == nil {
		return slog.StringValue("<no token>")
	}
	return slog.GroupValue(
		slog.String("access_token", "[REDACTED]"),
		slog.Bool("refreshable", t.RefreshToken != ""),
		slog.Time("expiry", t.Expiry),
		slog.String("scopes", strings.Join(t.Scopes, " ")),
	)
}

// fromOAuth2 makes a Token of an oauth2 token response to the request
// step (TokenError.Source). A response without a refresh token keeps the
// old one (a server that does not rotate refresh tokens). A token that
// cannot be used (Token.check) is a *TokenError; granted scopes past the
// bounds are not kept.
func fromOAuth2(ot *oauth2.Token, step string, requested []string, clientID string, grant Grant, oldRefresh, jkt string, now time.Time) (*Token, error) {
	if ot.AccessToken == "" {
		return nil, &GrantError{Step: step, Description: "the answer has no access_token"}
	}
	tokenType, bound := "Bearer", ""
	switch tt := ot.Type(); {
	case strings.EqualFold(tt, "Bearer"):
	case strings.EqualFold(tt, tokenTypeDPoP) && jkt != "":
		tokenType, bound = tokenTypeDPoP, jkt
	default:
		return nil, &GrantError{Step: step, Description: fmt.Sprintf("token_type %q: only Bearer tokens, and DPoP tokens asked for with a proof, are supported", excerpt([]byte(ot.TokenType)))}
	}
	t := &Token{
		AccessToken:  ot.AccessToken,
		TokenType:    tokenType,
		JKT:          bound,
		RefreshToken: ot.RefreshToken,
		Expiry:       ot.Expiry,
		Scopes:       requested,
		ClientID:     clientID,
		Grant:        grant.String(),
		Obtained:     now,
	}
	if s, ok := ot.Extra("scope").(string); ok && strings.TrimSpace(s) != "" && len(s) <= maxScopeBytes {
		if granted := strings.Fields(s); checkScopes(granted) == nil {
			t.Granted = granted
		}
	}
	if t.RefreshToken == "" {
		t.RefreshToken = oldRefresh
	}
	if err := t.check(step); err != nil {
		return nil, err
	}
	return t, nil
}
