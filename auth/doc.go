// Package auth is OAuth 2.1 authorization for MCP clients over HTTP: what a
// client needs to reach an MCP server that answers 401.
//
// An Authorizer holds the host's decisions (which client it is, how a person
// authorizes, where tokens are kept) and hands out, per MCP server, an
// http.RoundTripper (Authorizer.Transport) that every HTTP request to that
// server goes through. The transport is the whole seam: it knows nothing of
// the MCP wire formats, so it serves Streamable HTTP of every revision and
// HTTP+SSE (its GET stream and its POSTs) alike. It
//
//   - adds the bearer token, only to requests for the server's own origin;
//   - answers a 401 by authorizing — refreshing the token when it can,
//     otherwise running discovery, registration and the authorization code
//     flow with PKCE, or the client_credentials or jwt-bearer grant — and
//     sends the request again (bodies are replayed through
//     Request.GetBody);
//   - refreshes a token shortly before it expires, once for all concurrent
//     callers;
//   - answers a 403 insufficient_scope by asking for the union of the
//     scopes it had and the scopes challenged, a bounded number of times.
//
// Discovery follows the specification of every revision: the
// WWW-Authenticate challenge (RFC 9110 syntax, ParseChallenges), Protected
// Resource Metadata (RFC 9728) from the challenge's URL, else the path-based
// then the root well-known URL, refused when its resource is not the
// server; authorization server metadata (RFC 8414, then OpenID Connect
// discovery, with the path-insertion variants, in the specification's
// order), refused when its issuer is not the one asked for; and for servers
// of 2025-03-26 without resource metadata, the metadata at the server's own
// origin, or the default /authorize, /token and /register endpoints.
//
// Registration is tried in the specification's order: credentials the host
// pre-registered (Config.ClientID), a Client ID Metadata Document URL
// (Config.ClientMetadataURL) when the authorization server supports them,
// then Dynamic Client Registration (RFC 7591). Registrations are kept per
// issuer, so that a server that moves to another authorization server gets
// a new registration, never the old server's credentials.
//
// The authorization code flow uses PKCE with S256 only (an authorization
// server that does not list S256 is refused), a state value checked on
// return, the resource indicator (RFC 8707) on the authorization and token
// requests, and validates the iss parameter of the response (RFC 9207). The
// library never opens a browser: Config.Authorize is called with the
// authorization URL and returns the URL the browser was redirected to (see
// Loopback for a redirect listener on 127.0.0.1). Without it, a flow that
// needs a person fails with an *InteractionRequiredError.
//
// Without a person: the client_credentials grant (GrantClientCredentials),
// and the JWT bearer grant (GrantJWTBearer, RFC 7523) with an assertion
// Config.Assertion gives for the authorization server and resource at hand:
// a workload identity token its platform issues (SEP-1933;
// AssertionFromFile reads a rotated token file), or, for
// enterprise-managed authorization (SEP-990), an Identity Assertion JWT
// Authorization Grant the enterprise's identity provider issues in exchange
// for the person's ID token (IDJAG). A refused assertion is not tried again
// nor another grant tried instead.
//
// DPoP (RFC 9449, SEP-1932): with a server that asks for DPoP-bound tokens,
// whose authorization server takes ES256 proofs, token requests carry a
// proof and the tokens are sent with the DPoP scheme and a fresh proof per
// request, so that a leaked token is useless without the key
// (Config.DPoPKey, or a key made per Authorizer; Config.NoDPoP to opt out).
// A server's use_dpop_nonce is answered once, with its nonce.
//
// Tokens go only to the MCP server and to the authorization server's own
// endpoints; redirects to another origin are refused; tokens are never
// logged (Token's String and LogValue hide them). golang.org/x/oauth2 does
// the PKCE pair, the code exchange, refreshes and client authentication.
package auth
