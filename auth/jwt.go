package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// clientAssertionType is the client_assertion_type of private_key_jwt.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid.
const assertionLifetime = 5 * time.Minute

// signingAlg returns the JWS algorithm of key.
func signingAlg(key crypto.Signer) (string, error) {
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
		return "", fmt.Errorf("PrivateKey: ECDSA curve %s is not supported (P-256, P-384, P-521)", k.Curve.Params().Name)
	case *rsa.PublicKey:
		if k.Size() < 256 {
			return "", errors.New("PrivateKey: an RSA key needs at least 2048 bits")
		}
		return "RS256", nil
	case ed25519.PublicKey:
		return "EdDSA", nil
	}
	return "", fmt.Errorf("PrivateKey: a %T is not supported (ECDSA, RSA or Ed25519)", key.Public())
}

// clientAssertion returns a signed JWT that authenticates clientID to the
// authorization server audience (RFC 7523 section 3): iss and sub are the
// client, aud the server's issuer, with a short expiry and a unique jti.
func clientAssertion(key crypto.Signer, keyID, clientID, audience string, now time.Time) (string, error) {
	alg, err := signingAlg(key)
	if err != nil {
		return "", err
	}
	header := map[string]any{"alg": alg, "typ": "JWT"}
	if keyID != "" {
		header["kid"] = keyID
	}
	jti, err := randomString(16)
	if err != nil {
		return "", err
	}
	claims := map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
		"jti": jti,
	}
	jwt, err := signJWT(key, alg, header, claims)
	if err != nil {
		return "", fmt.Errorf("signing the client assertion: %w", err)
	}
	return jwt, nil
}

// signJWT returns the compact JWS of claims under header, signed with key
// by alg.
func signJWT(key crypto.Signer, alg string, header, claims map[string]any) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	sig, err := sign(key, alg, []byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// sign signs input as JWS alg requires (RFC 7518 section 3): ECDSA
// signatures are r||s of fixed size, not ASN.1.
func sign(key crypto.Signer, alg string, input []byte) ([]byte, error) {
	switch alg {
	case "EdDSA":
		return key.Sign(rand.Reader, input, crypto.Hash(0))
	case "RS256", "ES256":
		return signHashed(key, alg, crypto.SHA256, input)
	case "ES384":
		return signHashed(key, alg, crypto.SHA384, input)
	case "ES512":
		return signHashed(key, alg, crypto.SHA512, input)
	}
	return nil, fmt.Errorf("algorithm %s", alg)
}

func signHashed(key crypto.Signer, alg string, h crypto.Hash, input []byte) ([]byte, error) {
	hh := h.New()
	hh.Write(input)
	der, err := key.Sign(rand.Reader, hh.Sum(nil), h)
	if err != nil || alg[0] != 'E' {
		return der, err
	}
	size := (key.Public().(*ecdsa.PublicKey).Curve.Params().BitSize + 7) / 8
	return rawECDSA(der, size)
}

// rawECDSA converts an ASN.1 ECDSA signature to r||s, each size bytes.
func rawECDSA(der []byte, size int) ([]byte, error) {
	var sig struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &sig)
	if err != nil || len(rest) > 0 || sig.R == nil || sig.S == nil ||
		sig.R.Sign() <= 0 || sig.S.Sign() <= 0 || sig.R.BitLen() > 8*size || sig.S.BitLen() > 8*size {
		return nil, errors.New("malformed ECDSA signature")
	}
	out := make([]byte, 2*size)
	sig.R.FillBytes(out[:size])
	sig.S.FillBytes(out[size:])
	return out, nil
}

// randomString returns n random bytes, base64url encoded.
func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
