//go:build unix

package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/anymcp/anymcp/access"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
)

// stderrLines gathers every stderr line of a bridgeProc from the moment
// it is made, so that a test can count lines once the bridge is gone
// and the bridge never blocks on a full pipe meanwhile.
type stderrLines struct {
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func gatherStderr(p *bridgeProc) *stderrLines {
	s := &stderrLines{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for l := range p.lines {
			s.mu.Lock()
			s.lines = append(s.lines, l)
			s.mu.Unlock()
		}
	}()
	return s
}

// stop ends the bridge with SIGTERM and returns every line it wrote
// after gatherStderr.
func (s *stderrLines) stop(t *testing.T, p *bridgeProc) []string {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("stderr still open 10 s after SIGTERM")
	}
	p.waitExited(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lines)
}

// decisions are the "tool call approval" log lines of lines, each cut to
// the attributes a test checks: "tool=T approved=B by=W".
func decisions(lines []string) []string {
	attr := func(l, key string) string {
		i := strings.Index(l, " "+key+"=")
		if i < 0 {
			return key + "=?"
		}
		v := l[i+1:]
		if j := strings.IndexByte(v, ' '); j >= 0 {
			v = v[:j]
		}
		return v
	}
	var out []string
	for _, l := range lines {
		if strings.Contains(l, "tool call approval") {
			out = append(out, attr(l, "tool")+" "+attr(l, "approved")+" "+attr(l, "by"))
		}
	}
	return out
}

// counter calls the web server's counter tool, which counts its runs
// across every session of that server, and returns its answer.
func counter(ctx context.Context, conn *client.Conn) (int, error) {
	res, err := conn.CallTool(ctx, "web__counter", map[string]any{})
	if err != nil {
		return 0, err
	}
	if res.IsError || len(res.Content) == 0 {
		return 0, &toolError{res}
	}
	return strconv.Atoi(res.Content[0].Text)
}

type toolError struct{ res *mcp.CallToolResult }

func (e *toolError) Error() string {
	b, _ := json.Marshal(e.res)
	return "the tool failed: " + string(b)
}

// answering is a client elicitation handler that answers every approval
// request with action (and approve true on accept); it counts the
// requests in asked and keeps the last question in question.
func answering(action string, asked *atomic.Int32, question *atomic.Value) client.ElicitationHandler {
	return func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		asked.Add(1)
		question.Store(p.Message)
		r := &mcp.ElicitResult{Action: action}
		if action == mcp.ElicitAccept {
			r.Content = map[string]any{"approve": true}
		}
		return r, nil
	}
}

