package oauthserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DPoP (RFC 9449) for the AuthServer and the ProtectedServer: a proof is a
// compact JWS signed with the client's key, carried in the DPoP header of
// each request. Only ES256 proofs are verified.

// dpopAlg is the only proof algorithm the test servers verify.
const dpopAlg = "ES256"

// dpopWindow is how far a proof's iat may be from now, either way.
const dpopWindow = 5 * time.Minute

// dpopSchemeName is the Authorization scheme of a DPoP-bound token.
const dpopSchemeName = "DPoP"

// errDPoPNonce is the error of a proof that is valid but for its nonce:
// the server answers use_dpop_nonce, not invalid_dpop_proof.
var errDPoPNonce = errors.New("the proof does not carry the server's nonce")

// dpopProof is what a verified proof says.
type dpopProof struct {
	jkt string    // the thumbprint of its key (RFC 7638)
	jti string    // its identifier
	iat time.Time // when it was made
}

// dpopHeader returns the request's only DPoP header, or an error when it
// has none (with ok false) or more than one.
func dpopHeader(r *http.Request) (proof string, ok bool, err error) {
	values := r.Header.Values("DPoP")
	switch len(values) {
	case 0:
		return "", false, nil
	case 1:
		return values[0], true, nil
	}
	return "", true, fmt.Errorf("%d DPoP headers, want one", len(values))
}

// verifyProof checks a DPoP proof (RFC 9449 section 4.3) for a request of
// method to htu: its typ, alg and public jwk, its ES256 signature with
// that key, its jti, htm, htu (compared without query and fragment) and
// iat (within dpopWindow of now), and its ath: the hash of accessToken,
// or absent when accessToken is "" (at the token endpoint). When nonce is
// not "", a proof that is valid but does not carry it gets errDPoPNonce,
// with the proof. Replays are the caller's to refuse.
func verifyProof(proof, method, htu, accessToken, nonce string, now time.Time) (dpopProof, error) {
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		return dpopProof{}, errors.New("the proof is not a compact JWS")
	}
	var header, claims map[string]any
	if err := decodeJWSPart(parts[0], &header); err != nil {
		return dpopProof{}, fmt.Errorf("the proof's header: %w", err)
	}
	if err := decodeJWSPart(parts[1], &claims); err != nil {
		return dpopProof{}, fmt.Errorf("the proof's claims: %w", err)
	}
	if typ, _ := header["typ"].(string); typ != "dpop+jwt" {
		return dpopProof{}, fmt.Errorf("typ %q, want dpop+jwt", typ)
	}
	if alg, _ := header["alg"].(string); alg != dpopAlg {
		return dpopProof{}, fmt.Errorf("alg %q, want %s", alg, dpopAlg)
	}
	jwk, _ := header["jwk"].(map[string]any)
	key, jkt, err := parseJWK(jwk)
	if err != nil {
		return dpopProof{}, fmt.Errorf("the proof's jwk: %w", err)
	}
	if err := verifyES256(key, parts[0]+"."+parts[1], parts[2]); err != nil {
		return dpopProof{}, err
	}
	p := dpopProof{jkt: jkt}
	if p.iat, err = checkProofClaims(claims, method, htu, accessToken, now); err != nil {
		return dpopProof{}, err
	}
	p.jti, _ = claims["jti"].(string)
	if got, _ := claims["nonce"].(string); nonce != "" && got != nonce {
		return p, errDPoPNonce
	}
	return p, nil
}

