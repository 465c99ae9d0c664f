package oauthserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
	"github.com/anymcp/anymcp/testservers/internal/serve"
)

// PRMMode is where a ProtectedServer publishes its Protected Resource
// Metadata (RFC 9728).
type PRMMode int

const (
	// PRMInChallenge: at the path-based well-known URL, named by the
	// resource_metadata parameter of every challenge.
	PRMInChallenge PRMMode = iota
	// PRMPathBased: at the path-based well-known URL, not named.
	PRMPathBased
	// PRMRoot: at the root well-known URL, not named; its resource is the
	// origin.
	PRMRoot
	// PRMNone: none, as a 2025-03-26 server; its authorization server is
	// at its own origin (ProtectedOptions.SameOriginAuth).
	PRMNone
	// PRMCustom: at /custom/resource-metadata.json only, named by the
	// resource_metadata parameter of every challenge.
	PRMCustom
)

// customPRMPath is where PRMCustom serves the metadata.
const customPRMPath = "/custom/resource-metadata.json"

// ProtectedOptions configure a ProtectedServer.
type ProtectedOptions struct {
	// HTTPOptions configure the Streamable HTTP endpoint, /mcp.
	HTTPOptions testservers.HTTPOptions
	// Legacy configures the HTTP+SSE endpoint, /sse (stream) and /message.
	Legacy testservers.LegacyOptions
	// AuthServer issues the tokens the server accepts. Or SameOriginAuth
	// starts one on the server's own origin (endpoints and metadata next
	// to /mcp), as servers of 2025-03-26 had.
	AuthServer     *AuthServer
	SameOriginAuth *AuthServerOptions
	// PRM is where the resource metadata is (PRMInChallenge by default).
	PRM PRMMode
	// Resource, when set, is the resource the metadata claims (a mismatch).
	Resource string
	// ScopesSupported is the metadata's scopes_supported.
	ScopesSupported []string
	// Scopes are needed for every request; ToolScopes additionally for
	// tools/call of the named tool, asked for with a 403
	// insufficient_scope challenge that names only those.
	Scopes     []string
	ToolScopes map[string][]string
	// ScopeInChallenge puts Scopes in the 401 challenge's scope.
	ScopeInChallenge bool
	// IncrementalScopes makes a 403 name one missing tool scope at a
	// time (which the specification advises servers against), so that a
	// client steps up again and again.
	IncrementalScopes bool
	// ScopeChallenge, when set, is asked for the scopes of every POST
	// that passed the token check, given its JSON-RPC method: a request it
	// names any for is refused 403 insufficient_scope with those in the
	// challenge, whatever the token's scopes (a hostile server that asks
	// for ever more).
	ScopeChallenge func(method string) []string
	// DPoP makes the server want DPoP-bound tokens (RFC 9449 section 7): its
	// challenges use the DPoP scheme (DPoP algs="ES256", plus the usual
	// error, scope and resource_metadata parameters), and a request is let
	// through only with "Authorization: DPoP <token>" where the token is bound
	// (TokenInfo.JKT) to the key of the request's DPoP proof, the proof's htm
	// and htu are this request's method and URL (without query and
	// fragment), its ath is the token's hash, its jti was not seen before and
	// its iat is within 5 minutes. A Bearer-scheme request is refused.
	DPoP bool
	// StaleTokenStatus, when set, answers a Bearer token the authorization
	// server does not know (one it forgot, see AuthServer.Forget) with this
	// status and a server_error body instead of a 401, as the TypeScript
	// SDK's OAuth demo answers 500 after a restart.
	StaleTokenStatus int
	// DPoPNonce, when set, is the nonce every proof must carry: a request
	// without it is answered 401 with WWW-Authenticate: DPoP
	// error="use_dpop_nonce" and a DPoP-Nonce header (RFC 9449 section 9).
	// It matters only with DPoP.
	DPoPNonce string
	// OnRequest, when set, is called first with every request.
	OnRequest func(*http.Request)
}

// DPoPStats is what a ProtectedServer saw of DPoP.
type DPoPStats struct {
	Proofs          int            // requests let through with a valid proof
	Replays         int            // proofs whose jti was seen before
	NonceChallenges int            // use_dpop_nonce answers
	Schemes         map[string]int // Authorization schemes seen ("DPoP", "Bearer"), by count
	LastError       string         // why the last refused proof was refused
}

