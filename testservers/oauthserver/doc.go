// Package oauthserver holds the OAuth side of the test servers: an
// authorization server, an MCP server that wants its tokens, and an
// identity provider, all in-process on 127.0.0.1, for tests of package
// auth, of the client and of `mcpcall` (`mcpcall demo` runs one too).
// They are real servers, not mocks, with knobs for how real ones differ.
//
//   - StartAuthServer: an OAuth 2.1 authorization server: RFC 8414 or
//     OpenID Connect metadata (Discovery), dynamic client registration,
//     PKCE, refresh tokens, client credentials, JWT bearer grants,
//     RFC 9207 iss (IssMode), DPoP-bound tokens (RFC 9449), and a
//     headless user: Approve follows an authorization URL to its code.
//   - StartProtected: the Streamable HTTP (/mcp) and HTTP+SSE (/sse,
//     /message) front-ends of package testservers behind a check of the
//     AuthServer's bearer or DPoP-bound tokens, with Protected Resource
//     Metadata (RFC 9728) where PRMMode says, and 401/403 challenges that
//     ask for more scopes.
//   - StartIdP: an enterprise identity provider that issues the
//     identity assertions an AuthServer accepts in a JWT bearer grant.
//
// A test starts an authorization server, a protected server behind it,
// and dials the protected server with a token source of package auth:
//
//	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{})
//	defer as.Close()
//	ps := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as})
//	defer ps.Close()
//
// Stats, DPoPStats, Hits and Refusals tell a test what the servers saw;
// Forget, Revoke and SetAuthServer change their minds mid-test.
//
// The MCP core the protected server serves is package testservers; this
// package imports it, never the other way round.
package oauthserver
