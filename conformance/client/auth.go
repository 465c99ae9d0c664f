package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
)

// clientMetadataURL is the Client ID Metadata Document URL the suite's
// authorization servers expect (auth/basic-cimd); they do not fetch it.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// redirectURL is where the suite's authorization servers send the
// "browser" back. Nothing listens there: headlessUser reads the redirect
// instead of following it.
const redirectURL = "http://127.0.0.1:8976/callback"

// scenarioContext is MCP_CONFORMANCE_CONTEXT: credentials some scenarios
// hand the client (pre-registration, client credentials, a workload's
// identity token, an enterprise identity provider and the person's ID
// token there).
type scenarioContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	Issuer           string `json:"issuer"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	// auth/wif-jwt-bearer: the workload's token (valid_jwt; the others
	// are for clients that test their own refusals).
	WorkloadJWT string `json:"valid_jwt"`
	// auth/enterprise-managed-authorization.
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
}

// authOption is the client's authorization for a scenario: a public client
// that registers itself (or uses the CIMD URL where the server supports
// it), the context's pre-registered credentials when it gives some, for
// auth/client-credentials-* the client_credentials grant, and the
// jwt-bearer grant when the context gives a workload's token or an
// identity provider's ID token (exchanged there for an ID-JAG). The person
// who authorizes is headlessUser.
func authOption(scenario, rawContext string) (client.Option, error) {
	cfg := auth.Config{
		ClientName:        "anymcp-conformance-client",
		ClientMetadataURL: clientMetadataURL,
		RedirectURL:       redirectURL,
		Authorize:         headlessUser,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if rawContext != "" {
		var sc scenarioContext
		if err := json.Unmarshal([]byte(rawContext), &sc); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		cfg.ClientID, cfg.ClientSecret, cfg.ClientIssuer = sc.ClientID, sc.ClientSecret, sc.Issuer
		if sc.PrivateKeyPEM != "" {
			key, err := parseKey(sc.PrivateKeyPEM)
			if err != nil {
				return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT private_key_pem: %w", err)
			}
			cfg.PrivateKey = key
		}
		switch {
		case sc.WorkloadJWT != "":
			cfg.Grant = auth.GrantJWTBearer
			cfg.Assertion = func(context.Context, auth.AssertionRequest) (string, error) { return sc.WorkloadJWT, nil }
		case sc.IdPIDToken != "":
			idp := &auth.IDJAG{
				TokenEndpoint: sc.IdPTokenEndpoint,
				ClientID:      sc.IdPClientID,
				IDToken:       func(context.Context) (string, error) { return sc.IdPIDToken, nil },
			}
			cfg.Grant, cfg.Assertion = auth.GrantJWTBearer, idp.Assertion
		}
	}
	if strings.HasPrefix(scenario, "auth/client-credentials") {
		cfg.Grant = auth.GrantClientCredentials
	}
	a, err := auth.New(cfg)
	if err != nil {
		return nil, err
	}
	return client.WithAuth(a), nil
}

// headlessUser plays the person at the authorization server: it opens the
// authorization URL, which the suite's servers answer at once with a
// redirect, and returns where it redirects to, without following it.
func headlessUser(ctx context.Context, authURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		return loc, nil
	}
	return "", fmt.Errorf("authorization endpoint answered %d, not a redirect", resp.StatusCode)
}

// parseKey reads a PKCS #8 PEM private key.
func parseKey(p string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, fmt.Errorf("no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T cannot sign", k)
	}
	return s, nil
}
