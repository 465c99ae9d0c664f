package oauthserver

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
)

// IdPOptions configure an IdP.
type IdPOptions struct {
	// ClientID and ClientSecret are the client's credentials at the
	// identity provider (HTTP Basic).
	ClientID, ClientSecret string
	// IDToken is the signed-in person's ID token: the only subject token
	// it exchanges.
	IDToken string
	// GrantClientID is the client, at the authorization servers, its
	// ID-JAGs are issued to (as the enterprise's policy maps the client).
	GrantClientID string
	// IssuedTokenType is the issued_token_type of its answers; the ID-JAG
	// type when empty.
	IssuedTokenType string
	// QuoteRequests refuses every exchange (400 invalid_grant) with the
	// whole request quoted back, as AuthServerOptions.QuoteRequests does.
	QuoteRequests bool
	// OnRequest, when set, is called first with every request.
	OnRequest func(*http.Request)
}

// IdPStats is what an IdP saw.
type IdPStats struct {
	Exchanges    int        // token exchange requests, refused ones included
	LastExchange url.Values // the form of the last one (secrets included: tests only)
}

// IdP is an enterprise identity provider for tests, on its own loopback
// origin: its token endpoint (/token) trades the person's ID token for an
// Identity Assertion JWT Authorization Grant (ID-JAG, RFC 8693 token
// exchange), for the audience and resource asked. Its ID-JAGs are opaque
// strings that Check recognises: an AuthServer takes IdP.Check as its
// Assertion.
type IdP struct {
	URL  string // the origin
	opts IdPOptions
	ts   *httptest.Server

	mu     sync.Mutex
	stats  IdPStats
	grants map[string]idjag
	serial int
}

// idjag is what an issued ID-JAG stands for.
type idjag struct{ clientID, audience, resource string }

// StartIdP starts an IdP on 127.0.0.1.
func StartIdP(opts IdPOptions) *IdP {
	p := &IdP{opts: opts, grants: map[string]idjag{}}
	p.ts = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.ts.URL
	return p
}

// TokenEndpoint is the URL of the token endpoint.
func (p *IdP) TokenEndpoint() string { return p.URL + "/token" }

// Close stops the server.
func (p *IdP) Close() { p.ts.Close() }

// Stats returns what the IdP saw.
func (p *IdP) Stats() IdPStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Check is an AuthServer's Assertion: the assertion is an ID-JAG this IdP
// issued for the AuthServer's issuer and the resource, to the client
// presenting it. Each is good once.
func (p *IdP) Check(assertion, clientID, issuer, resource string) error {
	p.mu.Lock()
	g, ok := p.grants[assertion]
	delete(p.grants, assertion)
	p.mu.Unlock()
	switch {
	case !ok:
		return errors.New("not an ID-JAG of this identity provider, or used")
	case g.audience != issuer:
		return fmt.Errorf("the ID-JAG is for %s, not this authorization server", g.audience)
	case g.resource != resource:
		return fmt.Errorf("the ID-JAG is for the resource %s, not %s", g.resource, resource)
	case g.clientID != clientID:
		return fmt.Errorf("the ID-JAG is for the client %s, not %s", g.clientID, clientID)
	}
	return nil
}

func (p *IdP) serve(w http.ResponseWriter, r *http.Request) {
	if p.opts.OnRequest != nil {
		p.opts.OnRequest(r)
	}
	if r.URL.Path != "/token" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	p.mu.Lock()
	p.stats.Exchanges++
	p.stats.LastExchange = f
	p.mu.Unlock()
	if p.opts.QuoteRequests {
		refuseQuoting(w, r)
		return
	}
	id, secret, _ := r.BasicAuth()
	id, _ = url.QueryUnescape(id)
	secret, _ = url.QueryUnescape(secret)
	if id != p.opts.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(p.opts.ClientSecret)) != 1 {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	var missing []string
	for k, want := range map[string]string{
		"grant_type":           "urn:ietf:params:oauth:grant-type:token-exchange",
		"subject_token_type":   "urn:ietf:params:oauth:token-type:id_token",
		"requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
	} {
		if f.Get(k) != want {
			missing = append(missing, k)
		}
	}
	for _, k := range []string{"audience", "resource"} {
		if f.Get(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		oauthError(w, http.StatusBadRequest, "invalid_request", "missing or wrong: "+strings.Join(missing, ", "))
		return
	}
	if p.opts.IDToken == "" || subtle.ConstantTimeCompare([]byte(f.Get("subject_token")), []byte(p.opts.IDToken)) != 1 {
		// Quoted, as a careless server might: the client must not show it.
		oauthError(w, http.StatusBadRequest, "invalid_grant", fmt.Sprintf("the subject token %s is not a valid ID token", f.Get("subject_token")))
		return
	}
	p.mu.Lock()
	p.serial++
	jag := fmt.Sprintf("idjag-%d-%s", p.serial, randomID())
	p.grants[jag] = idjag{clientID: p.opts.GrantClientID, audience: f.Get("audience"), resource: f.Get("resource")}
	p.mu.Unlock()
	typ := p.opts.IssuedTokenType
	if typ == "" {
		typ = "urn:ietf:params:oauth:token-type:id-jag"
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": jag, "issued_token_type": typ, "token_type": "N_A", "expires_in": 300})
}
