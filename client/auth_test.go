package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// A 401 is an authorization challenge, never a reason to try HTTP+SSE:
// without WithAuth it is reported as itself; with an Authorizer that
// cannot authorize, its typed error reaches the caller of Dial.
func TestAuthNoTransportFallback(t *testing.T) {
	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{})
	defer as.Close()
	ps := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as})
	defer ps.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, err := client.Dial(ctx, client.URL(ps.URL))
	var he *jsonrpc.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without WithAuth: err = %v, want the 401", err)
	}
	a, err := auth.New(auth.Config{}) // nobody to ask
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Dial(ctx, client.URL(ps.URL), client.WithAuth(a))
	var ir *auth.InteractionRequiredError
	if !errors.As(err, &ir) {
		t.Fatalf("with WithAuth: err = %v, want *auth.InteractionRequiredError", err)
	}
	if got := ps.Hits()["GET /mcp"]; got != 0 {
		t.Fatalf("the client fell back to HTTP+SSE: %d GET /mcp", got)
	}
}

// countingTransport counts the requests it carries.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// WithAuth keeps WithHTTPClient's RoundTripper under its own: every
// request, the authorization ones included, goes through it.
func TestAuthKeepsTheHTTPClient(t *testing.T) {
	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{})
	defer as.Close()
	ps := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as})
	defer ps.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ct := &countingTransport{}
	a, err := auth.New(auth.Config{RedirectURL: "http://127.0.0.1:9/cb", Authorize: as.Approve})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(ctx, client.URL(ps.URL), client.WithAuth(a), client.WithHTTPClient(&http.Client{Transport: ct}))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	// POST initialize (401), metadata twice, registration, token, POST
	// initialize, POST initialized, DELETE: all of them.
	if got := ct.n.Load(); got < 8 {
		t.Fatalf("%d requests went through the host's transport", got)
	}
}
