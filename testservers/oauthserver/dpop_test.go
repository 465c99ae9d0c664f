package oauthserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// proofKey is a client's DPoP key, with its public JWK coordinates.
type proofKey struct {
	priv *ecdsa.PrivateKey
	x, y string // base64url
}

func newProofKey(t *testing.T) *proofKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := priv.PublicKey.Bytes() // 0x04 || x || y
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	return &proofKey{priv: priv, x: enc.EncodeToString(pub[1:33]), y: enc.EncodeToString(pub[33:65])}
}

// thumbprint is the key's RFC 7638 thumbprint, from JSON the encoder
// writes (a map's members sorted, no white space).
func (k *proofKey) thumbprint(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"kty": "EC", "crv": "P-256", "x": k.x, "y": k.y})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// proof makes a proof for a request of htm to htu, with an ath when token
// is not "", its claims and header changed by edit when it is not nil.
func (k *proofKey) proof(t *testing.T, htm, htu, token string, edit func(header, claims map[string]any)) string {
	t.Helper()
	header := map[string]any{
		"typ": "dpop+jwt",
		"alg": "ES256",
		"jwk": map[string]any{"kty": "EC", "crv": "P-256", "x": k.x, "y": k.y},
	}
	claims := map[string]any{"jti": randomID(), "htm": htm, "htu": htu, "iat": time.Now().Unix()}
	if token != "" {
		h := sha256.Sum256([]byte(token))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(h[:])
	}
	if edit != nil {
		edit(header, claims)
	}
	return signJWS(t, k.priv, header, claims)
}

// signJWS signs header.claims with ES256: r and s, 32 bytes each.
func signJWS(t *testing.T, priv *ecdsa.PrivateKey, header, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	hb, err1 := json.Marshal(header)
	cb, err2 := json.Marshal(claims)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	input := enc.EncodeToString(hb) + "." + enc.EncodeToString(cb)
	h := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, priv, h[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + enc.EncodeToString(sig)
}

// tamper flips a bit of a proof's signature.
func tamper(t *testing.T, proof string) string {
	t.Helper()
	i := strings.LastIndexByte(proof, '.')
	sig, err := base64.RawURLEncoding.DecodeString(proof[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	sig[10] ^= 1
	return proof[:i+1] + base64.RawURLEncoding.EncodeToString(sig)
}

// tokenAnswer is a token endpoint's answer.
type tokenAnswer struct {
	status int
	header http.Header
	body   map[string]any
}

func (a tokenAnswer) str(name string) string {
	s, _ := a.body[name].(string)
	return s
}

// postToken sends a token request with form, and with proofs as its DPoP
// headers: authenticated as the client "svc" with HTTP Basic, unless form
// names a client_id (a public client).
func postToken(t *testing.T, hc *http.Client, endpoint string, form url.Values, proofs ...string) tokenAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if !form.Has("client_id") {
		req.SetBasicAuth("svc", "s3cret")
	}
	for _, p := range proofs {
		req.Header.Add("DPoP", p)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := tokenAnswer{status: resp.StatusCode, header: resp.Header}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		t.Fatalf("token answer %d: %v", resp.StatusCode, err)
	}
	return a
}

func newTestClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: testTimeout}
}

// startDPoPAuth starts an AuthServer with DPoP that knows the
// confidential client svc, with the client_credentials grant.
func startDPoPAuth(t *testing.T, opts AuthServerOptions) *AuthServer {
	opts.DPoP = true
	opts.ClientCredentials = true
	opts.Clients = append(opts.Clients, RegisteredClient{ID: "svc", Secret: "s3cret"})
	as := StartAuthServer(opts)
	t.Cleanup(as.Close)
	return as
}

func ccForm(resource string) url.Values {
	return url.Values{"grant_type": {"client_credentials"}, "resource": {resource}, "scope": {"mcp"}}
}

