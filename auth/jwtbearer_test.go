package auth_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// assertionLog keeps what an AuthServer's Assertion was given, and accepts
// the assertions it is told to.
type assertionLog struct {
	mu     sync.Mutex
	seen   []string
	accept func(assertion string) error
}

func (l *assertionLog) check(assertion, clientID, issuer, resource string) error {
	l.mu.Lock()
	l.seen = append(l.seen, assertion)
	l.mu.Unlock()
	return l.accept(assertion)
}

func (l *assertionLog) assertions() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// Workload identity federation: the jwt-bearer grant with the platform's
// token, read from its file at every grant (so a rotated token is used), a
// pre-registered public client, no person, no registration.
func TestJWTBearerWorkloadToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("workload-jwt-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &assertionLog{accept: func(a string) error {
		if !strings.HasPrefix(a, "workload-jwt-") {
			return errors.New("not a workload token")
		}
		return nil
	}}
	f := setup(t, oauthserver.AuthServerOptions{Assertion: log.check, NoRegistration: true, Clients: []oauthserver.RegisteredClient{{ID: "workload"}}},
		oauthserver.ProtectedOptions{Scopes: []string{"tools"}, ScopeInChallenge: true})
	a, err := auth.New(auth.Config{Grant: auth.GrantJWTBearer, ClientID: "workload", Assertion: auth.AssertionFromFile(file)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	mustConnect(t, ctx, f.ps.URL, a)
	st := f.as.Stats()
	if st.Tokens["urn:ietf:params:oauth:grant-type:jwt-bearer"] != 1 || len(st.Tokens) != 1 || st.Authorizations+st.Registrations != 0 {
		t.Fatalf("want one jwt-bearer token request and nothing else: %+v", st)
	}
	if st.LastToken.Get("assertion") != "workload-jwt-1" || st.LastToken.Get("client_id") != "workload" ||
		st.LastToken.Get("resource") != f.ps.URL || st.LastToken.Get("scope") != "tools" || st.LastTokenAuth != "none" {
		t.Fatalf("token request %v, authenticated with %s", st.LastToken, st.LastTokenAuth)
	}

	// The platform rotates the token: the next grant reads the new one.
	if err := os.WriteFile(file, []byte("workload-jwt-2"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := a.Login(ctx, f.ps.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got := log.assertions(); len(got) != 2 || got[1] != "workload-jwt-2" {
		t.Fatalf("assertions presented %q, want the rotated token second", got)
	}
	if tok.Grant != "jwt-bearer" {
		t.Fatalf("token's grant %q", tok.Grant)
	}
}

// A refused assertion is the caller's answer, typed: the grant is neither
// tried again nor swapped for another (no authorization, no registration),
// and what the server quotes of the assertion is not shown.
func TestJWTBearerRefusedOnce(t *testing.T) {
	const assertion = "expired-workload-jwt-0123456789"
	log := &assertionLog{accept: func(a string) error { return fmt.Errorf("assertion %s is expired", a) }}
	f := setup(t, oauthserver.AuthServerOptions{Assertion: log.check, Clients: []oauthserver.RegisteredClient{{ID: "workload"}}}, oauthserver.ProtectedOptions{})
	var logs logtest.Buffer
	a, err := auth.New(auth.Config{
		Grant: auth.GrantJWTBearer, ClientID: "workload", RedirectURL: redirectURL, Authorize: f.as.Approve,
		Assertion: func(context.Context, auth.AssertionRequest) (string, error) { return assertion, nil },
		Logger:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = connect(testContext(t), f.ps.URL, a)
	var ge *auth.GrantError
	if !errors.As(err, &ge) || ge.Step != "jwt-bearer" || ge.Code != "invalid_grant" {
		t.Fatalf("err = %v, want a jwt-bearer *auth.GrantError invalid_grant", err)
	}
	if strings.Contains(err.Error(), assertion) || strings.Contains(logs.String(), assertion) {
		t.Fatalf("the assertion is shown: %v\n%s", err, logs.String())
	}
	if !strings.Contains(err.Error(), "is expired") {
		t.Fatalf("err = %v, want the server's reason", err)
	}
	st := f.as.Stats()
	if len(log.assertions()) != 1 || len(st.Tokens) != 1 || st.Authorizations+st.Registrations != 0 {
		t.Fatalf("want one jwt-bearer request and nothing else: assertions %d, %+v", len(log.assertions()), st)
	}
}

// The assertion function is asked for this authorization server and
// resource, and its failure ends the grant before any token request.
func TestJWTBearerAssertionRequest(t *testing.T) {
	log := &assertionLog{accept: func(string) error { return nil }}
	f := setup(t, oauthserver.AuthServerOptions{Assertion: log.check, Clients: []oauthserver.RegisteredClient{{ID: "workload"}}},
		oauthserver.ProtectedOptions{Scopes: []string{"tools"}, ScopeInChallenge: true})
	var asked auth.AssertionRequest
	failure := errors.New("the platform has no token yet")
	a, err := auth.New(auth.Config{Grant: auth.GrantJWTBearer, ClientID: "workload",
		Assertion: func(_ context.Context, r auth.AssertionRequest) (string, error) { asked = r; return "", failure }})
	if err != nil {
		t.Fatal(err)
	}
	err = connect(testContext(t), f.ps.URL, a)
	var ae *auth.AssertionError
	if !errors.As(err, &ae) || !errors.Is(err, failure) || ae.Issuer != f.as.Issuer {
		t.Fatalf("err = %v, want an *auth.AssertionError wrapping the function's", err)
	}
	if asked.Issuer != f.as.Issuer || asked.Resource != f.ps.URL || strings.Join(asked.Scopes, " ") != "tools" {
		t.Fatalf("asked %+v", asked)
	}
	if st := f.as.Stats(); len(st.Tokens) != 0 {
		t.Fatalf("a token request without an assertion: %+v", st)
	}
}

func TestJWTBearerConfig(t *testing.T) {
	some := func(context.Context, auth.AssertionRequest) (string, error) { return "x", nil }
	for _, cfg := range []auth.Config{
		{Grant: auth.GrantJWTBearer, Assertion: some},
		{Grant: auth.GrantJWTBearer, ClientID: "c"},
	} {
		var ce *auth.ConfigError
		if _, err := auth.New(cfg); !errors.As(err, &ce) {
			t.Errorf("auth.New(%+v) = %v, want an *auth.ConfigError", cfg, err)
		}
	}
}

func TestAssertionFromFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	if got, err := auth.AssertionFromFile(write("ok", "  eyJ.a.b \n"))(ctx, auth.AssertionRequest{}); err != nil || got != "eyJ.a.b" {
		t.Errorf("= %q, %v; want the token without white space", got, err)
	}
	for name, p := range map[string]string{
		"empty":   write("empty", " \n"),
		"large":   write("large", strings.Repeat("a", 64<<10+1)),
		"missing": filepath.Join(dir, "none"),
	} {
		if got, err := auth.AssertionFromFile(p)(ctx, auth.AssertionRequest{}); err == nil {
			t.Errorf("%s: = %q, want an error", name, got)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := auth.AssertionFromFile(write("ok2", "t"))(cancelled, auth.AssertionRequest{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// enterprise is an identity provider, an authorization server that takes
// its ID-JAGs, and a protected MCP server.
type enterprise struct {
	*fixture
	idp *oauthserver.IdP
	// seen are the requests the authorization server and the MCP server
	// got, headers and all.
	seen recorder
}

const (
	idToken   = "the-persons-id-token-4f9c2a"
	appID     = "mcp-app"
	appSecret = "app-s3cret"
)

func startEnterprise(t *testing.T, idpOpts oauthserver.IdPOptions) *enterprise {
	e := &enterprise{}
	idpOpts.ClientID, idpOpts.ClientSecret, idpOpts.GrantClientID = "idp-client", "idp-s3cret", appID
	if idpOpts.IDToken == "" {
		idpOpts.IDToken = idToken
	}
	e.idp = oauthserver.StartIdP(idpOpts)
	t.Cleanup(e.idp.Close)
	e.fixture = setup(t, oauthserver.AuthServerOptions{Assertion: e.idp.Check, NoRegistration: true,
		Clients: []oauthserver.RegisteredClient{{ID: appID, Secret: appSecret}}, OnRequest: e.seen.note},
		oauthserver.ProtectedOptions{OnRequest: e.seen.note})
	return e
}

func (e *enterprise) authorizer(t *testing.T, j *auth.IDJAG) *auth.Authorizer {
	a, err := auth.New(auth.Config{Grant: auth.GrantJWTBearer, Assertion: j.Assertion, ClientID: appID, ClientSecret: appSecret})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (e *enterprise) idjag() *auth.IDJAG {
	return &auth.IDJAG{TokenEndpoint: e.idp.TokenEndpoint(), ClientID: "idp-client", ClientSecret: "idp-s3cret",
		IDToken: func(context.Context) (string, error) { return idToken, nil }}
}

// Enterprise-managed authorization: the ID token is exchanged at the
// identity provider for an ID-JAG naming this authorization server and
// resource, which the jwt-bearer grant presents with the client's
// credentials. The ID token goes to the identity provider alone.
func TestIDJAG(t *testing.T) {
	e := startEnterprise(t, oauthserver.IdPOptions{})
	mustConnect(t, testContext(t), e.ps.URL, e.authorizer(t, e.idjag()))
	ist := e.idp.Stats()
	if ist.Exchanges != 1 {
		t.Fatalf("%d token exchanges, want 1", ist.Exchanges)
	}
	if x := ist.LastExchange; x.Get("audience") != e.as.Issuer || x.Get("resource") != e.ps.URL || x.Get("subject_token") != idToken {
		t.Fatalf("exchange %v: want audience %s, resource %s", x, e.as.Issuer, e.ps.URL)
	}
	st := e.as.Stats()
	if st.Tokens["urn:ietf:params:oauth:grant-type:jwt-bearer"] != 1 || len(st.Tokens) != 1 || st.LastTokenAuth != "basic" || !strings.HasPrefix(st.LastToken.Get("assertion"), "idjag-") {
		t.Fatalf("want one jwt-bearer grant with the ID-JAG, client_secret_basic: %+v", st)
	}
	for _, h := range e.seen.headers() {
		for k, vs := range h {
			if strings.Contains(strings.Join(vs, " "), idToken) {
				t.Fatalf("the ID token was sent to the authorization server or the MCP server, in %s", k)
			}
		}
	}
	for k, vs := range st.LastToken {
		if strings.Contains(strings.Join(vs, " "), idToken) {
			t.Fatalf("the ID token was sent to the authorization server, as %s", k)
		}
	}
}

// The identity provider's refusal and a token that is not an ID-JAG are
// typed errors, and nothing reaches the authorization server's token
// endpoint.
func TestIDJAGRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		idp  oauthserver.IdPOptions
		want string
	}{
		{"wrong ID token", oauthserver.IdPOptions{IDToken: "another-persons-token"}, "invalid_grant"},
		{"not an ID-JAG", oauthserver.IdPOptions{IssuedTokenType: "urn:ietf:params:oauth:token-type:access_token"}, "not an ID-JAG"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := startEnterprise(t, tt.idp)
			err := connect(testContext(t), e.ps.URL, e.authorizer(t, e.idjag()))
			var ae *auth.AssertionError
			var ge *auth.GrantError
			if !errors.As(err, &ae) || !errors.As(err, &ge) || ge.Step != "token exchange" || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want an *auth.AssertionError with the exchange's *auth.GrantError (%s)", err, tt.want)
			}
			if strings.Contains(err.Error(), idToken) {
				t.Fatalf("the ID token is shown: %v", err)
			}
			if st := e.as.Stats(); len(st.Tokens) != 0 {
				t.Fatalf("token requests at the authorization server: %+v", st.Tokens)
			}
		})
	}
}

// The ID token is never sent where the identity provider redirects to on
// another origin, nor to a token endpoint that is not https (or loopback).
func TestIDJAGEndpointGuarded(t *testing.T) {
	var elsewhere recorder
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.note(r) }))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	other.URL = strings.Replace(other.URL, "127.0.0.1", "localhost", 1) // another origin, same machine
	for _, endpoint := range []string{redirecting.URL + "/token", "http://idp.example.com/token"} {
		j := &auth.IDJAG{TokenEndpoint: endpoint, ClientID: "c", IDToken: func(context.Context) (string, error) { return idToken, nil }}
		_, err := j.Assertion(testContext(t), auth.AssertionRequest{Issuer: "https://as.example.com", Resource: "https://mcp.example.com"})
		if err == nil {
			t.Fatalf("%s: no error", endpoint)
		}
	}
	if n := len(elsewhere.requests()); n != 0 {
		t.Fatalf("%d requests followed the redirect to another origin", n)
	}
}

// A server that quotes the ID token in a long error page that is not
// OAuth's: the excerpt shown is cut short, and shows no part of the token.
func TestIDTokenNotShownWhenCut(t *testing.T) {
	long := "eyJhbGciOiJSUzI1NiJ9." + strings.Repeat("eyJzdWIiOiJhbGljZUBleGFtcGxlLmNvbSJ9", 8) + ".c2lnbmF0dXJl"
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "<p>rejected %s</p>", r.PostForm.Get("subject_token"))
	}))
	defer idp.Close()
	j := &auth.IDJAG{TokenEndpoint: idp.URL + "/token", ClientID: "c", ClientSecret: "s",
		IDToken: func(context.Context) (string, error) { return long, nil }}
	_, err := j.Assertion(testContext(t), auth.AssertionRequest{Issuer: "https://as.example.com", Resource: "https://mcp.example.com"})
	var ge *auth.GrantError
	if !errors.As(err, &ge) || !strings.Contains(ge.Description, "rejected") {
		t.Fatalf("err = %v, want the identity provider's page in a *auth.GrantError", err)
	}
	if strings.Contains(err.Error(), long[:24]) {
		t.Fatalf("the error shows the start of the ID token: %v", err)
	}
}