// ProtectedServer is an MCP server that wants OAuth bearer tokens (or,
// with DPoP, DPoP-bound ones): the Streamable HTTP handler at /mcp and the
// HTTP+SSE one at /sse and /message, behind a check of the token with the
// AuthServer (issued by it, for this resource, not expired, with the
// scopes needed), on 127.0.0.1.
type ProtectedServer struct {
	// URL is the Streamable HTTP endpoint, SSEURL the HTTP+SSE stream.
	URL    string
	SSEURL string

	opts ProtectedOptions
	ts   *httptest.Server
	mcp  *testservers.HybridHandler
	hits serve.HitCounter

	mu       sync.Mutex
	as       *AuthServer
	refusals map[int]int
	dpop     DPoPStats
	proofs   jtiCache // the jtis of DPoP proofs
	once     sync.Once
}

// StartProtected starts a ProtectedServer.
func StartProtected(opts ProtectedOptions) *ProtectedServer {
	p := &ProtectedServer{opts: opts, as: opts.AuthServer, refusals: map[int]int{}, proofs: jtiCache{}}
	p.dpop.Schemes = map[string]int{}
	p.mcp = testservers.NewHybridHandler(testservers.HybridOptions{Streamable: opts.HTTPOptions, Legacy: opts.Legacy})
	var sameOrigin *AuthServer
	if opts.SameOriginAuth != nil {
		sameOrigin = newAuthServer(*opts.SameOriginAuth)
		p.as = sameOrigin
	}
	mux := http.NewServeMux()
	for _, path := range []string{"/mcp", "/sse", "/message"} {
		mux.Handle(path, p.guard(p.mcp))
	}
	mux.HandleFunc("/.well-known/oauth-protected-resource/", p.metadata)
	mux.HandleFunc("/.well-known/oauth-protected-resource", p.metadata)
	mux.HandleFunc(customPRMPath, p.metadata)
	if sameOrigin != nil {
		mux.Handle("/", http.HandlerFunc(sameOrigin.serve))
	}
	var h http.Handler = mux
	if opts.OnRequest != nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			opts.OnRequest(r)
			mux.ServeHTTP(w, r)
		})
	}
	p.ts = httptest.NewServer(p.hits.Wrap(h))
	if sameOrigin != nil {
		sameOrigin.setURL(p.ts.URL)
	}
	p.URL, p.SSEURL = p.ts.URL+"/mcp", p.ts.URL+"/sse"
	return p
}

// Close stops the server, and an authorization server of its own origin.
func (p *ProtectedServer) Close() {
	p.once.Do(func() {
		serve.Within(p.mcp.Close, serve.CloseGrace, p.ts.CloseClientConnections)
		serve.Within(p.ts.Close, serve.CloseGrace, p.ts.CloseClientConnections)
	})
}

// AuthServer returns the authorization server whose tokens are accepted.
func (p *ProtectedServer) AuthServer() *AuthServer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.as
}

// SetAuthServer moves the server to another authorization server: its
// metadata names it, and only its tokens are accepted from now on.
func (p *ProtectedServer) SetAuthServer(a *AuthServer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.as = a
}

// Hits returns how many requests the server got, by "METHOD /path".
func (p *ProtectedServer) Hits() map[string]int { return p.hits.Snapshot() }

// Refusals returns how many requests were refused, by status (401, 403).
func (p *ProtectedServer) Refusals() map[int]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[int]int, len(p.refusals))
	for k, v := range p.refusals {
		out[k] = v
	}
	return out
}

// DPoPStats returns what the server saw of DPoP.
func (p *ProtectedServer) DPoPStats() DPoPStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.dpop
	s.Schemes = maps.Clone(p.dpop.Schemes)
	return s
}

// resourceFor is the resource a request's endpoint belongs to: the MCP
// endpoint's URL, or the origin when the metadata is at the root.
func (p *ProtectedServer) resourceFor(path string) string {
	if p.opts.Resource != "" {
		return p.opts.Resource
	}
	if p.opts.PRM == PRMRoot {
		return p.ts.URL
	}
	if path == "/message" || path == "/sse" {
		return p.ts.URL + "/sse"
	}
	return p.ts.URL + "/mcp"
}

// metadataURL is the metadata URL for a request's endpoint.
func (p *ProtectedServer) metadataURL(path string) string {
	if p.opts.PRM == PRMCustom {
		return p.ts.URL + customPRMPath
	}
	if p.opts.PRM == PRMRoot {
		return p.ts.URL + "/.well-known/oauth-protected-resource"
	}
	if path == "/message" || path == "/sse" {
		return p.ts.URL + "/.well-known/oauth-protected-resource/sse"
	}
	return p.ts.URL + "/.well-known/oauth-protected-resource/mcp"
}