// TestJWKThumbprint checks the RFC 7638 thumbprint against the value RFC
// 9449 (figure 9) publishes for its example key, and against JSON built
// by hand for a generated key.
func TestJWKThumbprint(t *testing.T) {
	const x, y = "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs", "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"
	canonical := "{" + `"crv":"P-256",` + `"kty":"EC",` + `"x":"` + x + `",` + `"y":"` + y + `"` + "}"
	h := sha256.Sum256([]byte(canonical))
	byHand := base64.RawURLEncoding.EncodeToString(h[:])
	const published = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
	if byHand != published {
		t.Fatalf("the test's own thumbprint %s, RFC 9449 publishes %s", byHand, published)
	}
	if got := jwkThumbprint(x, y); got != published {
		t.Errorf("jwkThumbprint = %s, want %s", got, published)
	}
	_, jkt, err := parseJWK(map[string]any{"kty": "EC", "crv": "P-256", "x": x, "y": y, "use": "sig"})
	if err != nil || jkt != published {
		t.Errorf("parseJWK: %s, %v; want %s", jkt, err, published)
	}
	k := newProofKey(t)
	if got, want := jwkThumbprint(k.x, k.y), k.thumbprint(t); got != want {
		t.Errorf("jwkThumbprint of a generated key = %s, want %s", got, want)
	}
}

func TestVerifyProof(t *testing.T) {
	k, other := newProofKey(t), newProofKey(t)
	const htu = "http://127.0.0.1:1234/mcp"
	now := time.Now()
	good := k.proof(t, "POST", htu, "tok", nil)
	p, err := verifyProof(good, "POST", htu, "tok", "", now)
	if err != nil || p.jkt != k.thumbprint(t) || p.jti == "" {
		t.Fatalf("good proof: %+v, %v", p, err)
	}
	// The htu is compared without query and fragment, scheme and host in
	// any case.
	for _, u := range []string{htu + "?x=1", htu + "#f", "HTTP://127.0.0.1:1234/mcp"} {
		if _, err := verifyProof(k.proof(t, "POST", u, "tok", nil), "POST", htu+"?q=2", "tok", "", now); err != nil {
			t.Errorf("htu %s: %v", u, err)
		}
	}
	otherJWK := func(h, _ map[string]any) {
		h["jwk"] = map[string]any{"kty": "EC", "crv": "P-256", "x": other.x, "y": other.y}
	}
	bad := []struct{ name, proof, token, why string }{
		{"not a JWS", "a.b", "tok", "not a compact JWS"},
		{"bad signature", tamper(t, good), "tok", "bad proof signature"},
		{"another's key", k.proof(t, "POST", htu, "tok", otherJWK), "tok", "bad proof signature"},
		{"private jwk", k.proof(t, "POST", htu, "tok", func(h, _ map[string]any) { h["jwk"].(map[string]any)["d"] = k.x }), "tok", "private key"},
		{"point off the curve", k.proof(t, "POST", htu, "tok", func(h, _ map[string]any) { h["jwk"].(map[string]any)["x"] = other.x }), "tok", "jwk"},
		{"typ", k.proof(t, "POST", htu, "tok", func(h, _ map[string]any) { h["typ"] = "JWT" }), "tok", "typ"},
		{"alg", k.proof(t, "POST", htu, "tok", func(h, _ map[string]any) { h["alg"] = "ES384" }), "tok", "alg"},
		{"no jwk", k.proof(t, "POST", htu, "tok", func(h, _ map[string]any) { delete(h, "jwk") }), "tok", "jwk"},
		{"no jti", k.proof(t, "POST", htu, "tok", func(_, c map[string]any) { delete(c, "jti") }), "tok", "jti"},
		{"htm", k.proof(t, "GET", htu, "tok", nil), "tok", "htm"},
		{"trailing slash", k.proof(t, "POST", htu+"/", "tok", nil), "tok", "htu"},
		{"another path", k.proof(t, "POST", "http://127.0.0.1:1234/sse", "tok", nil), "tok", "htu"},
		{"another port", k.proof(t, "POST", "http://127.0.0.1:1235/mcp", "tok", nil), "tok", "htu"},
		{"relative htu", k.proof(t, "POST", "/mcp", "tok", nil), "tok", "htu"},
		{"old iat", k.proof(t, "POST", htu, "tok", func(_, c map[string]any) { c["iat"] = now.Add(-6 * time.Minute).Unix() }), "tok", "iat"},
		{"future iat", k.proof(t, "POST", htu, "tok", func(_, c map[string]any) { c["iat"] = now.Add(6 * time.Minute).Unix() }), "tok", "iat"},
		{"string iat", k.proof(t, "POST", htu, "tok", func(_, c map[string]any) { c["iat"] = "now" }), "tok", "iat"},
		{"ath of another token", k.proof(t, "POST", htu, "other-token", nil), "tok", "ath"},
		{"no ath", k.proof(t, "POST", htu, "", nil), "tok", "ath"},
		{"ath without a token", good, "", "ath"},
		{"padded signature", good + "=", "tok", "signature"},
	}
	for _, c := range bad {
		_, err := verifyProof(c.proof, "POST", htu, c.token, "", now)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want an error about %s", c.name, err, c.why)
		}
	}
	// A valid proof without the nonce is told apart.
	if _, err := verifyProof(good, "POST", htu, "tok", "n-1", now); err != errDPoPNonce {
		t.Errorf("without the nonce: %v, want errDPoPNonce", err)
	}
	withNonce := k.proof(t, "POST", htu, "tok", func(_, c map[string]any) { c["nonce"] = "n-1" })
	if _, err := verifyProof(withNonce, "POST", htu, "tok", "n-1", now); err != nil {
		t.Errorf("with the nonce: %v", err)
	}
	if _, err := verifyProof(withNonce, "POST", htu, "tok", "n-2", now); err != errDPoPNonce {
		t.Errorf("with another nonce: %v, want errDPoPNonce", err)
	}
}

