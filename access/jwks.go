package access

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/anymcp/anymcp/internal/origin"
)

// Bounds on what an issuer sends.
const (
	// MaxKeySetBytes is the largest JWKS (or issuer metadata) document
	// read; a larger one is an error, not a truncated read.
	MaxKeySetBytes = 1 << 20
	maxKeys        = 64
	minRSABits     = 2048
	maxRSABits     = 8192
)

// publicKey is one verification key of the issuer's JWKS.
type publicKey struct {
	kid string
	alg string // the JWK's alg, "" when it names none
	key crypto.PublicKey
}

// fits reports whether k may verify a signature of alg.
func (k publicKey) fits(alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch pk := k.key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return pk.Curve == elliptic.P256()
		case "ES384":
			return pk.Curve == elliptic.P384()
		case "ES512":
			return pk.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA" || alg == "Ed25519"
	}
	return false
}

// errUnknownKey: no key of the issuer's set fits the token's kid and alg,
// even after the set was fetched again (or was fetched too recently).
var errUnknownKey = errors.New("no key of the issuer's key set fits the token")

// keySet is the issuer's JWKS, fetched lazily, kept for a TTL, and fetched
// again on an unknown kid at most once per minRefetch. Concurrent callers
// share one fetch.
type keySet struct {
	hc         *http.Client
	issuer     string
	jwksURL    string // named by the user, or "" until discovered
	ttl        time.Duration
	minRefetch time.Duration
	timeout    time.Duration
	log        *slog.Logger
	now        func() time.Time

	mu       sync.Mutex
	keys     []publicKey
	fetched  time.Time     // last successful fetch
	tried    time.Time     // last attempt, successful or not
	lastErr  error         // the last attempt's error
	inflight chan struct{} // closed when the running fetch ends

	testHookWait func() // called before waiting for another's fetch
}

// lookup returns the keys that may verify a token signed with alg under
// kid ("" when the token names none).
func (s *keySet) lookup(ctx context.Context, kid, alg string) ([]publicKey, error) {
	fetched := false // by this call: it never fetches twice
	for {
		s.mu.Lock()
		now := s.now()
		fresh := !s.fetched.IsZero() && now.Sub(s.fetched) < s.ttl
		recent := fetched || !s.tried.IsZero() && now.Sub(s.tried) < s.minRefetch
		found := s.match(kid, alg)
		if len(found) > 0 && (fresh || recent) {
			s.mu.Unlock()
			return found, nil
		}
		if recent { // fetched (or tried) too lately to fetch again
			loaded, err := s.keys != nil, s.lastErr
			s.mu.Unlock()
			if !loaded {
				return nil, err
			}
			return nil, errUnknownKey
		}
		if wait := s.inflight; wait != nil {
			s.mu.Unlock()
			if s.testHookWait != nil {
				s.testHookWait()
			}
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		s.inflight = done
		s.mu.Unlock()

		keys, jwksURL, err := s.fetch(ctx)
		fetched = true

		s.mu.Lock()
		s.tried = s.now()
		s.lastErr = err
		if err == nil {
			s.keys, s.fetched, s.jwksURL = keys, s.tried, jwksURL
		} else if s.log != nil {
			s.log.WarnContext(ctx, "the issuer's key set could not be fetched", "issuer", s.issuer, "error", err.Error())
		}
		s.inflight = nil
		close(done)
		s.mu.Unlock()
	}
}

func (s *keySet) match(kid, alg string) []publicKey {
	var out []publicKey
	for _, k := range s.keys {
		if (kid == "" || k.kid == kid) && k.fits(alg) {
			out = append(out, k)
		}
	}
	return out
}

// fetch discovers the JWKS URL when needed and fetches the key set. The
// fetch serves every waiting request, so one client that goes away does
// not fail it: it runs without the request's cancellation, bounded by
// the timeout.
func (s *keySet) fetch(ctx context.Context) ([]publicKey, string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	s.mu.Lock()
	jwksURL := s.jwksURL
	s.mu.Unlock()
	if jwksURL == "" {
		u, err := discoverJWKS(ctx, s.hc, s.issuer)
		if err != nil {
			return nil, "", err
		}
		jwksURL = u
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := getJSON(ctx, s.hc, jwksURL, &doc); err != nil {
		return nil, "", fmt.Errorf("the key set %s: %w", origin.RedactString(jwksURL), err)
	}
	if len(doc.Keys) > maxKeys {
		return nil, "", fmt.Errorf("the key set %s holds %d keys: at most %d are read", origin.RedactString(jwksURL), len(doc.Keys), maxKeys)
	}
	keys := make([]publicKey, 0, len(doc.Keys))
	for _, raw := range doc.Keys {
		if k, ok := parseJWK(raw); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, "", fmt.Errorf("the key set %s holds no signing key this server can use (RSA of 2048 to 8192 bits, ECDSA P-256/384/521, Ed25519)", origin.RedactString(jwksURL))
	}
	return keys, jwksURL, nil
}

// jwk is the members of a JSON Web Key (RFC 7517, RFC 7518 section 6,
// RFC 8037) that a verification key needs.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWK returns the verification key of raw, or false for a key that
// is not one: an encryption key, an unknown type or curve, a malformed or
// weak key. Such keys are skipped, not errors: a key set may hold keys
// for others.
func parseJWK(raw json.RawMessage) (publicKey, bool) {
	var j jwk
	if json.Unmarshal(raw, &j) != nil || (j.Use != "" && j.Use != "sig") {
		return publicKey{}, false
	}
	b64 := base64.RawURLEncoding.Strict()
	pk := publicKey{kid: j.Kid, alg: j.Alg}
	switch j.Kty {
	case "RSA":
		n, err1 := b64.DecodeString(j.N)
		e, err2 := b64.DecodeString(j.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return publicKey{}, false
		}
		N := new(big.Int).SetBytes(n)
		E := new(big.Int).SetBytes(e)
		if N.BitLen() < minRSABits || N.BitLen() > maxRSABits || E.Int64() < 3 || E.Bit(0) == 0 || E.Int64() > 1<<31-1 {
			return publicKey{}, false
		}
		pk.key = &rsa.PublicKey{N: N, E: int(E.Int64())}
	case "EC":
		var curve elliptic.Curve
		switch j.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return publicKey{}, false
		}
		size := (curve.Params().BitSize + 7) / 8
		x, err1 := b64.DecodeString(j.X)
		y, err2 := b64.DecodeString(j.Y)
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return publicKey{}, false
		}
		point := append(append([]byte{4}, x...), y...)
		k, err := ecdsa.ParseUncompressedPublicKey(curve, point) // checks the point is on the curve
		if err != nil {
			return publicKey{}, false
		}
		pk.key = k
	case "OKP":
		x, err := b64.DecodeString(j.X)
		if j.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return publicKey{}, false
		}
		pk.key = ed25519.PublicKey(x)
	default:
		return publicKey{}, false
	}
	return pk, true
}