// The "approvals" of --gateway FILE gate the running gateway's tool
// calls: a required tool is refused to a client that cannot be asked
// under "default": "deny" and runs under "allow"; a client that answers
// elicitation is asked and its answer decides; no answer within
// "timeout" is a denial. A tool the patterns do not match runs
// unasked. The web server's counter tool counts its runs, so a refused
// call is seen not to have run. Each decision is one log line.
func TestBridgeAllGatewayFileApprovals(t *testing.T) {
	dir := t.TempDir()
	config, pidFile := gatewayFleet(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// "default": "deny".
	gw := writeFile(t, filepath.Join(dir, "deny.json"), `{"approvals": {"require": ["web__counter"], "default": "deny"}, "pins": {"file": false}}`)
	p := startBridgeAll(t, dir, nil, "-v", "--config", config, "--gateway", gw)
	logs := gatherStderr(p)

	mute, err := client.Dial(ctx, client.URL(p.url))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := counter(ctx, mute); err == nil || !strings.Contains(err.Error(), "needs approval") || !strings.Contains(err.Error(), "cannot be asked") {
		t.Errorf("web__counter, required, to a client that cannot be asked, under deny: %v, want a refusal", err)
	}
	callEcho(ctx, t, mute, "web__echo") // not required: runs
	callEcho(ctx, t, mute, "st__echo")
	_ = mute.Close()

	var asked atomic.Int32
	var question atomic.Value
	no, err := client.Dial(ctx, client.URL(p.url), client.WithElicitation(answering(mcp.ElicitDecline, &asked, &question)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := counter(ctx, no); err == nil || !strings.Contains(err.Error(), "declined") {
		t.Errorf("web__counter, declined: %v, want a refusal that says so", err)
	}
	callEcho(ctx, t, no, "web__echo")
	if n := asked.Load(); n != 1 {
		t.Errorf("the declining client was asked %d times, want once (for web__counter only)", n)
	}
	if q, _ := question.Load().(string); !strings.Contains(q, `"web__counter"`) {
		t.Errorf("the question %q names not the tool", q)
	}
	_ = no.Close()

	yes, err := client.Dial(ctx, client.URL(p.url), client.WithElicitation(answering(mcp.ElicitAccept, &asked, &question)))
	if err != nil {
		t.Fatal(err)
	}
	// The first run of all: neither refusal above reached the server.
	if n, err := counter(ctx, yes); err != nil || n != 1 {
		t.Errorf("web__counter, accepted: %d, %v; want 1 (its first run)", n, err)
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("asked %d times in all, want 2", n)
	}
	_ = yes.Close()
	lines := logs.stop(t, p)
	want := []string{"tool=web__counter approved=false by=policy", "tool=web__counter approved=false by=client", "tool=web__counter approved=true by=client"}
	if got := decisions(lines); !slices.Equal(got, want) {
		t.Errorf("the decisions logged under deny:\n%s\nwant one line each:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	pidFileGone(t, pidFile)

	// "default": "allow", and a client that does not answer in time.
	gw = writeFile(t, filepath.Join(dir, "allow.json"), `{"approvals": {"require": ["web__counter"], "default": "allow", "timeout": "1s"}, "pins": {"file": false}}`)
	p = startBridgeAll(t, dir, nil, "-v", "--config", config, "--gateway", gw)
	logs = gatherStderr(p)
	mute, err = client.Dial(ctx, client.URL(p.url))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := counter(ctx, mute); err != nil || n != 2 {
		t.Errorf("web__counter to a client that cannot be asked, under allow: %d, %v; want it run (2)", n, err)
	}
	_ = mute.Close()

	// A client of the initialize era that does not answer: the gateway
	// gives the question up after the timeout (and tells the client,
	// whose handler then ends) and refuses the call.
	release := make(chan struct{})
	var waited atomic.Int32
	slow, err := client.Dial(ctx, client.URL(p.url), client.WithEra(negotiate.InitializeOnly), client.WithElicitation(func(ectx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		waited.Add(1)
		select {
		case <-ectx.Done():
		case <-release:
		}
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"approve": true}}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	// Well within the test's time, well beyond the file's timeout (the
	// default would be 2 minutes).
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = counter(sctx, slow)
	scancel()
	close(release)
	if err == nil || !strings.Contains(err.Error(), "no answer to the approval request within 1s") {
		t.Errorf("web__counter, unanswered for the timeout: %v, want a refusal after 1s", err)
	}
	if waited.Load() != 1 {
		t.Errorf("the slow client was asked %d times, want once", waited.Load())
	}
	_ = slow.Close()
	mute, err = client.Dial(ctx, client.URL(p.url))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := counter(ctx, mute); err != nil || n != 3 {
		t.Errorf("web__counter after the timed-out call: %d, %v; want 3 (the timed-out call did not run)", n, err)
	}
	_ = mute.Close()
	lines = logs.stop(t, p)
	want = []string{"tool=web__counter approved=true by=policy", "tool=web__counter approved=false by=timeout", "tool=web__counter approved=true by=policy"}
	if got := decisions(lines); !slices.Equal(got, want) {
		t.Errorf("the decisions logged under allow:\n%s\nwant one line each:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	pidFileGone(t, pidFile)
}

// jwtIssuer is an authorization server of a test: an Ed25519 key set at
// /keys (named by jwksUrl) and at /discovered (named by its RFC 8414
// metadata), each request counted by path.
type jwtIssuer struct {
	*httptest.Server
	key   ed25519.PrivateKey
	mu    sync.Mutex
	fetch map[string]int
}

func newJWTIssuer(t *testing.T) *jwtIssuer {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &jwtIssuer{key: key, fetch: map[string]int{}}
	keys, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "OKP", "crv": "Ed25519", "use": "sig", "kid": "k1", "x": base64.RawURLEncoding.EncodeToString(pub),
	}}})
	is.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		is.fetch[r.URL.Path]++
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.URL, "jwks_uri": is.URL + "/discovered", "token_endpoint": is.URL + "/token"})
		case "/keys", "/discovered":
			_, _ = w.Write(keys)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(is.Close)
	return is
}

func (is *jwtIssuer) fetched(path string) int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.fetch[path]
}

// paths are the paths asked for so far, with their counts.
func (is *jwtIssuer) paths() map[string]int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return maps.Clone(is.fetch)
}

