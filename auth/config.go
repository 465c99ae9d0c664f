package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Grant is the OAuth grant a client uses to get tokens.
type Grant int

const (
	// GrantAuthorizationCode: a person authorizes the client in a browser
	// (the authorization code flow with PKCE). The default.
	GrantAuthorizationCode Grant = iota
	// GrantClientCredentials: the client acts on its own behalf, with
	// credentials the host holds (machine to machine, no person): a
	// pre-registered ClientID with a ClientSecret (client_secret_basic or
	// client_secret_post) or a PrivateKey (private_key_jwt, RFC 7523).
	GrantClientCredentials
	// GrantJWTBearer: the client presents an assertion the host obtains
	// (the JWT bearer authorization grant, RFC 7523 section 2.1), with a
	// pre-registered ClientID: a workload identity token its platform
	// issues (SEP-1933, see AssertionFromFile), or an identity assertion
	// the enterprise's identity provider issues for a person already
	// signed in (enterprise-managed authorization, SEP-990, see IDJAG).
	// No person, no browser. Config.Assertion gives the assertion.
	GrantJWTBearer
)

// grantTypeJWTBearer is the grant_type of GrantJWTBearer.
const grantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// String is the grant's name as Token.Grant keeps it.
func (g Grant) String() string {
	switch g {
	case GrantClientCredentials:
		return "client_credentials"
	case GrantJWTBearer:
		return "jwt-bearer"
	}
	return "authorization_code"
}

// grantNamed is the Grant whose String is name; the authorization code
// grant for any other name.
func grantNamed(name string) Grant {
	for _, g := range []Grant{GrantClientCredentials, GrantJWTBearer} {
		if g.String() == name {
			return g
		}
	}
	return GrantAuthorizationCode
}

// AssertionRequest is what an assertion is asked for: the authorization
// server that will receive it (its issuer, the assertion's audience), the
// MCP server's resource indicator, and the scopes the grant asks for.
type AssertionRequest struct {
	Issuer   string
	Resource string
	Scopes   []string
}

// AssertionFunc returns the assertion (a JWT) of a GrantJWTBearer token
// request. It is called for every grant, so that it can return a fresh
// one; it must honour ctx. Its error ends the grant, and reaches the
// caller.
type AssertionFunc func(ctx context.Context, r AssertionRequest) (string, error)

// AuthorizeFunc shows a person the authorization URL (a browser, a
// printed link) and returns the URL the authorization server redirected
// the browser to, query and all. It must honour ctx.
type AuthorizeFunc func(ctx context.Context, authURL string) (redirectURL string, err error)

// Config is what the host decides about authorization. The zero value is a
// public client that registers itself (Dynamic Client Registration), keeps
// its tokens in memory, and cannot ask a person: it works with servers that
// accept the client_credentials grant, and with tokens that are already in
// its Store.
type Config struct {
	// ClientID and ClientSecret are credentials registered beforehand
	// with the authorization server: the first choice when set. A client
	// without a secret is public (token_endpoint_auth_method none).
	ClientID     string
	ClientSecret string
	// ClientIssuer is the authorization server the pre-registered
	// credentials belong to. When set, a server that now names another
	// authorization server is refused with a *MetadataError rather than
	// sent the credentials; when empty they go to whichever server.
	ClientIssuer string
	// PrivateKey authenticates ClientID with a signed JWT
	// (private_key_jwt, RFC 7523) instead of a secret: an *ecdsa.PrivateKey
	// (ES256, ES384, ES512), *rsa.PrivateKey (RS256) or ed25519.PrivateKey
	// (EdDSA). KeyID, when set, is the JWT's kid.
	PrivateKey crypto.Signer
	KeyID      string

	// ClientMetadataURL is the https URL of this client's Client ID
	// Metadata Document, used as its client_id with authorization servers
	// that support them (client_id_metadata_document_supported). The
	// document must list RedirectURL among its redirect_uris.
	ClientMetadataURL string

	// ClientName, ClientURI and ApplicationType describe the client in a
	// Dynamic Client Registration. ClientName defaults to "anymcp";
	// ApplicationType to "native" for a loopback or custom-scheme
	// RedirectURL and "web" otherwise.
	ClientName      string
	ClientURI       string
	ApplicationType string

	// Grant is how tokens are obtained; GrantAuthorizationCode by default.
	Grant Grant
	// Assertion gives the assertion of GrantJWTBearer (needed by it, and
	// used by no other grant).
	Assertion AssertionFunc

	// RedirectURL is where the authorization server sends the browser
	// back to, e.g. Loopback.RedirectURL(). Needed by the authorization
	// code flow. A client registered dynamically with an authorization
	// server that does not send iss (RFC 9207) uses, when RedirectURL is
	// http on a loopback host, a redirect URI of that server's own: one
	// more path segment (Loopback takes it); a browser that comes back to
	// another is refused, as a possible mix-up.
	RedirectURL string
	// Authorize lets a person authorize the client. Nil means no person is
	// there: a flow that needs one fails with *InteractionRequiredError.
	Authorize AuthorizeFunc

	// Scopes are requested in every authorization, with the scopes a
	// server's challenge asks for. When neither gives any, the server's
	// scopes_supported are requested; when it lists none, no scope is.
	Scopes []string

	// Store keeps tokens and registrations. Nil means in memory, for the
	// life of the Authorizer.
	Store Store

	// HTTPClient sends the requests for metadata, registration and
	// tokens. Nil means the RoundTripper given to Transport (or
	// http.DefaultTransport). Redirects to another origin are refused
	// whatever its policy.
	HTTPClient *http.Client

	// Logger receives what the flows do (never a token). Nil discards.
	Logger *slog.Logger

	// DPoPKey is the key DPoP-bound tokens (RFC 9449) are bound to, a
	// P-256 key (ES256). Nil means a key made for this Authorizer: its
	// DPoP tokens are then of no use to another Authorizer, which gets its
	// own (a Store kept on disk should come with a kept key). DPoP is used
	// with a server that asks for it (a DPoP challenge, or
	// dpop_bound_access_tokens_required in its resource metadata) whose
	// authorization server takes ES256 proofs.
	DPoPKey *ecdsa.PrivateKey
	// NoDPoP never asks for DPoP-bound tokens: a server that takes no
	// others then refuses.
	NoDPoP bool

	// MaxStepUps bounds how many times one request may be authorized again
	// for a 403 insufficient_scope; 0 means 2, a negative value none.
	MaxStepUps int

	// ExchangeTimeout bounds the exchange of the authorization code for
	// tokens, once the browser came back: a token endpoint that does not
	// answer in time ends the flow with an *ExchangeTimeoutError (the
	// context's own deadline still applies). 0 means 30 seconds.
	ExchangeTimeout time.Duration
}