// discoverJWKS reads the issuer's metadata (RFC 8414, then OpenID Connect
// Discovery, in the order the MCP authorization specification gives) and
// returns its jwks_uri. The metadata's issuer must be the issuer exactly
// (RFC 8414 section 3.3), and its jwks_uri on the issuer's origin:
// anything else is an error that asks for JWKSURL, so that no request
// goes to an origin the user did not name.
func discoverJWKS(ctx context.Context, hc *http.Client, issuer string) (string, error) {
	iu, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	var tried []string
	for _, loc := range metadataURLs(iu) {
		var m struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := getJSON(ctx, hc, loc, &m); err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("the issuer's metadata: %w", ctx.Err())
			}
			tried = append(tried, origin.RedactString(loc)+": "+err.Error())
			continue
		}
		if m.Issuer != issuer {
			return "", fmt.Errorf("the issuer's metadata at %s names another issuer: RFC 8414 requires it to be %s exactly", origin.RedactString(loc), issuer)
		}
		if m.JWKSURI == "" {
			return "", fmt.Errorf("the issuer's metadata at %s has no jwks_uri: set JWKSURL", origin.RedactString(loc))
		}
		ju, err := url.Parse(m.JWKSURI)
		if err != nil || ju.User != nil || !origin.Same(ju, iu) {
			return "", fmt.Errorf("the issuer's jwks_uri %s is not on the issuer's origin %s: keys are fetched only from an origin you named; if you trust it, set JWKSURL to it", origin.RedactString(m.JWKSURI), origin.Of(iu))
		}
		return ju.String(), nil
	}
	return "", fmt.Errorf("no metadata found for the issuer %s (RFC 8414, OpenID Connect Discovery): set JWKSURL (tried %s)", issuer, strings.Join(tried, "; "))
}

// metadataURLs lists the issuer's metadata URLs: with a path, RFC 8414
// path insertion, OpenID Connect path insertion, then OpenID Connect
// path appending; without one, the two well-known URLs at the root.
func metadataURLs(iu *url.URL) []string {
	base := iu.Scheme + "://" + iu.Host
	p := strings.TrimSuffix(iu.EscapedPath(), "/")
	if p == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}
	}
	return []string{
		base + "/.well-known/oauth-authorization-server" + p,
		base + "/.well-known/openid-configuration" + p,
		base + p + "/.well-known/openid-configuration",
	}
}

// getJSON GETs u and decodes its JSON body, read up to MaxKeySetBytes: a
// larger body is an error.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return origin.RedactError(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return origin.RedactError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err == nil && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return fmt.Errorf("the answer is %s, not JSON", mt)
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxKeySetBytes+1))
	if err != nil {
		return origin.RedactError(err)
	}
	if len(body) > MaxKeySetBytes {
		return fmt.Errorf("the answer is over %d bytes", MaxKeySetBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the answer is not the JSON expected: %w", err)
	}
	return nil
}
