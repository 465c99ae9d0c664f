package oauthserver

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// grantTypeJWTBearer is the grant_type of the JWT bearer grant (RFC 7523).
const grantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// token is the token endpoint: the authorization_code, refresh_token,
// client_credentials and jwt-bearer grants, each client authenticated as it
// registered, each token bound to the key of the request's DPoP proof when
// the server does DPoP and the request has one.
func (a *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	grant := f.Get("grant_type")
	a.mu.Lock()
	a.stats.Tokens[grant]++
	a.stats.LastToken = f
	a.mu.Unlock()
	c, how, err := a.authenticate(r)
	a.mu.Lock()
	a.stats.LastTokenAuth = how
	a.mu.Unlock()
	if err != nil {
		oauthError(w, http.StatusUnauthorized, "invalid_client", err.Error())
		return
	}
	jkt, ok := a.tokenProof(w, r)
	if !ok {
		return
	}
	if slices.Contains(a.opts.QuoteRequests, grant) {
		refuseQuoting(w, r)
		return
	}
	switch grant {
	case "authorization_code":
		a.mu.Lock()
		code := a.codes[f.Get("code")]
		ok := code != nil && !code.used && code.clientID == c.ID
		if ok {
			code.used = true
		}
		a.mu.Unlock()
		switch {
		case !ok:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or foreign code")
		case f.Get("redirect_uri") != code.redirect:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
		case s256(f.Get("code_verifier")) != code.challenge:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		case f.Get("resource") != code.resource:
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request's")
		default:
			a.issue(w, grant, c.ID, code.resource, code.scopes, jkt, true)
		}
	case "refresh_token":
		a.mu.Lock()
		g := a.refresh[f.Get("refresh_token")]
		ok := g != nil && g.clientID == c.ID
		// A public client's DPoP-bound refresh token needs a proof with
		// the same key (RFC 9449 section 5); a confidential client's is
		// bound by the client's authentication instead.
		otherKey := ok && c.Method == "none" && g.jkt != "" && g.jkt != jkt
		if ok && !otherKey && !a.opts.NoRotation {
			delete(a.refresh, f.Get("refresh_token"))
		}
		a.mu.Unlock()
		switch {
		case !ok:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or foreign refresh token")
		case otherKey:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is bound to a DPoP key the request's proof is not of")
		case f.Get("resource") != "" && f.Get("resource") != g.resource:
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the original grant's")
		default:
			a.issue(w, grant, c.ID, g.resource, g.scopes, jkt, !a.opts.NoRotation)
		}
	case "client_credentials":
		if !a.opts.ClientCredentials {
			oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "client_credentials is not supported")
			return
		}
		if c.Method == "none" {
			oauthError(w, http.StatusUnauthorized, "invalid_client", "a public client cannot use client_credentials")
			return
		}
		a.issue(w, grant, c.ID, f.Get("resource"), a.grantable(f.Get("scope")), jkt, false)
	case grantTypeJWTBearer:
		if a.opts.Assertion == nil {
			oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "the jwt-bearer grant is not supported")
			return
		}
		if err := a.opts.Assertion(f.Get("assertion"), c.ID, a.Issuer, f.Get("resource")); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_grant", err.Error())
			return
		}
		a.issue(w, grant, c.ID, f.Get("resource"), a.grantable(f.Get("scope")), jkt, false)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", grant)
	}
}

// grantable returns the requested scopes less the withheld ones.
func (a *AuthServer) grantable(scope string) []string {
	return slices.DeleteFunc(strings.Fields(scope), func(s string) bool { return slices.Contains(a.opts.WithholdScopes, s) })
}

