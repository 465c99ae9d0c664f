package auth_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// A client for a server that wants OAuth tokens. The authorization server
// of the test servers approves at once; a real host would show authURL to
// a person (see ListenLoopback for the redirect listener) and return the
// URL the browser came back to.
func Example() {
	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{})
	defer as.Close()
	srv := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as, Scopes: []string{"mcp"}, ScopeInChallenge: true})
	defer srv.Close()

	a, err := auth.New(auth.Config{
		RedirectURL: "http://127.0.0.1:9/callback",
		Authorize: func(ctx context.Context, authURL string) (string, error) {
			return as.Approve(ctx, authURL) // a person, in a browser
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := client.Dial(ctx, client.URL(srv.URL), client.WithAuth(a))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	res, err := conn.CallTool(ctx, "echo", map[string]any{"text": "hello"})
	if err != nil {
		log.Fatal(err)
	}
	entries, _ := a.Tokens(ctx, srv.URL)
	fmt.Println(res.Content[0].Text, len(entries), entries[0].Token.Scopes, entries[0].Token.RefreshToken != "")
	// Output: hello 1 [mcp] true
}

// Enterprise-managed authorization (SEP-990): the person signed in to the
// enterprise's identity provider; it trades their ID token for an ID-JAG
// for the MCP server's authorization server, which the client presents
// with the jwt-bearer grant. No browser, no consent screen.
func ExampleIDJAG() {
	idp := oauthserver.StartIdP(oauthserver.IdPOptions{ClientID: "host-at-idp", ClientSecret: "idp-secret", IDToken: "id-token-from-sso", GrantClientID: "mcp-host"})
	defer idp.Close()
	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{Assertion: idp.Check, Clients: []oauthserver.RegisteredClient{{ID: "mcp-host", Secret: "as-secret"}}})
	defer as.Close()
	srv := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as})
	defer srv.Close()

	sso := &auth.IDJAG{
		TokenEndpoint: idp.TokenEndpoint(),
		ClientID:      "host-at-idp",
		ClientSecret:  "idp-secret",
		IDToken: func(ctx context.Context) (string, error) {
			return "id-token-from-sso", nil // the host's single sign-on session
		},
	}
	a, err := auth.New(auth.Config{Grant: auth.GrantJWTBearer, Assertion: sso.Assertion, ClientID: "mcp-host", ClientSecret: "as-secret"})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := client.Dial(ctx, client.URL(srv.URL), client.WithAuth(a))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	res, err := conn.CallTool(ctx, "echo", map[string]any{"text": "hello"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text, "| token exchanges at the identity provider:", idp.Stats().Exchanges)
	// Output: hello | token exchanges at the identity provider: 1
}
