package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/anymcp/anymcp/internal/origin"
)

// DPoP (RFC 9449, the MCP extension of SEP-1932): tokens bound to a key of
// the client's, presented with a fresh signed proof on every request, so
// that a token that leaks is of no use without the key.
//
// The client asks for DPoP-bound tokens when the MCP server asks for them (a
// DPoP challenge, or dpop_bound_access_tokens_required in its resource
// metadata) and its authorization server takes ES256 proofs
// (dpop_signing_alg_values_supported). Every token request then carries a
// proof; a token answered with token_type DPoP is sent with the DPoP scheme
// and a proof naming the request's method and URL and the token's hash.
// A server's nonce (use_dpop_nonce, RFC 9449 sections 8 and 9) is taken and
// the request sent again with it, once.

const (
	dpopAlg             = "ES256"
	headerDPoP          = "DPoP"
	headerDPoPNonce     = "DPoP-Nonce"
	errUseDPoPNonce     = "use_dpop_nonce"
	tokenTypeDPoP       = "DPoP"
	maxDPoPNonceLen     = 1 << 10 // a longer nonce is not kept
	maxDPoPNonceOrigins = 64      // origins whose nonce is kept
)

// dpopKey is the key an Authorizer binds its DPoP tokens to, with the
// public parts every proof carries.
type dpopKey struct {
	key *ecdsa.PrivateKey
	jwk map[string]string // the public key as a JWK
	jkt string            // its SHA-256 thumbprint (RFC 7638)

	mu     sync.Mutex
	nonces map[string]string // the last nonce each origin gave, by origin
}

// newDPoPKey makes the DPoP key of an Authorizer: key, or a new P-256 key.
func newDPoPKey(key *ecdsa.PrivateKey) (*dpopKey, error) {
	if key == nil {
		var err error
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, err
		}
	}
	if key.Curve != elliptic.P256() {
		return nil, errors.New("DPoPKey must be a P-256 key (ES256)")
	}
	pub, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return nil, err
	}
	enc := base64.RawURLEncoding
	x, y := enc.EncodeToString(pub[1:33]), enc.EncodeToString(pub[33:])
	// RFC 7638: the required members, in lexicographic order, no white space.
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	return &dpopKey{
		key:    key,
		jwk:    map[string]string{"kty": "EC", "crv": "P-256", "x": x, "y": y},
		jkt:    enc.EncodeToString(sum[:]),
		nonces: map[string]string{},
	}, nil
}

// proof returns a DPoP proof for a request of method to u, for the access
// token when there is one (its hash, ath), with the nonce u's origin gave
// last, if any.
func (k *dpopKey) proof(method string, u *url.URL, accessToken string, now time.Time) (string, error) {
	jti, err := randomString(16)
	if err != nil {
		return "", err
	}
	htu := url.URL{Scheme: strings.ToLower(u.Scheme), Host: origin.LowerASCII(u.Host), Path: u.Path, RawPath: u.RawPath}
	claims := map[string]any{"jti": jti, "htm": method, "htu": htu.String(), "iat": now.Unix()}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if n := k.nonce(u); n != "" {
		claims["nonce"] = n
	}
	return signJWT(k.key, dpopAlg, map[string]any{"typ": "dpop+jwt", "alg": dpopAlg, "jwk": k.jwk}, claims)
}

func originKey(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + origin.LowerASCII(u.Host)
}

func (k *dpopKey) nonce(u *url.URL) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nonces[originKey(u)]
}

// noteNonce keeps the nonce resp gives for its request's origin, if any,
// and reports whether it gave one. A nonce longer than 1 KiB is not kept,
// and at most 64 origins' are (a full table forgets one).
func (k *dpopKey) noteNonce(resp *http.Response) bool {
	n := strings.TrimSpace(resp.Header.Get(headerDPoPNonce))
	if n == "" || len(n) > maxDPoPNonceLen || resp.Request == nil {
		return false
	}
	o := originKey(resp.Request.URL)
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.nonces[o]; !ok && len(k.nonces) >= maxDPoPNonceOrigins {
		for old := range k.nonces {
			delete(k.nonces, old)
			break
		}
	}
	k.nonces[o] = n
	return true
}

// asksNonce reports whether a resource server's answer asks for a DPoP
// nonce: a DPoP challenge among its challenges, whatever their order, with
// error use_dpop_nonce.
func asksNonce(h http.Header) bool {
	cs, _ := ParseChallenges(h.Values("WWW-Authenticate"))
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, tokenTypeDPoP) && c.Param(paramError) == errUseDPoPNonce {
			return true
		}
	}
	return false
}

// dpopTransport adds a DPoP proof to every request to an authorization
// server (the token requests), and keeps the nonce its answers give. A
// request refused for want of the nonce is made again by withNonce, built
// anew: replaying its bytes would resend a client assertion (and an
// assertion grant) that is good once.
type dpopTransport struct {
	key  *dpopKey
	base http.RoundTripper
}

func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p, err := t.key.proof(req.Method, req.URL, "", time.Now())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("signing the DPoP proof of a token request: %w", err)
	}
	out := req.Clone(req.Context())
	out.Header.Set(headerDPoP, p)
	resp, err := t.base.RoundTrip(out)
	if err == nil {
		t.key.noteNonce(resp)
	}
	return resp, err
}

// withNonce runs a token request, and once more when the authorization
// server answered use_dpop_nonce (RFC 9449 section 8), its nonce now kept
// for the next proof. do builds the request anew each time.
func (a *Authorizer) withNonce(d *discovery, do func() (*oauth2.Token, error)) (*oauth2.Token, error) {
	ot, err := do()
	var re *oauth2.RetrieveError
	if d.dpop && errors.As(err, &re) && re.ErrorCode == errUseDPoPNonce {
		return do()
	}
	return ot, err
}

// dpopFor reports whether d's tokens are to be DPoP-bound: the server asks
// for it and its authorization server takes ES256 proofs.
func (a *Authorizer) dpopFor(ctx context.Context, s *serverState, prm *resourceMetadata, m *serverMetadata) bool {
	return slices.Contains(m.DPoPSigningAlgValuesSupported, dpopAlg) &&
		(s.wantsDPoP.Load() || (prm != nil && prm.DPoPBoundAccessTokensRequired)) && a.key(ctx) != nil
}

// usable reports whether this Authorizer can send t: a DPoP-bound token
// only with the key it is bound to.
func (a *Authorizer) usable(ctx context.Context, t *Token) bool {
	if t.JKT == "" {
		return true
	}
	k := a.key(ctx)
	return k != nil && t.JKT == k.jkt
}

// jktFor is the thumbprint tokens of d are bound to, "" when d's are
// Bearer tokens.
func (a *Authorizer) jktFor(ctx context.Context, d *discovery) string {
	if d.dpop {
		return a.key(ctx).jkt
	}
	return ""
}
