package auth_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/internal/redirecttest"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// The token goes to the server's origin only: not to another origin
// requested through the same client, nor along a redirect to one.
func TestTokenOnlyToTheServer(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer other.Close()
	var seen string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Get("Authorization")
		mu.Unlock()
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer server.Close()

	store := &auth.MemoryStore{}
	ctx := context.Background()
	store.SaveToken(ctx, auth.Key{Issuer: "https://as.example.com", Resource: server.URL + "/mcp"},
		&auth.Token{AccessToken: "secret-token", Expiry: time.Now().Add(time.Hour), Obtained: time.Now()})
	a, err := auth.New(auth.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := a.Transport(server.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: tr}
	for _, u := range []string{server.URL + "/mcp", other.URL + "/direct"} {
		resp, err := hc.Post(u, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if seen != "Bearer secret-token" {
		t.Fatalf("the server got %q", seen)
	}
	if len(leaked) != 2 || leaked[0] != "" || leaked[1] != "" {
		t.Fatalf("the other origin got Authorization %q", leaked)
	}
}

// The token does not go to a host name that strings.ToLower folds into the
// server's but net/http looks up as another ("İbm.test" for "ibm.test"),
// along a redirect that a plain http.Client follows.
func TestTokenNotToALookalikeHost(t *testing.T) {
	var h *redirecttest.Server
	h = redirecttest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, h.LookalikeURL("/mcp"), http.StatusTemporaryRedirect)
	}))
	server := h.NamedURL("/mcp")
	store := &auth.MemoryStore{}
	store.SaveToken(context.Background(), auth.Key{Issuer: "https://as.example.com", Resource: server},
		&auth.Token{AccessToken: "secret-token", Expiry: time.Now().Add(time.Hour), Obtained: time.Now()})
	a, err := auth.New(auth.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := a.Transport(server, h.LookalikeClient().Transport)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: tr}).Post(server, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reached := h.Reached()
	if len(reached) != 1 {
		t.Fatalf("the lookalike host got %q, want the one redirected request", reached)
	}
	if !strings.Contains(reached[0], `Authorization ""`) {
		t.Errorf("the lookalike host got %s", reached[0])
	}
}

// The host's static headers (client.WithHeader) go to the MCP server, and
// never to metadata locations or the authorization server.
func TestStaticHeadersStayWithTheServer(t *testing.T) {
	var asRec, psRec recorder
	f := setup(t, oauthserver.AuthServerOptions{OnRequest: asRec.note}, oauthserver.ProtectedOptions{OnRequest: psRec.note})
	mustConnect(t, testContext(t), f.ps.URL, f.authorizer(t, auth.Config{}), client.WithHeader("X-Api-Key", "host-secret"))
	for i, h := range asRec.headers() {
		if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" && !strings.HasPrefix(h.Get("Authorization"), "Basic ") {
			t.Fatalf("authorization server request %s carried %v", asRec.requests()[i], h)
		}
	}
	mcp := 0
	for i, r := range psRec.requests() {
		h := psRec.headers()[i]
		switch {
		case strings.Contains(r, "/.well-known/"):
			if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
				t.Fatalf("metadata request %s carried %v", r, h)
			}
		case strings.HasSuffix(r, " /mcp"):
			mcp++
			if h.Get("X-Api-Key") != "host-secret" {
				t.Fatalf("MCP request %s without the host's header", r)
			}
		}
	}
	if mcp == 0 || len(asRec.requests()) == 0 {
		t.Fatal("nothing recorded")
	}
}

// Nothing secret reaches the logs: not the tokens, the code, the verifier,
// the state or the client secret, at debug level, through a registration,
// an authorization and a refresh.
func TestSecretsNeverLogged(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{AuthMethods: []string{"client_secret_basic"}}, oauthserver.ProtectedOptions{})
	var buf logtest.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store := &auth.MemoryStore{}
	a := f.authorizer(t, auth.Config{Store: store, Logger: log})
	ctx := testContext(t)
	mustConnect(t, ctx, f.ps.URL, a, client.WithLogger(log))
	first := f.as.Stats()
	f.as.Revoke()
	mustConnect(t, ctx, f.ps.URL, a, client.WithLogger(log))
	keys, _ := store.Keys(ctx)
	tok, _ := store.Token(ctx, keys[0])
	c, _ := store.Client(ctx, keys[0].Issuer)
	secrets := []string{tok.AccessToken, tok.RefreshToken, c.ClientSecret,
		first.LastToken.Get("code"), first.LastToken.Get("code_verifier"), first.LastAuthorization.Get("state"),
		f.as.Stats().LastToken.Get("refresh_token")}
	logged := buf.String()
	if !strings.Contains(logged, "OAuth token refreshed") {
		t.Fatalf("the flow was not logged:\n%s", logged)
	}
	for _, s := range secrets {
		if s == "" {
			t.Fatal("a secret of the flow is empty: the test proves nothing")
		}
		if strings.Contains(logged, s) {
			t.Fatalf("%q is in the log", s)
		}
	}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%+v", tok), fmt.Sprintf("%#v", tok), c.String()} {
		if strings.Contains(s, tok.AccessToken) || strings.Contains(s, tok.RefreshToken) || strings.Contains(s, c.ClientSecret) {
			t.Fatalf("formatted: %s", s)
		}
	}
}

// HTTP+SSE is authorized too: its GET stream and its POSTs, and a POST
// refused after the token was revoked is refreshed and sent again.
func TestLegacyTransport(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{Scopes: []string{"mcp"}, ScopeInChallenge: true})
	ctx := testContext(t)
	c, err := client.Dial(ctx, client.URL(f.ps.SSEURL), client.WithAuth(f.authorizer(t, auth.Config{})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Info().Transport != client.TransportSSE {
		t.Fatalf("transport %s", c.Info().Transport)
	}
	f.as.Revoke()
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	hits := f.ps.Hits()
	st := f.as.Stats()
	// POST /sse: the stateless probe refused 401, then (authorized) 405;
	// initialize 405; the GET stream; initialize, initialized, tools/call
	// refused (401), tools/call again.
	if hits["POST /sse"] != 3 || hits["GET /sse"] != 1 || hits["POST /message"] != 4 || f.ps.Refusals()[401] != 2 ||
		st.Tokens["refresh_token"] != 1 || st.Authorizations != 1 {
		t.Fatalf("hits %v, auth %+v", hits, st)
	}
	if f.as.Stats().LastToken.Get("resource") != f.ps.SSEURL {
		t.Fatalf("resource %q", f.as.Stats().LastToken.Get("resource"))
	}
}

// A server whose error echoes the Authorization header it got does not put
// the OAuth access token into the error Dial returns.
func TestEchoedTokenHidden(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "rejected, you sent "+r.Header.Get("Authorization"), http.StatusInternalServerError)
	}))
	defer srv.Close()
	const token = "oauth-access-token-XYZ"
	store := &auth.MemoryStore{}
	store.SaveToken(context.Background(), auth.Key{Issuer: "https://as.example.com", Resource: srv.URL + "/mcp"},
		&auth.Token{AccessToken: token, Expiry: time.Now().Add(time.Hour), Obtained: time.Now()})
	a, err := auth.New(auth.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, client.URL(srv.URL+"/mcp"), client.WithAuth(a), client.WithTransportPolicy(negotiate.StreamableOnly))
	if err == nil {
		c.Close()
		t.Fatal("Dial succeeded")
	}
	if !strings.Contains(err.Error(), "rejected, you sent") {
		t.Fatalf("the error does not carry the server's answer: %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("the error shows the token: %v", err)
	}
}