// token signs claims (valid ones for audience, with extra merged in; a
// nil value deletes a claim) with key under kid "k1".
func (is *jwtIssuer) token(t *testing.T, key ed25519.PrivateKey, audience string, extra map[string]any) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"iss": is.URL, "aud": audience, "sub": "alice", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	tok.Header["typ"] = "at+jwt"
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// challengeMetadata is the resource_metadata parameter of a Bearer
// challenge, "" when it has none.
var challengeMetadata = regexp.MustCompile(`resource_metadata="([^"]*)"`)

// The "access" of --gateway FILE reaches the running gateway: "jwt"
// admits the issuer's access tokens for "audience" only, each to the
// view its "viewClaim" claim (or its scope, through "views") names, with
// the keys of "jwksUrl" when given; "resource" is named in every
// challenge and its protected-resource metadata is served on the
// gateway's own origin, naming the issuer. No token is ever written on
// stderr.
func TestBridgeAllGatewayFileJWT(t *testing.T) {
	dir := t.TempDir()
	config, pidFile := gatewayFleet(t, dir)
	is := newJWTIssuer(t)
	_, otherKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	var shown []string // every token made: none may reach stderr

	// start runs the bridge with jwtMembers beside access.jwt's issuer
	// and audience, on a port chosen beforehand (freePort: free a moment
	// ago), so that the resource, and the audience, is the gateway's own
	// URL.
	start := func(name, jwtMembers string) (p *bridgeProc, logs *stderrLines, resource string) {
		t.Helper()
		addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
		resource = "http://" + addr + "/mcp"
		gw := writeFile(t, filepath.Join(dir, name), `{"views": [{"name": ""}, {"name": "team", "allow": ["server:web"]}], "pins": {"file": false},
			"access": {"jwt": {"issuer": "`+is.URL+`", "audience": "`+resource+`", `+jwtMembers+`}, "resource": "`+resource+`"}}`)
		p = startBridgeAll(t, dir, nil, "-v", "--config", config, "--gateway", gw, "--listen", addr)
		if p.url != resource {
			t.Fatalf("listening on %s, want %s", p.url, resource)
		}
		return p, gatherStderr(p), resource
	}
	token := func(key ed25519.PrivateKey, audience string, extra map[string]any) string {
		tok := is.token(t, key, audience, extra)
		shown = append(shown, tok)
		return tok
	}
	// post sends an initialize with the bearer token tok ("" for none).
	post := func(u, tok string) (status int, challenge string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
	}
	// tools lists the tools the token's view offers.
	tools := func(u, tok string) []string {
		t.Helper()
		conn, err := client.Dial(ctx, client.URL(u), client.WithHeader("Authorization", "Bearer "+tok))
		if err != nil {
			t.Fatalf("a valid token was refused: %v", err)
		}
		defer conn.Close()
		return toolNames(ctx, t, conn)
	}
	webOnly := func(names []string) bool {
		return slices.Contains(names, "web__echo") && !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "st__") })
	}

	// The view by claim, the keys of jwksUrl.
	p, logs, resource := start("claim.json", `"jwksUrl": "`+is.URL+`/keys", "viewClaim": "mcp_view"`)
	status, challenge := post(resource, "")
	m := challengeMetadata.FindStringSubmatch(challenge)
	if status != http.StatusUnauthorized || m == nil {
		t.Fatalf("no token: status %d, WWW-Authenticate %q; want 401 naming resource_metadata", status, challenge)
	}
	mdURL, err := url.Parse(m[1])
	if err != nil || mdURL.Scheme+"://"+mdURL.Host+"/mcp" != resource || mdURL.Path != access.WellKnownPath+"/mcp" {
		t.Errorf("resource_metadata %q: want %s on the gateway's origin (%s)", m[1], access.WellKnownPath+"/mcp", resource)
	}
	resp, err := hc.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || md.Resource != resource || !slices.Equal(md.AuthorizationServers, []string{is.URL}) {
		t.Errorf("GET %s: %d, %+v, %v; want the resource %s and the issuer %s", m[1], resp.StatusCode, md, err, resource, is.URL)
	}

	team := token(is.key, resource, map[string]any{"mcp_view": "team"})
	if names := tools(resource, team); !webOnly(names) {
		t.Errorf("a token for view team lists %v, want web's tools only", names)
	}
	all := token(is.key, resource, map[string]any{"mcp_view": ""})
	if names := tools(resource, all); !slices.Contains(names, "st__echo") || !slices.Contains(names, "web__echo") {
		t.Errorf("a token for the default view lists %v, want both servers' tools", names)
	}
	conn, err := client.Dial(ctx, client.URL(resource), client.WithHeader("Authorization", "Bearer "+team))
	if err != nil {
		t.Fatal(err)
	}
	callEcho(ctx, t, conn, "web__echo")
	if _, err := conn.CallTool(ctx, "st__echo", map[string]any{"text": "x"}); err == nil {
		t.Error("a token for view team called st__echo, which the view excludes")
	}
	_ = conn.Close()

	for _, tc := range []struct {
		what, tok string
		status    int
	}{
		{"another audience", token(is.key, "http://127.0.0.1:1/mcp", map[string]any{"mcp_view": "team"}), http.StatusUnauthorized},
		{"expired", token(is.key, resource, map[string]any{"mcp_view": "team", "iat": time.Now().Add(-2 * time.Hour).Unix(), "exp": time.Now().Add(-time.Hour).Unix()}), http.StatusUnauthorized},
		{"another key", token(otherKey, resource, map[string]any{"mcp_view": "team"}), http.StatusUnauthorized},
		{"no view claim", token(is.key, resource, nil), http.StatusForbidden},
	} {
		status, challenge := post(resource, tc.tok)
		if status != tc.status || !strings.Contains(challenge, `resource_metadata="`+m[1]+`"`) {
			t.Errorf("a token with %s: status %d, WWW-Authenticate %q; want %d naming %s", tc.what, status, challenge, tc.status, m[1])
		}
	}
	if is.fetched("/keys") == 0 || is.fetched("/discovered") != 0 || is.fetched("/.well-known/oauth-authorization-server") != 0 {
		t.Errorf("with jwksUrl, the issuer was asked for %v; want /keys only", is.paths())
	}
	lines := logs.stop(t, p)
	pidFileGone(t, pidFile)

	// The view by scope ("views"), the keys of the issuer's metadata.
	p, logs, resource = start("scopes.json", `"views": {"mcp:team": "team", "mcp:all": ""}`)
	if names := tools(resource, token(is.key, resource, map[string]any{"scope": "mcp:team"})); !webOnly(names) {
		t.Errorf("a token of scope mcp:team lists %v, want web's tools only", names)
	}
	if names := tools(resource, token(is.key, resource, map[string]any{"scope": "mcp:all"})); !slices.Contains(names, "st__echo") {
		t.Errorf("a token of scope mcp:all lists %v, want both servers' tools", names)
	}
	if status, _ := post(resource, token(is.key, resource, map[string]any{"scope": "mcp"})); status != http.StatusForbidden {
		t.Errorf("a token with no view's scope: status %d, want 403", status)
	}
	if is.fetched("/discovered") == 0 {
		t.Errorf("without jwksUrl, the issuer was asked for %v; want its metadata's jwks_uri", is.paths())
	}
	lines = append(lines, logs.stop(t, p)...)
	pidFileGone(t, pidFile)

	for _, tok := range shown {
		sig := tok[strings.LastIndexByte(tok, '.')+1:]
		for _, l := range lines {
			if strings.Contains(l, sig) {
				t.Errorf("stderr shows a token: %q", strings.ReplaceAll(l, sig, "SIGNATURE"))
				break
			}
		}
	}
}