func TestJTICache(t *testing.T) {
	c := jtiCache{}
	now := time.Now()
	p := dpopProof{jti: "a", iat: now}
	if !c.add(p, now) || c.add(p, now.Add(4*time.Minute)) {
		t.Fatal("a replay within the window was not refused")
	}
	// Once its iat is too old for the proof to be accepted, it is forgotten.
	c.add(dpopProof{jti: "b", iat: now.Add(10 * time.Minute)}, now.Add(10*time.Minute))
	if _, ok := c["a"]; ok || len(c) != 1 {
		t.Errorf("cache %v, want only b", c)
	}
}

func TestAuthServerDPoP(t *testing.T) {
	as := startDPoPAuth(t, AuthServerOptions{})
	hc := newTestClient(t)
	endpoint := as.URL + "/token"
	k := newProofKey(t)

	resp, err := hc.Get(as.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if algs, _ := meta["dpop_signing_alg_values_supported"].([]any); len(algs) != 1 || algs[0] != "ES256" {
		t.Errorf("dpop_signing_alg_values_supported = %v", meta["dpop_signing_alg_values_supported"])
	}

	a := postToken(t, hc, endpoint, ccForm("https://rs.example/mcp"), k.proof(t, "POST", endpoint, "", nil))
	if a.status != http.StatusOK || a.str("token_type") != "DPoP" {
		t.Fatalf("with a proof: %d %v", a.status, a.body)
	}
	info, ok := as.Verify(a.str("access_token"))
	if !ok || info.JKT != k.thumbprint(t) {
		t.Errorf("Verify: %+v %v, want JKT %s", info, ok, k.thumbprint(t))
	}

	a = postToken(t, hc, endpoint, ccForm("https://rs.example/mcp"))
	if a.status != http.StatusOK || a.str("token_type") != "Bearer" {
		t.Fatalf("without a proof: %d %v", a.status, a.body)
	}
	if info, _ := as.Verify(a.str("access_token")); info.JKT != "" {
		t.Errorf("a Bearer token bound to %s", info.JKT)
	}

	other := newProofKey(t)
	replayed := k.proof(t, "POST", endpoint, "", nil)
	postToken(t, hc, endpoint, ccForm("https://rs.example/mcp"), replayed)
	bad := map[string][]string{
		"bad signature": {tamper(t, k.proof(t, "POST", endpoint, "", nil))},
		"jwk off curve": {k.proof(t, "POST", endpoint, "", func(h, _ map[string]any) { h["jwk"].(map[string]any)["x"] = other.x })},
		"wrong htu":     {k.proof(t, "POST", as.URL+"/authorize", "", nil)},
		"wrong htm":     {k.proof(t, "GET", endpoint, "", nil)},
		"with an ath":   {k.proof(t, "POST", endpoint, "some-token", nil)},
		"two proofs":    {k.proof(t, "POST", endpoint, "", nil), k.proof(t, "POST", endpoint, "", nil)},
		"replayed":      {replayed},
	}
	for name, proofs := range bad {
		a := postToken(t, hc, endpoint, ccForm("https://rs.example/mcp"), proofs...)
		if a.status != http.StatusBadRequest || a.str("error") != "invalid_dpop_proof" {
			t.Errorf("%s: %d %v, want 400 invalid_dpop_proof", name, a.status, a.body)
		}
	}
	if s := as.Stats(); s.DPoPProofs != 2 || s.DPoPNonceChallenges != 0 {
		t.Errorf("stats: %d proofs, %d nonce challenges; want 2, 0", s.DPoPProofs, s.DPoPNonceChallenges)
	}
}

func TestAuthServerDPoPNonce(t *testing.T) {
	as := startDPoPAuth(t, AuthServerOptions{DPoPNonce: "n-42"})
	hc := newTestClient(t)
	endpoint := as.URL + "/token"
	k := newProofKey(t)

	a := postToken(t, hc, endpoint, ccForm("https://rs.example/mcp"), k.proof(t, "POST", endpoint, "", nil))
	if a.status != http.StatusBadRequest || a.str("error") != "use_dpop_nonce" || a.header.Get("DPoP-Nonce") != "n-42" {
		t.Fatalf("without the nonce: %d %v, DPoP-Nonce %q", a.status, a.body, a.header.Get("DPoP-Nonce"))
	}
	a = postToken(t, hc, endpoint, ccForm("https://rs.example/mcp"), k.proof(t, "POST", endpoint, "", func(_, c map[string]any) { c["nonce"] = "n-41" }))
	if a.status != http.StatusBadRequest || a.str("error") != "use_dpop_nonce" {
		t.Fatalf("with another nonce: %d %v", a.status, a.body)
	}
	a = postToken(t, hc, endpoint, ccForm("https://rs.example/mcp"), k.proof(t, "POST", endpoint, "", func(_, c map[string]any) { c["nonce"] = "n-42" }))
	if a.status != http.StatusOK || a.str("token_type") != "DPoP" {
		t.Fatalf("with the nonce: %d %v", a.status, a.body)
	}
	// A bad proof is invalid_dpop_proof, whatever its nonce.
	a = postToken(t, hc, endpoint, ccForm("https://rs.example/mcp"), k.proof(t, "GET", endpoint, "", nil))
	if a.status != http.StatusBadRequest || a.str("error") != "invalid_dpop_proof" {
		t.Fatalf("a bad proof without the nonce: %d %v", a.status, a.body)
	}
	if s := as.Stats(); s.DPoPProofs != 1 || s.DPoPNonceChallenges != 2 {
		t.Errorf("stats: %d proofs, %d nonce challenges; want 1, 2", s.DPoPProofs, s.DPoPNonceChallenges)
	}
}

// TestAuthServerDPoPRefresh checks that a public client's refresh token
// is bound to the key of the access token it came with, through the
// authorization code grant.
func TestAuthServerDPoPRefresh(t *testing.T) {
	as := StartAuthServer(AuthServerOptions{DPoP: true, CIMD: true})
	t.Cleanup(as.Close)
	hc := newTestClient(t)
	endpoint := as.URL + "/token"
	k, other := newProofKey(t), newProofKey(t)

	const redirect = "http://127.0.0.1:9/cb"
	verifier := randomID() + randomID()
	q := url.Values{"response_type": {"code"}, "client_id": {"https://app.example/client.json"}, "redirect_uri": {redirect},
		"code_challenge": {s256(verifier)}, "code_challenge_method": {"S256"}, "resource": {"https://rs.example/mcp"}}
	loc, err := FollowAuthorization(t.Context(), as.URL+"/authorize?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	back, _ := url.Parse(loc)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {redirect},
		"code_verifier": {verifier}, "client_id": {"https://app.example/client.json"}, "resource": {"https://rs.example/mcp"}}
	post := func(form url.Values, proofs ...string) tokenAnswer {
		return postToken(t, hc, endpoint, form, proofs...)
	}
	a := post(form, k.proof(t, "POST", endpoint, "", nil))
	if a.status != http.StatusOK || a.str("token_type") != "DPoP" || a.str("refresh_token") == "" {
		t.Fatalf("code grant: %d %v", a.status, a.body)
	}
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.str("refresh_token")}, "client_id": {"https://app.example/client.json"}}
	for name, proofs := range map[string][]string{"no proof": nil, "another key": {other.proof(t, "POST", endpoint, "", nil)}} {
		if a := post(refresh, proofs...); a.status != http.StatusBadRequest || a.str("error") != "invalid_grant" {
			t.Errorf("refresh with %s: %d %v, want invalid_grant", name, a.status, a.body)
		}
	}
	a = post(refresh, k.proof(t, "POST", endpoint, "", nil))
	if a.status != http.StatusOK || a.str("token_type") != "DPoP" {
		t.Fatalf("refresh with the key: %d %v", a.status, a.body)
	}
	if info, _ := as.Verify(a.str("access_token")); info.JKT != k.thumbprint(t) {
		t.Errorf("refreshed token bound to %q", info.JKT)
	}
	// The rotated refresh token is bound too.
	refresh.Set("refresh_token", a.str("refresh_token"))
	if a := post(refresh); a.status != http.StatusBadRequest || a.str("error") != "invalid_grant" {
		t.Errorf("rotated refresh without a proof: %d %v", a.status, a.body)
	}
}