// decodeJWSPart decodes a base64url JSON object of a JWS.
func decodeJWSPart(part string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// parseJWK returns the P-256 public key of a JWK (RFC 7518 section 6.2)
// and its thumbprint. A JWK with a private part (d) is refused.
func parseJWK(jwk map[string]any) (*ecdsa.PublicKey, string, error) {
	if jwk == nil {
		return nil, "", errors.New("missing")
	}
	if _, ok := jwk["d"]; ok {
		return nil, "", errors.New("it holds a private key")
	}
	if kty, _ := jwk["kty"].(string); kty != "EC" {
		return nil, "", fmt.Errorf("kty %q, want EC", kty)
	}
	if crv, _ := jwk["crv"].(string); crv != "P-256" {
		return nil, "", fmt.Errorf("crv %q, want P-256", crv)
	}
	enc := base64.RawURLEncoding.Strict()
	xs, _ := jwk["x"].(string)
	ys, _ := jwk["y"].(string)
	x, err1 := enc.DecodeString(xs)
	y, err2 := enc.DecodeString(ys)
	if err := errors.Join(err1, err2); err != nil {
		return nil, "", err
	}
	if len(x) != 32 || len(y) != 32 {
		return nil, "", errors.New("x and y must be 32 bytes each")
	}
	key, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, "", err
	}
	return key, jwkThumbprint(xs, ys), nil
}

// jwkThumbprint is the SHA-256 thumbprint (RFC 7638) of the P-256 key
// whose coordinates are x and y (base64url): the hash of the required
// members in lexicographic order, without white space.
func jwkThumbprint(x, y string) string {
	h := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// verifyES256 checks an ES256 signature (r and s, 32 bytes each) of input.
func verifyES256(key *ecdsa.PublicKey, input, signature string) error {
	sig, err := base64.RawURLEncoding.DecodeString(signature)
	if err != nil {
		return fmt.Errorf("the proof's signature: %w", err)
	}
	if len(sig) != 64 {
		return fmt.Errorf("the proof's signature is %d bytes, want 64", len(sig))
	}
	h := sha256.Sum256([]byte(input))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(key, h[:], r, s) {
		return errors.New("bad proof signature")
	}
	return nil
}

// checkProofClaims checks a proof's jti, htm, htu, iat and ath, and
// returns its iat.
func checkProofClaims(claims map[string]any, method, htu, accessToken string, now time.Time) (time.Time, error) {
	if jti, _ := claims["jti"].(string); jti == "" {
		return time.Time{}, errors.New("the proof has no jti")
	}
	if htm, _ := claims["htm"].(string); htm != method {
		return time.Time{}, fmt.Errorf("htm %q, want %s", htm, method)
	}
	got, _ := claims["htu"].(string)
	if !sameHTU(got, htu) {
		return time.Time{}, fmt.Errorf("htu %q, want %s", got, htu)
	}
	n, ok := claims["iat"].(float64)
	if !ok {
		return time.Time{}, errors.New("the proof has no numeric iat")
	}
	sec, frac := math.Modf(n)
	iat := time.Unix(int64(sec), int64(frac*1e9))
	if d := now.Sub(iat); d > dpopWindow || d < -dpopWindow {
		return time.Time{}, fmt.Errorf("iat %v is more than %v from now", iat.UTC().Format(time.RFC3339), dpopWindow)
	}
	ath, has := claims["ath"]
	switch {
	case accessToken == "" && has:
		return time.Time{}, errors.New("ath in a proof without an access token")
	case accessToken != "" && ath != s256(accessToken):
		return time.Time{}, errors.New("ath is not the access token's hash")
	}
	return iat, nil
}

// sameHTU says whether a proof's htu is want: equal without query and
// fragment, scheme and host compared in lower case, the path exactly.
func sameHTU(htu, want string) bool {
	a, ok1 := htuKey(htu)
	b, ok2 := htuKey(want)
	return ok1 && ok2 && a == b
}

// htuKey is scheme://host/path of an absolute URL, scheme and host in
// lower case.
func htuKey(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return "", false
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + u.EscapedPath(), true
}

// jtiCache remembers the jtis of accepted proofs while their iat keeps
// them acceptable: that refuses replays and bounds the memory. Its
// owner's mutex guards it.
type jtiCache map[string]time.Time

// add records a proof's jti, or returns false if it was seen before.
func (c jtiCache) add(p dpopProof, now time.Time) bool {
	for jti, until := range c {
		if now.After(until) {
			delete(c, jti)
		}
	}
	if _, seen := c[p.jti]; seen {
		return false
	}
	c[p.jti] = p.iat.Add(dpopWindow)
	return true
}
