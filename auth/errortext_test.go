package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The errors of package auth say what failed in the terms of the
// protocol (OAuth metadata, the token endpoint, the authorization
// response), never with the name of a Go package: neither auth's own
// nor that of golang.org/x/oauth2, whose messages start "oauth2: ".
func TestErrorTextNamesNoPackage(t *testing.T) {
	cause := errors.New("connection refused")
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&InteractionRequiredError{Server: "https://mcp.example/mcp", Issuer: "https://as.example"},
			"https://mcp.example/mcp needs a person to authorize this client at https://as.example, and this program has no way to ask one"},
		{&MetadataError{URL: "https://as.example/.well-known/oauth-authorization-server", Reason: "no token_endpoint"},
			"OAuth metadata at https://as.example/.well-known/oauth-authorization-server: no token_endpoint"},
		{&MetadataError{Reason: "none found", Err: cause},
			"OAuth metadata: none found: connection refused"},
		{&IssuerMismatchError{Expected: "https://as.example"},
			"the authorization response has no iss, but https://as.example says it sends one (RFC 9207): response ignored"},
		{&IssuerMismatchError{Expected: "https://as.example", Got: "https://evil.example"},
			`the authorization response comes from issuer "https://evil.example", not "https://as.example" (RFC 9207): response ignored`},
		{&StateMismatchError{},
			"the authorization response does not carry this request's state: response ignored"},
		{&GrantError{Step: "token", Status: 400, Code: "invalid_grant", Description: "code expired"},
			"the authorization server refused the token (HTTP 400): invalid_grant: code expired"},
		{&AssertionError{Issuer: "https://as.example", Err: &GrantError{Step: stepTokenExchange, Status: 401, Code: "invalid_client"}},
			"no assertion for the jwt-bearer grant at https://as.example: the identity provider refused the token exchange (HTTP 401): invalid_client"},
		{&ConfigError{Reason: "a client_credentials grant needs a ClientID"},
			"OAuth configuration: a client_credentials grant needs a ClientID"},
		{grantError("token", cause),
			"token request: connection refused"},
		{grantError("refresh", errors.New("oauth2: server response missing access_token")),
			"refresh request: server response missing access_token"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%T:\n got %s\nwant %s", tt.err, got, tt.want)
		}
	}
}

// A token endpoint whose answer oauth2 cannot use (200 without an
// access_token) gives an error that names the request, not oauth2, and
// still unwraps to oauth2's error.
func TestTokenAnswerErrorNamesNoPackage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"token_type":"Bearer"}`)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc := &clientcredentials.Config{ClientID: "c", ClientSecret: "s", TokenURL: srv.URL + "/token"}
	_, raw := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, srv.Client()))
	if raw == nil || !strings.HasPrefix(raw.Error(), "oauth2: ") {
		t.Fatalf("oauth2 no longer names itself in this error; the test shows nothing: %v", raw)
	}
	err := grantError("client_credentials", raw)
	if msg := err.Error(); strings.Contains(msg, "oauth2:") || !strings.HasPrefix(msg, "client_credentials request: ") {
		t.Errorf("error %q", msg)
	}
	if !errors.Is(err, raw) {
		t.Errorf("%v does not unwrap to oauth2's error", err)
	}
}