// dpopResource is a ProtectedServer with DPoP, its AuthServer, and a
// client with a token bound to key.
type dpopResource struct {
	as    *AuthServer
	ps    *ProtectedServer
	hc    *http.Client
	key   *proofKey
	token string
}

func startDPoPResource(t *testing.T, nonce string) *dpopResource {
	as := startDPoPAuth(t, AuthServerOptions{})
	ps := StartProtected(ProtectedOptions{AuthServer: as, DPoP: true, DPoPNonce: nonce})
	t.Cleanup(ps.Close)
	d := &dpopResource{as: as, ps: ps, hc: newTestClient(t), key: newProofKey(t)}
	endpoint := as.URL + "/token"
	a := postToken(t, d.hc, endpoint, ccForm(ps.URL), d.key.proof(t, "POST", endpoint, "", nil))
	if a.status != http.StatusOK || a.str("token_type") != "DPoP" {
		t.Fatalf("token: %d %v", a.status, a.body)
	}
	d.token = a.str("access_token")
	return d
}

// initialize POSTs initialize with the headers in hdr, and returns the
// status and WWW-Authenticate of the answer.
func (d *dpopResource) initialize(t *testing.T, hdr map[string]string) (int, http.Header) {
	t.Helper()
	resp := postInitialize(t, d.hc, d.ps.URL, hdr)
	return resp.StatusCode, resp.Header
}