// issue answers a token request of the grant type grant with a new access
// token, bound to the key whose thumbprint is jkt unless it is "" (and a
// refresh token unless NoRefresh or !withRefresh, bound to it too).
func (a *AuthServer) issue(w http.ResponseWriter, grant, clientID, resource string, scopes []string, jkt string, withRefresh bool) {
	var atSuffix, rtSuffix string
	if a.opts.TokenSuffixes != nil {
		atSuffix, rtSuffix = a.opts.TokenSuffixes(grant)
	}
	at := a.newSecret("at") + atSuffix
	a.mu.Lock()
	ttl := a.ttl
	a.access[at] = &TokenInfo{ClientID: clientID, Scopes: scopes, Resource: resource, Expiry: time.Now().Add(ttl), JKT: jkt}
	a.mu.Unlock()
	tokenType := "Bearer"
	if jkt != "" {
		tokenType = dpopSchemeName
	}
	resp := map[string]any{"access_token": at, "token_type": tokenType, "expires_in": int(ttl.Seconds())}
	if len(scopes) > 0 {
		resp["scope"] = strings.Join(scopes, " ")
	}
	if withRefresh && !a.opts.NoRefresh {
		rt := a.newSecret("rt") + rtSuffix
		a.mu.Lock()
		a.refresh[rt] = &refreshGrant{clientID: clientID, resource: resource, scopes: scopes, jkt: jkt}
		a.mu.Unlock()
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
}

// tokenProof checks the DPoP proof of a token request, when the server
// does DPoP, and returns the thumbprint of its key ("" without a proof). A
// request with a bad proof, or without the server's nonce, is answered
// here: ok is false.
func (a *AuthServer) tokenProof(w http.ResponseWriter, r *http.Request) (jkt string, ok bool) {
	if !a.opts.DPoP {
		return "", true
	}
	proof, has, err := dpopHeader(r)
	if !has {
		return "", true
	}
	now := time.Now()
	var p dpopProof
	if err == nil {
		p, err = verifyProof(proof, r.Method, a.URL+a.endpoint("token"), "", a.opts.DPoPNonce, now)
	}
	a.mu.Lock()
	switch {
	case errors.Is(err, errDPoPNonce):
		a.stats.DPoPNonceChallenges++
	case err == nil && !a.proofs.add(p, now):
		err = errors.New("the proof's jti was used before")
	case err == nil:
		a.stats.DPoPProofs++
	}
	a.mu.Unlock()
	switch {
	case errors.Is(err, errDPoPNonce):
		w.Header().Set("DPoP-Nonce", a.opts.DPoPNonce)
		oauthError(w, http.StatusBadRequest, "use_dpop_nonce", "the DPoP proof must carry the server's nonce")
		return "", false
	case err != nil:
		oauthError(w, http.StatusBadRequest, "invalid_dpop_proof", err.Error())
		return "", false
	}
	return p.jkt, true
}

// authenticate checks a token request's client authentication against the
// client's registered method, and says which it was.
func (a *AuthServer) authenticate(r *http.Request) (*RegisteredClient, string, error) {
	f := r.PostForm
	id, secret, basic := r.BasicAuth()
	how := "none"
	switch {
	case basic:
		how = "basic"
		if u, err := url.QueryUnescape(id); err == nil {
			id = u
		}
		if s, err := url.QueryUnescape(secret); err == nil {
			secret = s
		}
	case f.Get("client_assertion") != "":
		how = "jwt"
		id = f.Get("client_id")
	case f.Get("client_secret") != "":
		how, id, secret = "post", f.Get("client_id"), f.Get("client_secret")
	default:
		id = f.Get("client_id")
	}
	a.mu.Lock()
	c := a.lookupClient(id)
	a.mu.Unlock()
	if how == "jwt" {
		if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
			return nil, how, errors.New("client_assertion_type is not jwt-bearer")
		}
		sub, err := a.verifyAssertion(f.Get("client_assertion"))
		if err != nil {
			return nil, how, err
		}
		if id == "" {
			id = sub
		}
		a.mu.Lock()
		c = a.lookupClient(id)
		a.mu.Unlock()
		if c == nil || c.ID != sub {
			return nil, how, errors.New("the assertion's subject is not the client")
		}
	}
	if c == nil {
		return nil, how, fmt.Errorf("unknown client %q", id)
	}
	want := map[string]string{"none": "none", "client_secret_basic": "basic", "client_secret_post": "post", "private_key_jwt": "jwt"}[c.Method]
	if how != want {
		return nil, how, fmt.Errorf("client %s must authenticate with %s", c.ID, c.Method)
	}
	if (how == "basic" || how == "post") && subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) != 1 {
		return nil, how, errors.New("wrong client secret")
	}
	return c, how, nil
}

