package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// TestRequestErrorsRedacted: a metadata, registration or token request
// whose connection the server drops gives an error that names the URL
// without its query values, and that still is a *url.Error for errors.As.
func TestRequestErrorsRedacted(t *testing.T) {
	const secret = "s1gn4ture"
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
	}))
	defer drop.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error holds the query's value: %v", what, err)
		}
		if !strings.Contains(err.Error(), "?sig=…") {
			t.Errorf("%s: the error does not name the URL: %v", what, err)
		}
		if _, ok := errors.AsType[*url.Error](err); !ok {
			t.Errorf("%s: errors.As finds no *url.Error in %v", what, err)
		}
	}

	var doc resourceMetadata
	check("metadata", getJSON(ctx, drop.Client(), drop.URL+"/prm?sig="+secret, nil, &doc))

	_, err := register(ctx, drop.Client(), &serverMetadata{Issuer: drop.URL, RegistrationEndpoint: drop.URL + "/register?sig=" + secret}, &Config{}, "http://127.0.0.1:9/callback", time.Now())
	check("registration", err)

	cc := &clientcredentials.Config{ClientID: "c", TokenURL: drop.URL + "/token?sig=" + secret}
	_, err = cc.Token(context.WithValue(ctx, oauth2.HTTPClient, drop.Client()))
	if err == nil || !strings.Contains(err.Error(), secret) {
		t.Fatalf("oauth2's error no longer shows the token URL; the test shows nothing: %v", err)
	}
	check("token", grantError("token", err))
}