// bound returns the headers of a request with the token and a fresh proof
// by key.
func (d *dpopResource) bound(t *testing.T, key *proofKey, edit func(header, claims map[string]any)) map[string]string {
	return map[string]string{"Authorization": "DPoP " + d.token, "DPoP": key.proof(t, "POST", d.ps.URL, d.token, edit)}
}

func TestProtectedDPoP(t *testing.T) {
	d := startDPoPResource(t, "")

	status, h := d.initialize(t, nil)
	if status != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), `DPoP algs="ES256"`) {
		t.Fatalf("without a token: %d %q", status, h.Get("WWW-Authenticate"))
	}
	if ch := h.Get("WWW-Authenticate"); !strings.Contains(ch, `resource_metadata="`) || strings.Contains(ch, "error=") {
		t.Errorf("challenge without a token %q", ch)
	}

	good := d.bound(t, d.key, nil)
	if status, h := d.initialize(t, good); status != http.StatusOK {
		t.Fatalf("a bound token with a good proof: %d %q", status, h.Get("WWW-Authenticate"))
	}
	if status, h := d.initialize(t, good); status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_dpop_proof"`) {
		t.Errorf("a replayed proof: %d %q", status, h.Get("WWW-Authenticate"))
	}

	other := newProofKey(t)
	withToken := func(proof string) map[string]string {
		return map[string]string{"Authorization": "DPoP " + d.token, "DPoP": proof}
	}
	refused := []struct {
		name      string
		hdr       map[string]string
		code, why string // the challenge's error, and LastError ("" when not a proof's fault)
	}{
		{"Bearer scheme", map[string]string{"Authorization": "Bearer " + d.token, "DPoP": d.key.proof(t, "POST", d.ps.URL, d.token, nil)}, "invalid_token", "scheme"},
		{"no proof", map[string]string{"Authorization": "DPoP " + d.token}, "invalid_dpop_proof", "no DPoP proof"},
		{"wrong ath", withToken(d.key.proof(t, "POST", d.ps.URL, "another-token", nil)), "invalid_dpop_proof", "ath"},
		{"wrong key", d.bound(t, other, nil), "invalid_token", "another key"},
		{"wrong htu", withToken(d.key.proof(t, "POST", d.ps.URL+"/", d.token, nil)), "invalid_dpop_proof", "htu"},
		{"wrong htm", withToken(d.key.proof(t, "GET", d.ps.URL, d.token, nil)), "invalid_dpop_proof", "htm"},
		{"bad signature", withToken(tamper(t, d.key.proof(t, "POST", d.ps.URL, d.token, nil))), "invalid_dpop_proof", "signature"},
		{"unknown token", map[string]string{"Authorization": "DPoP nope", "DPoP": d.key.proof(t, "POST", d.ps.URL, "nope", nil)}, "invalid_token", ""},
	}
	for _, c := range refused {
		before := d.ps.DPoPStats().LastError
		status, h := d.initialize(t, c.hdr)
		ch := h.Get("WWW-Authenticate")
		if status != http.StatusUnauthorized || !strings.HasPrefix(ch, "DPoP ") || !strings.Contains(ch, `algs="ES256"`) || !strings.Contains(ch, `error="`+c.code+`"`) {
			t.Errorf("%s: %d %q, want 401 with a DPoP challenge, error %s", c.name, status, ch, c.code)
		}
		last := d.ps.DPoPStats().LastError
		if c.why == "" && last != before || c.why != "" && !strings.Contains(last, c.why) {
			t.Errorf("%s: LastError %q, want one about %q", c.name, last, c.why)
		}
	}

	// A Bearer token (no proof at the token endpoint) is not enough either.
	a := postToken(t, d.hc, d.as.URL+"/token", ccForm(d.ps.URL))
	bearer := a.str("access_token")
	hdr := map[string]string{"Authorization": "DPoP " + bearer, "DPoP": d.key.proof(t, "POST", d.ps.URL, bearer, nil)}
	if status, h := d.initialize(t, hdr); status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("an unbound token: %d %q", status, h.Get("WWW-Authenticate"))
	}
	s := d.ps.DPoPStats()
	if s.LastError == "" {
		t.Error("no LastError")
	}
	s.LastError = ""
	if s.Proofs != 1 || s.Replays != 1 || s.NonceChallenges != 0 || s.Schemes["DPoP"] != 10 || s.Schemes["Bearer"] != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestProtectedDPoPNonce(t *testing.T) {
	d := startDPoPResource(t, "rs-nonce")
	status, h := d.initialize(t, d.bound(t, d.key, nil))
	ch := h.Get("WWW-Authenticate")
	if status != http.StatusUnauthorized || !strings.HasPrefix(ch, `DPoP error="use_dpop_nonce"`) || h.Get("DPoP-Nonce") != "rs-nonce" {
		t.Fatalf("without the nonce: %d %q, DPoP-Nonce %q", status, ch, h.Get("DPoP-Nonce"))
	}
	withNonce := func(_, c map[string]any) { c["nonce"] = "rs-nonce" }
	if status, h := d.initialize(t, d.bound(t, d.key, withNonce)); status != http.StatusOK {
		t.Fatalf("with the nonce: %d %q", status, h.Get("WWW-Authenticate"))
	}
	if s := d.ps.DPoPStats(); s.Proofs != 1 || s.NonceChallenges != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestProtectedDPoPScopes checks that scopes still apply with DPoP: a 403
// with a DPoP challenge.
func TestProtectedDPoPScopes(t *testing.T) {
	as := startDPoPAuth(t, AuthServerOptions{})
	ps := StartProtected(ProtectedOptions{AuthServer: as, DPoP: true, Scopes: []string{"admin"}})
	t.Cleanup(ps.Close)
	hc := newTestClient(t)
	k := newProofKey(t)
	a := postToken(t, hc, as.URL+"/token", ccForm(ps.URL), k.proof(t, "POST", as.URL+"/token", "", nil))
	tok := a.str("access_token")
	resp := postInitialize(t, hc, ps.URL, map[string]string{"Authorization": "DPoP " + tok, "DPoP": k.proof(t, "POST", ps.URL, tok, nil)})
	ch := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(ch, `DPoP error="insufficient_scope", algs="ES256", scope="admin"`) {
		t.Errorf("missing scope: %d %q", resp.StatusCode, ch)
	}
	if s := ps.DPoPStats(); s.Proofs != 0 {
		t.Errorf("a refused request counted as let through: %+v", s)
	}
}