func (p *ProtectedServer) metadata(w http.ResponseWriter, r *http.Request) {
	var endpoint string
	switch {
	case p.opts.PRM == PRMNone:
		http.NotFound(w, r)
		return
	case p.opts.PRM == PRMCustom:
		if r.URL.Path != customPRMPath {
			http.NotFound(w, r)
			return
		}
		endpoint = "/mcp"
	case r.URL.Path == customPRMPath:
		http.NotFound(w, r)
		return
	case p.opts.PRM == PRMRoot && r.URL.Path == "/.well-known/oauth-protected-resource":
		endpoint = "/mcp"
	case p.opts.PRM != PRMRoot && r.URL.Path == "/.well-known/oauth-protected-resource/mcp":
		endpoint = "/mcp"
	case p.opts.PRM != PRMRoot && r.URL.Path == "/.well-known/oauth-protected-resource/sse":
		endpoint = "/sse"
	default:
		http.NotFound(w, r)
		return
	}
	m := map[string]any{
		"resource":              p.resourceFor(endpoint),
		"authorization_servers": []string{p.AuthServer().Issuer},
	}
	if p.opts.ScopesSupported != nil {
		m["scopes_supported"] = p.opts.ScopesSupported
	}
	writeJSON(w, http.StatusOK, m)
}

