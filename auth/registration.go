package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/anymcp/anymcp/internal/origin"
)

// Token endpoint authentication methods (RFC 7591 section 2, RFC 7523).
const (
	authNone  = "none"
	authBasic = "client_secret_basic"
	authPost  = "client_secret_post"
	authJWT   = "private_key_jwt"
)

// How a client got its identity at an authorization server.
const (
	RegistrationPreRegistered    = "pre-registered"
	RegistrationMetadataDocument = "client-id-metadata-document"
	RegistrationDynamic          = "dynamic"
)

// ClientInfo is a client's identity at one authorization server.
type ClientInfo struct {
	Issuer       string   `json:"issuer"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	AuthMethod   string   `json:"token_endpoint_auth_method,omitempty"`
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	// SecretExpiresAt is when the secret expires; zero for never.
	SecretExpiresAt time.Time `json:"client_secret_expires_at,omitzero"`
	// Registration is how the identity was obtained: one of the
	// Registration constants.
	Registration string `json:"registration"`

	reused bool // a dynamic registration from the Store, not made just now
}

// String shows the client id, never the secret.
func (c *ClientInfo) String() string {
	return fmt.Sprintf("client %s at %s (%s, %s)", c.ClientID, c.Issuer, c.Registration, c.AuthMethod)
}

// usableFor reports whether a stored dynamic registration can serve a
// flow that redirects to redirect: the secret has not expired, and the
// redirect URI was registered (for a loopback IP literal, any port: RFC
// 8252 section 7.3).
func (c *ClientInfo) usableFor(redirect string, now time.Time) bool {
	if !c.SecretExpiresAt.IsZero() && !now.Before(c.SecretExpiresAt) {
		return false
	}
	if redirect == "" {
		return true
	}
	return slices.ContainsFunc(c.RedirectURIs, func(r string) bool { return sameRedirect(r, redirect) })
}

// sameRedirect compares redirect URIs exactly, except for the port of a
// loopback IP literal.
func sameRedirect(registered, used string) bool {
	if registered == used {
		return true
	}
	a, err1 := url.Parse(registered)
	b, err2 := url.Parse(used)
	if err1 != nil || err2 != nil {
		return false
	}
	if !isLoopbackIP(a.Hostname()) || a.Hostname() != b.Hostname() {
		return false
	}
	a.Host, b.Host = a.Hostname(), b.Hostname()
	return a.String() == b.String()
}

// registrationRequest is the client metadata sent to a registration
// endpoint (RFC 7591 section 2; application_type from OpenID Connect
// Dynamic Client Registration).
type registrationRequest struct {
	ClientName      string   `json:"client_name,omitempty"`
	RedirectURIs    []string `json:"redirect_uris"`
	GrantTypes      []string `json:"grant_types"`
	ResponseTypes   []string `json:"response_types"`
	AuthMethod      string   `json:"token_endpoint_auth_method"`
	ApplicationType string   `json:"application_type"`
	ClientURI       string   `json:"client_uri,omitempty"`
}

type registrationResponse struct {
	ClientID              string   `json:"client_id"`
	ClientSecret          string   `json:"client_secret"`
	ClientSecretExpiresAt int64    `json:"client_secret_expires_at"`
	AuthMethod            string   `json:"token_endpoint_auth_method"`
	RedirectURIs          []string `json:"redirect_uris"`
	Error                 string   `json:"error"`
	ErrorDescription      string   `json:"error_description"`
}

// register runs Dynamic Client Registration (RFC 7591) for a client that
// redirects to redirect.
func register(ctx context.Context, hc *http.Client, m *serverMetadata, cfg *Config, redirect string, now time.Time) (*ClientInfo, error) {
	method := authNone
	if methods := m.authMethods(); !slices.Contains(methods, authNone) {
		switch {
		case slices.Contains(methods, authBasic):
			method = authBasic
		case slices.Contains(methods, authPost):
			method = authPost
		}
	}
	reqBody := registrationRequest{
		ClientName:      cfg.clientName(),
		RedirectURIs:    []string{redirect},
		GrantTypes:      []string{"authorization_code", "refresh_token"},
		ResponseTypes:   []string{"code"},
		AuthMethod:      method,
		ApplicationType: cfg.applicationType(redirect),
		ClientURI:       cfg.ClientURI,
	}
	body, err := json.Marshal(reqBody)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("client registration: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client registration at %s: %w", origin.RedactString(m.RegistrationEndpoint), origin.RedactError(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata))
	if err != nil {
		return nil, fmt.Errorf("client registration at %s: %w", origin.RedactString(m.RegistrationEndpoint), err)
	}
	var r registrationResponse
	jsonErr := json.Unmarshal(raw, &r)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		ge := &GrantError{Step: "registration", Status: resp.StatusCode, Code: r.Error, Description: r.ErrorDescription}
		if jsonErr != nil || r.Error == "" {
			ge.Description = excerpt(raw)
		}
		return nil, ge
	}
	if jsonErr != nil || r.ClientID == "" {
		return nil, &GrantError{Step: "registration", Status: resp.StatusCode, Description: "the answer has no client_id: " + excerpt(raw)}
	}
	c := &ClientInfo{
		Issuer:       m.Issuer,
		ClientID:     r.ClientID,
		ClientSecret: r.ClientSecret,
		AuthMethod:   r.AuthMethod,
		RedirectURIs: r.RedirectURIs,
		Registration: RegistrationDynamic,
	}
	if c.AuthMethod == "" {
		c.AuthMethod = method
	}
	if len(c.RedirectURIs) == 0 {
		c.RedirectURIs = reqBody.RedirectURIs
	}
	if r.ClientSecretExpiresAt > 0 {
		c.SecretExpiresAt = time.Unix(r.ClientSecretExpiresAt, 0)
	}
	return c, nil
}

// client returns the client identity to use with the discovered
// authorization server, in the specification's order: pre-registered
// credentials, a Client ID Metadata Document URL when the server supports
// them, a registration made before, a new Dynamic Client Registration.
func (a *Authorizer) client(ctx context.Context, d *discovery) (*ClientInfo, error) {
	m := d.server
	if a.cfg.ClientID != "" {
		if a.cfg.ClientIssuer != "" && a.cfg.ClientIssuer != m.Issuer {
			return nil, &MetadataError{URL: d.shownURL, Reason: fmt.Sprintf("the server's authorization server is %s, but the pre-registered client is for %s: not sending its credentials", m.Issuer, a.cfg.ClientIssuer)}
		}
		return &ClientInfo{Issuer: m.Issuer, ClientID: a.cfg.ClientID, ClientSecret: a.cfg.ClientSecret, AuthMethod: a.preRegisteredMethod(m), Registration: RegistrationPreRegistered}, nil
	}
	if a.cfg.ClientMetadataURL != "" && m.ClientIDMetadataDocumentSupported {
		method := authNone
		if a.cfg.PrivateKey != nil {
			method = authJWT
		}
		return &ClientInfo{Issuer: m.Issuer, ClientID: a.cfg.ClientMetadataURL, AuthMethod: method, Registration: RegistrationMetadataDocument}, nil
	}
	if a.cfg.RedirectURL == "" {
		return nil, &ConfigError{"a RedirectURL is needed to register a client and to authorize"}
	}
	redirect := a.redirectFor(m)
	stored, err := a.store.Client(ctx, m.Issuer)
	if err != nil {
		return nil, err
	}
	if stored != nil && stored.Registration == RegistrationDynamic && stored.usableFor(redirect, time.Now()) {
		stored.reused = true
		return stored, nil
	}
	if m.RegistrationEndpoint == "" {
		return nil, &MetadataError{URL: m.URL, Reason: "the authorization server offers no dynamic client registration, and no client ID metadata document is usable: give a pre-registered client id"}
	}
	c, err := register(ctx, d.hc, m, &a.cfg, redirect, time.Now())
	if err != nil {
		return nil, err
	}
	a.log.InfoContext(ctx, "OAuth client registered", "issuer", m.Issuer, "client", c.ClientID, "method", c.AuthMethod)
	if err := a.store.SaveClient(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// clientFor returns the client that obtained a token, to refresh it, or
// nil when this Authorizer no longer has it.
func (a *Authorizer) clientFor(ctx context.Context, d *discovery, clientID string) *ClientInfo {
	m := d.server
	switch {
	case clientID == "":
		return nil
	case a.cfg.ClientID == clientID:
		if a.cfg.ClientIssuer != "" && a.cfg.ClientIssuer != m.Issuer {
			return nil
		}
		return &ClientInfo{Issuer: m.Issuer, ClientID: clientID, ClientSecret: a.cfg.ClientSecret, AuthMethod: a.preRegisteredMethod(m), Registration: RegistrationPreRegistered}
	case a.cfg.ClientMetadataURL == clientID:
		method := authNone
		if a.cfg.PrivateKey != nil {
			method = authJWT
		}
		return &ClientInfo{Issuer: m.Issuer, ClientID: clientID, AuthMethod: method, Registration: RegistrationMetadataDocument}
	}
	c, err := a.store.Client(ctx, m.Issuer)
	if err != nil || c == nil || c.ClientID != clientID {
		return nil
	}
	if c.Registration != RegistrationDynamic && c.AuthMethod != authNone {
		return nil // its secret or key is the host's, not in the store
	}
	return c
}

// preRegisteredMethod: private_key_jwt with a key; none without a secret;
// else client_secret_basic unless the server takes only client_secret_post.
func (a *Authorizer) preRegisteredMethod(m *serverMetadata) string {
	switch {
	case a.cfg.PrivateKey != nil:
		return authJWT
	case a.cfg.ClientSecret == "":
		return authNone
	}
	methods := m.authMethods()
	if !slices.Contains(methods, authBasic) && slices.Contains(methods, authPost) {
		return authPost
	}
	return authBasic
}