// verifyAssertion checks a private_key_jwt assertion (RFC 7523): the
// signature with the client's key, iss = sub = a client, aud = the issuer,
// not expired, jti not seen before. It returns the subject.
func (a *AuthServer) verifyAssertion(jwt string) (string, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "", errors.New("client_assertion is not a JWS")
	}
	enc := base64.RawURLEncoding
	var header struct{ Alg string }
	var claims struct {
		Iss, Sub, Jti string
		Aud           any
		Exp           int64
	}
	hb, err1 := enc.DecodeString(parts[0])
	cb, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", fmt.Errorf("client_assertion: %w", err)
	}
	if err := errors.Join(json.Unmarshal(hb, &header), json.Unmarshal(cb, &claims)); err != nil {
		return "", fmt.Errorf("client_assertion: %w", err)
	}
	a.mu.Lock()
	c := a.clients[claims.Sub]
	seen := a.jtis[claims.Jti]
	a.jtis[claims.Jti] = true
	a.mu.Unlock()
	switch {
	case c == nil || c.PublicKey == nil:
		return "", fmt.Errorf("client_assertion: no key for %q", claims.Sub)
	case claims.Iss != claims.Sub:
		return "", errors.New("client_assertion: iss is not sub")
	case claims.Aud != a.Issuer:
		return "", fmt.Errorf("client_assertion: aud %v is not %s", claims.Aud, a.Issuer)
	case time.Now().Unix() >= claims.Exp:
		return "", errors.New("client_assertion: expired")
	case claims.Jti == "" || seen:
		return "", errors.New("client_assertion: jti missing or replayed")
	}
	size := (c.PublicKey.Curve.Params().BitSize + 7) / 8
	if len(sig) != 2*size || header.Alg[:2] != "ES" {
		return "", errors.New("client_assertion: not an ECDSA signature of the key's size")
	}
	h := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if header.Alg != "ES256" {
		return "", fmt.Errorf("client_assertion: alg %s not verified by this test server", header.Alg)
	}
	r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
	if !ecdsa.Verify(c.PublicKey, h[:], r, s) {
		return "", errors.New("client_assertion: bad signature")
	}
	return claims.Sub, nil
}

// register is the Dynamic Client Registration endpoint (RFC 7591).
func (a *AuthServer) register(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", err.Error())
		return
	}
	a.mu.Lock()
	a.stats.Registrations++
	a.stats.LastRegistration = body
	a.mu.Unlock()
	var redirects []string
	if list, ok := body["redirect_uris"].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				redirects = append(redirects, s)
			}
		}
	}
	if len(redirects) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required")
		return
	}
	method, _ := body["token_endpoint_auth_method"].(string)
	if method == "" {
		method = "client_secret_basic"
	}
	if !slices.Contains(a.authMethods(), method) {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "token_endpoint_auth_method "+method+" is not supported")
		return
	}
	c := &RegisteredClient{ID: a.newSecret("client"), Method: method, RedirectURIs: redirects}
	if method != "none" {
		c.Secret = a.newSecret("secret")
	}
	a.mu.Lock()
	a.clients[c.ID] = c
	a.mu.Unlock()
	resp := map[string]any{"client_id": c.ID, "token_endpoint_auth_method": method, "redirect_uris": redirects, "client_id_issued_at": time.Now().Unix()}
	if c.Secret != "" {
		resp["client_secret"] = c.Secret
		resp["client_secret_expires_at"] = 0
	}
	writeJSON(w, http.StatusCreated, resp)
}

// randomID returns 16 random bytes, hex encoded.
func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func s256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
