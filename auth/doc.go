// Package auth is OAuth 2.1 authorization for MCP clients over HTTP: what a
// client needs to reach an MCP server that answers 401.
//
// An Authorizer holds the host's decisions (which client it is, how a person
// authorizes, where tokens are kept) and hands out, per MCP server, an
// http.RoundTripper that every HTTP request to that server goes through. It
// knows nothing of the MCP wire formats, so it serves Streamable HTTP of
// every revision and HTTP+SSE alike. Give it to a Conn with client.WithAuth:
//
//	lb, err := auth.ListenLoopback(ctx) // the redirect listener on 127.0.0.1
//	if err != nil { ... }
//	defer lb.Close()
//	a, err := auth.New(auth.Config{
//		RedirectURL: lb.RedirectURL(),
//		Authorize: func(ctx context.Context, authURL string) (string, error) {
//			fmt.Println("open", authURL) // the library never opens a browser
//			return lb.Wait(ctx)
//		},
//		Store: auth.NewFileStore("tokens.json"),
//	})
//	conn, err := client.Dial(ctx, client.URL("https://mcp.example.com/mcp"), client.WithAuth(a))
//
// The transport adds the token, only to the server's own origin; answers a
// 401 by refreshing, or by discovery (RFC 9728, RFC 8414, OpenID Connect),
// registration (pre-registered, Client ID Metadata Document, RFC 7591) and
// the code flow with PKCE S256, the resource indicator and RFC 9207 iss;
// refreshes once for all concurrent callers; and answers a 403
// insufficient_scope with a bounded step-up. Without a person:
// GrantClientCredentials, and GrantJWTBearer with an assertion
// (AssertionFromFile for workload identity, IDJAG for enterprise-managed
// authorization). DPoP-bound tokens (RFC 9449) are used when the server
// asks for them.
//
// Without Config.Authorize, a flow that needs a person fails at once with
// an *InteractionRequiredError. Tokens never reach the logs, and redirects
// to another origin are refused. golang.org/x/oauth2 does the PKCE pair,
// the code exchange, refreshes and client authentication.
//
// Each step, grant and error is described in docs/authorization.md in the
// repository; the promises about origins and credentials in
// docs/security.md.
package auth