func (c *Config) clientName() string {
	if c.ClientName != "" {
		return c.ClientName
	}
	return "anymcp"
}

// applicationType is "native" for a redirect to this machine or to a
// custom scheme, "web" for one to an https site.
func (c *Config) applicationType(redirect string) string {
	if c.ApplicationType != "" {
		return c.ApplicationType
	}
	u, err := url.Parse(redirect)
	if err != nil || (u.Scheme == "https" && !isLoopback(u.Hostname())) {
		return "web"
	}
	return "native"
}

// defaultExchangeTimeout is ExchangeTimeout's default: a token endpoint
// answers in well under a second; this leaves room for a slow one.
const defaultExchangeTimeout = 30 * time.Second

func (c *Config) exchangeTimeout() time.Duration {
	if c.ExchangeTimeout > 0 {
		return c.ExchangeTimeout
	}
	return defaultExchangeTimeout
}

func (c *Config) maxStepUps() int {
	switch {
	case c.MaxStepUps == 0:
		return 2
	case c.MaxStepUps < 0:
		return 0
	}
	return c.MaxStepUps
}

// validate reports what cannot work.
func (c *Config) validate() error {
	if c.ClientSecret != "" && c.ClientID == "" {
		return &ConfigError{"a ClientSecret without a ClientID"}
	}
	if err := checkScopes(c.Scopes); err != nil {
		return &ConfigError{"Scopes: " + err.Error()}
	}
	if c.PrivateKey != nil && c.ClientID == "" {
		return &ConfigError{"a PrivateKey without a ClientID"}
	}
	if c.PrivateKey != nil {
		if _, err := signingAlg(c.PrivateKey); err != nil {
			return &ConfigError{err.Error()}
		}
	}
	if c.ClientMetadataURL != "" {
		u, err := url.Parse(c.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return &ConfigError{"ClientMetadataURL must be an https URL with a path, e.g. https://example.com/client.json"}
		}
	}
	if c.Grant == GrantClientCredentials && c.ClientID == "" {
		return &ConfigError{"the client_credentials grant needs a ClientID (and a ClientSecret or a PrivateKey)"}
	}
	if c.Grant == GrantJWTBearer && (c.ClientID == "" || c.Assertion == nil) {
		return &ConfigError{"the jwt-bearer grant needs a ClientID and an Assertion"}
	}
	if c.RedirectURL != "" {
		if u, err := url.Parse(c.RedirectURL); err != nil || u.Scheme == "" || u.Fragment != "" {
			return &ConfigError{"RedirectURL must be an absolute URL without fragment"}
		}
	}
	return nil
}