// guard checks the token of every request (a bearer token, or with DPoP a
// DPoP-bound one and its proof) and its scopes before next sees it.
func (p *ProtectedServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.countScheme(r)
		check := p.bearer
		if p.opts.DPoP {
			check = p.dpopBound
		}
		info, ok := check(w, r)
		if !ok {
			return
		}
		need := slices.Clone(p.opts.Scopes)
		var extra []string
		if r.Method == http.MethodPost && (len(p.opts.ToolScopes) > 0 || p.opts.ScopeChallenge != nil) {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
			if err != nil {
				http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			extra = p.toolScopes(body)
			var m jsonrpc.Message
			if p.opts.ScopeChallenge != nil && json.Unmarshal(body, &m) == nil {
				if more := p.opts.ScopeChallenge(m.Method); len(more) > 0 {
					p.refuse(w, r, http.StatusForbidden, "insufficient_scope", more)
					return
				}
			}
		}
		for _, s := range need {
			if !slices.Contains(info.Scopes, s) {
				p.refuse(w, r, http.StatusForbidden, "insufficient_scope", need)
				return
			}
		}
		for _, s := range extra {
			if !slices.Contains(info.Scopes, s) {
				if p.opts.IncrementalScopes {
					extra = []string{s}
				}
				p.refuse(w, r, http.StatusForbidden, "insufficient_scope", extra)
				return
			}
		}
		if p.opts.DPoP {
			p.mu.Lock()
			p.dpop.Proofs++
			p.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// countScheme counts the scheme of the request's Authorization header.
func (p *ProtectedServer) countScheme(r *http.Request) {
	authz := r.Header.Get("Authorization")
	if authz == "" {
		return
	}
	scheme, _, _ := strings.Cut(authz, " ")
	for _, known := range []string{dpopSchemeName, "Bearer"} {
		if strings.EqualFold(scheme, known) {
			scheme = known
		}
	}
	p.mu.Lock()
	p.dpop.Schemes[scheme]++
	p.mu.Unlock()
}

// bearer returns what the AuthServer knows of the request's bearer token,
// issued for this resource and valid. A request without one is answered
// here: ok is false.
func (p *ProtectedServer) bearer(w http.ResponseWriter, r *http.Request) (info TokenInfo, ok bool) {
	token, hasToken := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	info, valid := p.AuthServer().Verify(token)
	if hasToken && !valid && p.opts.StaleTokenStatus != 0 {
		writeJSON(w, p.opts.StaleTokenStatus, map[string]string{"error": "server_error", "error_description": "Internal Server Error"})
		return TokenInfo{}, false
	}
	if !hasToken || !valid || info.Resource != p.resourceFor(r.URL.Path) {
		code := ""
		if hasToken {
			code = "invalid_token"
		}
		p.refuse(w, r, http.StatusUnauthorized, code, p.opts.Scopes)
		return TokenInfo{}, false
	}
	return info, true
}

// dpopBound returns what the AuthServer knows of the request's DPoP-bound
// token, issued for this resource, valid, and bound to the key of the
// request's proof, itself valid for this request (RFC 9449 section 7). A
// request without both is answered here: ok is false.
func (p *ProtectedServer) dpopBound(w http.ResponseWriter, r *http.Request) (info TokenInfo, ok bool) {
	authz := r.Header.Get("Authorization")
	if authz == "" {
		p.refuse(w, r, http.StatusUnauthorized, "", p.opts.Scopes)
		return TokenInfo{}, false
	}
	scheme, token, _ := strings.Cut(authz, " ")
	if !strings.EqualFold(scheme, dpopSchemeName) || token == "" {
		p.refuseDPoP(w, r, "invalid_token", fmt.Sprintf("the Authorization scheme is %q, not DPoP with a token", scheme))
		return TokenInfo{}, false
	}
	proof, err := p.requestProof(r, token)
	switch {
	case errors.Is(err, errDPoPNonce):
		w.Header().Set("DPoP-Nonce", p.opts.DPoPNonce)
		p.refuseDPoP(w, r, "use_dpop_nonce", err.Error())
		return TokenInfo{}, false
	case err != nil:
		p.refuseDPoP(w, r, "invalid_dpop_proof", err.Error())
		return TokenInfo{}, false
	}
	info, valid := p.AuthServer().Verify(token)
	switch {
	case !valid || info.Resource != p.resourceFor(r.URL.Path):
		p.refuse(w, r, http.StatusUnauthorized, "invalid_token", p.opts.Scopes)
		return TokenInfo{}, false
	case info.JKT == "":
		p.refuseDPoP(w, r, "invalid_token", "the token is not DPoP-bound")
		return TokenInfo{}, false
	case info.JKT != proof.jkt:
		p.refuseDPoP(w, r, "invalid_token", "the token is bound to another key than the proof's")
		return TokenInfo{}, false
	}
	return info, true
}

// requestProof verifies the request's one DPoP proof for token, and
// remembers its jti; a replayed one is counted and refused.
func (p *ProtectedServer) requestProof(r *http.Request, token string) (dpopProof, error) {
	raw, has, err := dpopHeader(r)
	if err != nil {
		return dpopProof{}, err
	}
	if !has {
		return dpopProof{}, errors.New("no DPoP proof")
	}
	now := time.Now()
	proof, err := verifyProof(raw, r.Method, p.ts.URL+r.URL.EscapedPath(), token, p.opts.DPoPNonce, now)
	if err != nil {
		return proof, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.proofs.add(proof, now) {
		p.dpop.Replays++
		return proof, errors.New("the proof's jti was used before")
	}
	return proof, nil
}

// refuseDPoP answers 401 for a DPoP reason, noted as the last error.
func (p *ProtectedServer) refuseDPoP(w http.ResponseWriter, r *http.Request, code, why string) {
	p.mu.Lock()
	p.dpop.LastError = why
	if code == "use_dpop_nonce" {
		p.dpop.NonceChallenges++
	}
	p.mu.Unlock()
	p.refuse(w, r, http.StatusUnauthorized, code, p.opts.Scopes)
}

// toolScopes returns the scopes a tools/call in body needs beyond Scopes.
func (p *ProtectedServer) toolScopes(body []byte) []string {
	var m jsonrpc.Message
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" {
		return nil
	}
	var params struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(m.Params, &params) != nil {
		return nil
	}
	return p.opts.ToolScopes[params.Name]
}

// refuse answers 401 (no or a bad token or proof) or 403 (insufficient
// scope) with a Bearer challenge, or with DPoP a DPoP one, whose error is
// code unless it is "".
func (p *ProtectedServer) refuse(w http.ResponseWriter, r *http.Request, status int, code string, scopes []string) {
	p.mu.Lock()
	p.refusals[status]++
	p.mu.Unlock()
	var params []string
	if code != "" {
		params = append(params, fmt.Sprintf(`error="%s"`, code))
	}
	if p.opts.DPoP {
		params = append(params, fmt.Sprintf(`algs="%s"`, dpopAlg))
	}
	if len(scopes) > 0 && (status == http.StatusForbidden || p.opts.ScopeInChallenge) {
		params = append(params, fmt.Sprintf(`scope="%s"`, strings.Join(scopes, " ")))
	}
	if p.opts.PRM == PRMInChallenge || p.opts.PRM == PRMCustom {
		params = append(params, fmt.Sprintf(`resource_metadata="%s"`, p.metadataURL(r.URL.Path)))
	}
	challenge := "Bearer"
	if p.opts.DPoP {
		challenge = dpopSchemeName
	}
	if len(params) > 0 {
		challenge += " " + strings.Join(params, ", ")
	}
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, http.StatusText(status), status)
}

// maxBody bounds the body of a POST the guard reads for its tool.
const maxBody = 256 << 20
